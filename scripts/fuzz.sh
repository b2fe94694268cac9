#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets with clang (build/fuzz; fuzz/README.md) and runs each for
# SECONDS, one after another, then prints a table: executions, rate, coverage, corpus, result.
# Exits non-zero when a target crashed (a sanitizer report, a failed check, a leak, a timeout or
# running out of memory); the input that did it is saved under build/fuzz/crashes/<target>/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 seconds; every target)
#
# Each target starts from its committed seeds, fuzz/corpus/<target>/, and from what earlier runs
# found, kept outside git in build/fuzz/corpus/<target>/ (new inputs go there). Installs clang-14
# and libFuzzer (libclang-rt-14-dev) and the parsers' libraries with apt-get where missing.
#   WGX_FUZZ_FLAGS="-jobs=2"   more libFuzzer options for every target
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
all=(wgx safetensors config tokenizer chat openai audio)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (${all[*]})" >&2; exit 2; }
done

say() { echo "fuzz: $*" >&2; }
die() { echo "fuzz: error: $*" >&2; exit 1; }

# ---- Debian packages: clang with libFuzzer, and what the parsers build with ------------------
# llvm-14 for llvm-symbolizer: sanitizer reports then name functions, files and lines.
packages=(clang-14 libclang-rt-14-dev llvm-14 cmake ninja-build pkg-config nlohmann-json3-dev libpcre2-dev libutf8proc-dev
  libsndfile1-dev libsoxr-dev libfftw3-dev)
"$root/scripts/install-packages.sh" fuzz "${packages[@]}"

# ---- Build -----------------------------------------------------------------------------------
build=$root/build/fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DWGX_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$build" --target "${targets[@]/#/fuzz_}" >&2

# ---- Run -------------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
if [ -x "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$symbolizer}
  export UBSAN_SYMBOLIZER_PATH=${UBSAN_SYMBOLIZER_PATH:-$symbolizer}
fi
# An input that takes seconds is a bug (quadratic work in a parser), as is one that needs more
# than 2 GiB.
flags=(-timeout=5 -rss_limit_mb=2048 -print_final_stats=1 -max_total_time="$seconds")
# shellcheck disable=SC2206
flags+=(${WGX_FUZZ_FLAGS:-})

# What suits one target only. The tokenizer's input is a whole tokenizer.json, whose load takes
# time in proportion to its size (120 ms for the demo model's 121 KB under the sanitizers), so
# its inputs are kept to 16 KiB: the tiny seeds and a cut-down demo tokenizer fit.
target_flags() {
  case $1 in
    tokenizer) echo -max_len=16384 ;;
    # libsndfile's MP3 decoder (libmpg123) prints a line to stderr for every malformed frame:
    # hundreds of MB a minute. libFuzzer keeps its own output and the sanitizers' reports on a
    # copy of stderr and discards the rest (a failed check then shows as a deadly signal).
    audio) echo -close_fd_mask=2 ;;
  esac
}

rows=()
failed=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  crashes=$build/crashes/$t
  log=$build/logs/$t.log
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  dict=()
  [ -f "$root/fuzz/dict/$t.dict" ] && dict=(-dict="$root/fuzz/dict/$t.dict")
  say "$t: ${seconds}s (log: $log)"
  rc=0
  # shellcheck disable=SC2046
  nice -n 10 "$build/bin/fuzz_$t" $(target_flags "$t") "${flags[@]}" "${dict[@]}" -artifact_prefix="$crashes/" \
    "$corpus" "$root/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
  result=ok
  if [ "$rc" != 0 ]; then
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    reason=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error|fuzz check failed|deadly signal|timeout|out-of-memory' "$log" || true)
    result="CRASH (exit $rc${reason:+: $reason})"
    say "$t crashed: ${reason:-exit $rc}; input: ${artifact:-none saved}; log: $log"
    [ -n "$artifact" ] && say "  replay it: $build/bin/fuzz_$t $artifact"
  fi
  rows+=("$(printf '%-12s %8s %12s %9s %7s %8s %14s  %s' "$t" "${seconds}s" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result")")
done

echo
printf '%-12s %8s %12s %9s %7s %8s %14s  %s\n' target time execs exec/s cov ft corpus result
for r in "${rows[@]}"; do echo "$r"; done
exit "$failed"
