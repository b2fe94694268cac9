#!/usr/bin/env bash
# What an application developer does with wgx, checked end to end:
#   package       cmake --install into a fresh prefix, then the examples built against the
#                 installed tree (find_package(wgx CONFIG), and the C one through pkg-config),
#                 run on the demo model
#   subdirectory  a parent project that add_subdirectory()s wgx configures (without looking for
#                 Python), every include folder it compiles with exists, and a library of it builds
# usage: install_test.sh CASE BUILD_DIR SOURCE_DIR
set -euo pipefail
case_name=$1 build=$2 root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}

case $case_name in
  package)
    prefix=$work/prefix
    cmake --install "$build" --prefix "$prefix" >"$work/install.log" || fail "cmake --install: $(tail -3 "$work/install.log")"
    for f in include/wgx/wgx.hpp include/wgx/wgx.h lib/libwgx.so lib/cmake/wgx/wgxConfig.cmake \
             lib/cmake/wgx/wgxConfigVersion.cmake lib/pkgconfig/wgx.pc bin/wgx; do
      [ -e "$prefix/$f" ] || fail "the install has no $f"
    done
    soname=$(readelf -d "$prefix/lib/libwgx.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [[ $soname =~ ^libwgx\.so\.[0-9]+\.[0-9]+$ ]] || fail "libwgx's SONAME is '$soname'"
    [ -e "$prefix/lib/$soname" ] || fail "no $soname in the install"
    # Only the API leaves the library.
    if nm -D --defined-only "$prefix/lib/libwgx.so" | c++filt | grep -E ' T ' | grep -vE ' (wgx::|wgx_)' | grep -q .; then
      fail "libwgx exports more than the API: $(nm -D --defined-only "$prefix/lib/libwgx.so" | c++filt | grep ' T ' | grep -vE ' (wgx::|wgx_)' | head -3)"
    fi
    # The headers compile on their own, C++20 and C11, with nothing but the install's include folder.
    echo '#include <wgx/wgx.hpp>' | c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" -x c++ - \
      || fail "wgx.hpp does not compile on its own"
    echo '#include <wgx/wgx.h>' | cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" -x c - \
      || fail "wgx.h does not compile as C11"
    # The examples against the installed package; the install is moved first (it is relocatable).
    mv "$prefix" "$work/moved"
    prefix=$work/moved
    cmake -S "$root/examples" -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      >"$work/configure.log" 2>&1 || fail "configuring the examples: $(tail -5 "$work/configure.log")"
    cmake --build "$work/examples" >"$work/build.log" 2>&1 || fail "building the examples: $(tail -20 "$work/build.log")"
    "$work/examples/stream" "$root/models/demo" "The meaning of life is" 40 >"$work/stream.out" 2>"$work/stream.err" \
      || fail "stream: $(cat "$work/stream.err")"
    # The same greedy text as the installed wgx prints with the same defaults (q4 weights, f16
    # cache); the f32 continuations are checked against transformers' in tests/api and tests/cli.
    "$prefix/bin/wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 40 --temp 0 >"$work/run.out" 2>"$work/run.err" \
      || fail "wgx run: $(cat "$work/run.err")"
    [ -n "$(cat "$work/run.out")" ] || fail "wgx run printed nothing"
    [ "$(tail -n +2 "$work/stream.out")" = "The meaning of life is$(cat "$work/run.out")" ] \
      || fail "stream printed: $(cat "$work/stream.out"); wgx run: $(cat "$work/run.out")"
    printf 'The meaning of life is\n\n' | "$work/examples/chat" "$root/models/demo" --greedy -n 40 >"$work/chat.out" 2>"$work/chat.err" \
      || fail "chat: $(cat "$work/chat.err")"
    "$prefix/bin/wgx" run --model "$root/models/demo" --chat -p "The meaning of life is" -n 40 --temp 0 >"$work/run_chat.out" \
      2>"$work/run.err" || fail "wgx run --chat: $(cat "$work/run.err")"
    grep -qF "$(head -1 "$work/run_chat.out")" "$work/chat.out" \
      || fail "chat printed: $(cat "$work/chat.out"); wgx run --chat: $(cat "$work/run_chat.out")"
    # The C example through pkg-config.
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    [ "$(pkg-config --modversion wgx)" = "$("$prefix/bin/wgx" --version | cut -d' ' -f2)" ] || fail "wgx.pc's version differs from the library's"
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Werror $(pkg-config --cflags wgx) "$root/examples/stream.c" -o "$work/stream_pc" \
      $(pkg-config --libs wgx) -Wl,-rpath,"$(pkg-config --variable=libdir wgx)" || fail "building stream.c with pkg-config"
    "$work/stream_pc" "$root/models/demo" "The meaning of life is" 40 >"$work/pc.out" 2>/dev/null || fail "stream (pkg-config) failed"
    cmp -s "$work/pc.out" "$work/stream.out" || fail "the pkg-config build printed other text"
    # The command line installed beside the library runs.
    "$prefix/bin/wgx" tokenize --model "$root/models/demo" "Hello" >/dev/null || fail "the installed wgx does not run"
    ;;
  subdirectory)
    mkdir -p "$work/parent"
    cat >"$work/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(parent CXX)
add_subdirectory("$root" wgx)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE wgx::wgx)
CMAKE
    printf '#include <wgx/wgx.hpp>\nint main() { return wgx::version()[0] == 0; }\n' >"$work/parent/app.cpp"
    dawn=$(sed -n 's/^WGX_DAWN_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")
    cmake -S "$work/parent" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWGX_DAWN_LIBRARY="$dawn" \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" 2>&1 || fail "configuring the parent: $(tail -5 "$work/configure.log")"
    grep -q "add_test\|gtest" "$work/build/wgx/CTestTestfile.cmake" 2>/dev/null && fail "wgx's tests are built in a parent project"
    grep -q "^pybind11_DIR\|^Python_EXECUTABLE" "$work/build/CMakeCache.txt" && fail "a parent project looked for Python or pybind11"
    # Every include folder of every compile exists (a path built from CMAKE_SOURCE_DIR would not).
    python3 - "$work/build/compile_commands.json" <<'PY' || fail "a compile uses an include folder that does not exist"
import json, os, shlex, sys
bad = set()
for c in json.load(open(sys.argv[1])):
    args = shlex.split(c["command"])
    for i, a in enumerate(args):
        path = a[2:] if a.startswith("-I") and len(a) > 2 else args[i + 1] if a in ("-I", "-isystem") else None
        if path and not os.path.isdir(path):
            bad.add(path)
for p in sorted(bad):
    print("missing include folder:", p, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    cmake --build "$work/build" --target wgx_format wgx_tokenizer >"$work/build.log" 2>&1 \
      || fail "building wgx's libraries in the parent: $(tail -20 "$work/build.log")"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
