#!/usr/bin/env bash
# One end-to-end case of the wgx command line or of scripts/setup.sh:
#   cli_test.sh CASE WGX ROOT MAKE_SAMPLE_WGX
set -uo pipefail
case_name=$1 wgx=$2 root=$3 make_sample=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }
# run EXPECTED_RC CMD...: runs CMD, keeps its output, checks the exit code.
run() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "exit code $rc, expected $want: $*"
}
expect_out() { grep -q -- "$1" "$tmp/out" || fail "stdout lacks '$1'"; }
expect_err() { grep -q -- "$1" "$tmp/err" || fail "stderr lacks '$1'"; }

case "$case_name" in
  info_selftest)
    run 0 "$wgx" info --elements 65536
    expect_out "every element correct"
    expect_out "bandwidth"
    expect_out "dependent dispatches of 1 workgroup adding"
    expect_out "dependent dispatches of 512 workgroups adding"
    expect_out "handoffs     skipped: a CPU adapter"
    # SwiftShader offers no subgroup matrices; the line says so, with the feature's number.
    expect_out "^subgroup matrices  no (chromium-experimental-subgroup-matrix, 0x50038 in the pinned Dawn"
    expect_out "maxStorageBufferBindingSize" ;;
  unknown_adapter)
    run 2 "$wgx" --adapter null info
    expect_err "choose one of auto, gpu, swiftshader, gles" ;;
  unknown_command)
    run 2 "$wgx" frobnicate
    expect_err "unknown command 'frobnicate'" ;;
  options_table)
    # wgx options prints the runtime options' table (no device needed): every option that
    # docs/options.md describes, with its kind, default, values, whether it changes results and
    # what it is for, and a line of doc.
    WGX_SWIFTSHADER_ICD=/nonexistent.json run 0 "$wgx" --adapter swiftshader options
    expect_out "^quant_gemv_x8  *choice  *auto  *auto | on | off  *change  *setting$"
    expect_out "^sdpa_decode_stop  *choice  *off  *off | prologue | scores | softmax  *change  *diagnostic$"
    expect_out "^quant_mlp_persist_wgs  *count  *auto  *auto | 1 to 65535  *same  *setting$"
    expect_out "^    one-row q4 products (decode) round x to int8"
    names=$(sed -n 's/^## `\([a-z0-9_]*\)`$/\1/p' "$root/docs/options.md")
    [ -n "$names" ] || fail "docs/options.md names no option"
    for name in $names; do grep -q "^$name " "$tmp/out" || fail "wgx options lacks $name"; done
    [ "$(grep -c '  \(setting\|diagnostic\)$' "$tmp/out")" = "$(echo "$names" | wc -l)" ] ||
      fail "the table's rows are not the doc's options"
    run 2 "$wgx" options --json
    expect_err "options: unexpected argument '--json'" ;;
  option_unknown)
    # An unknown runtime option fails before any device is made (the SwiftShader driver is
    # missing here, which a device would fail on with exit code 3), naming the options there are.
    WGX_SWIFTSHADER_ICD=/nonexistent.json run 2 "$wgx" --adapter swiftshader --option no_such_option=1 info
    expect_err "^wgx: unknown runtime option 'no_such_option'; the options are quant_gemm_x8, "
    expect_err "sdpa_decode_warm, sdpa_query_tile$"
    [ ! -s "$tmp/out" ] || fail "info printed something" ;;
  option_bad_value)
    # A value the option does not take fails the same way, naming the values it takes.
    WGX_SWIFTSHADER_ICD=/nonexistent.json run 2 "$wgx" --adapter swiftshader --option quant_gemv_x8=banana info
    expect_err "^wgx: runtime option quant_gemv_x8 is 'banana'; it takes auto | on | off$"
    WGX_SWIFTSHADER_ICD=/nonexistent.json run 2 "$wgx" --adapter swiftshader --option quant_mlp_persist_wgs=0 run \
      --model "$root/models/demo" -p "x" -n 1
    expect_err "it takes auto | 1 to 65535" ;;
  no_vulkan_loader)
    # Hide the loader inside a private mount namespace (needs root and unshare).
    loader=$(ldconfig -p | awk '/libvulkan\.so\.1 /{print $NF; exit}')
    [ -n "$loader" ] || { echo "no Vulkan loader installed to hide"; exit 77; }
    unshare --mount true 2>/dev/null || { echo "unshare not permitted here"; exit 77; }
    run 3 unshare --mount bash -c "mount --bind /dev/null '$loader' && exec '$wgx' info"
    expect_err "the Vulkan loader (libvulkan.so.1) could not be loaded"
    expect_err "apt-get install libvulkan1" ;;
  swiftshader_explicit)
    # --adapter swiftshader, not only auto's fallback, gives SwiftShader where its driver is.
    icd=${WGX_SWIFTSHADER_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}
    [ -f "$icd" ] || { echo "no SwiftShader driver at $icd"; exit 77; }
    run 0 "$wgx" --adapter swiftshader info --elements 4096
    expect_out "^adapter .*SwiftShader"
    expect_out "every element correct" ;;
  swiftshader_missing)
    WGX_SWIFTSHADER_ICD=/nonexistent.json run 3 "$wgx" --adapter swiftshader info
    expect_err "apt-get install --no-install-recommends chromium-common" ;;
  corrupt_cached_dawn)
    source "$root/scripts/dawn.lock"
    good=$(WGX_CACHE_DIR="" "$root/scripts/setup.sh" 2>/dev/null | tail -1)
    dir=$tmp/cache/dawn/$DAWN_PACKAGE-$DAWN_VERSION
    mkdir -p "$dir" && cp "$good" "$dir/$DAWN_FILE"
    printf 'X' | dd of="$dir/$DAWN_FILE" bs=1 seek=4096 conv=notrunc status=none
    WGX_CACHE_DIR=$tmp/cache run 1 "$root/scripts/setup.sh"
    expect_err "is corrupt or was replaced"
    expect_err "rm -rf" ;;
  corrupt_dawn_download)
    # An npm that serves a tarball other than the pinned one.
    mkdir -p "$tmp/bin" "$tmp/pkg/package"
    echo "not dawn" >"$tmp/pkg/package/libwebgpu_wrapper.so"
    tar -czf "$tmp/fake.tgz" -C "$tmp/pkg" package
    printf '#!/bin/sh\ncp "%s" ./bun-webgpu-linux-x64-0.1.7.tgz\n' "$tmp/fake.tgz" >"$tmp/bin/npm"
    chmod +x "$tmp/bin/npm"
    PATH=$tmp/bin:$PATH WGX_CACHE_DIR=$tmp/cache run 1 "$root/scripts/setup.sh"
    expect_err "the download is corrupt or the registry served another file"
    [ ! -e "$tmp/cache/dawn" ] || [ -z "$(ls -A "$tmp/cache/dawn"/* 2>/dev/null)" ] \
      || fail "a rejected download left files in the cache" ;;
  other_dawn_library)
    WGX_DAWN_LIBRARY=$tmp/missing.so run 1 "$root/scripts/setup.sh"
    expect_err "does not exist"
    echo "junk" >"$tmp/junk.so"
    WGX_DAWN_LIBRARY=$tmp/junk.so run 1 "$root/scripts/setup.sh"
    expect_err "does not export the webgpu.h C API" ;;
  inspect_sample)
    run 0 "$make_sample" "$tmp/sample.wgx"
    run 0 "$wgx" inspect "$tmp/sample.wgx" --why
    expect_out "meta         model = sample"
    expect_out "= add(%.*, %.*(bias)) : f32\[seq_len, 8\]  \[binary\]  add_bias"
    expect_out "= reshape(.*) : f32\[seq_len, 2, 4\]  \[view\]  split_heads"
    expect_out "memory: constants" ;;
  inspect_corrupt_file)
    run 0 "$make_sample" "$tmp/sample.wgx"
    head -c 100 "$tmp/sample.wgx" >"$tmp/cut.wgx"
    run 4 "$wgx" inspect "$tmp/cut.wgx"
    expect_err "cut.wgx" ;;
  inspect_missing_file)
    run 4 "$wgx" inspect "$tmp/none.wgx"
    expect_err "none.wgx" ;;
  pipeline_stats_layer)
    # tools/vk_pipeline_stats in the chain between Dawn and the driver: wgx names its pipelines,
    # the layer sees the device created (SwiftShader has no statistics to give, and says so) and
    # passes everything through: the run decodes the same tokens as without it.
    "$root/tools/vk_pipeline_stats/build.sh" "$tmp/layer" 2>/dev/null || fail "the layer did not build"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 8 --temp 0
    cp "$tmp/out" "$tmp/plain"
    run 0 env VK_LAYER_PATH="$tmp/layer" VK_INSTANCE_LAYERS=VK_LAYER_WGX_pipeline_stats WGX_LOG_PIPELINES=1 \
      "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 8 --temp 0
    expect_err "^wgx: pipeline q4_gemv\[q4_gemv\."
    expect_err "^device .*: pipeline statistics \(on\|unavailable\)"
    cmp -s "$tmp/out" "$tmp/plain" || fail "the output changed with the layer in the chain" ;;
  touch_first)
    # A staged q4 gemv whose workgroups take one column tile each is built with TOUCH (its first
    # weights loaded before x is staged), one that takes two with half the lanes to make one. With
    # quant_gemv_stage_wgs = 1 (one workgroup per row walks every tile) the narrow products still
    # halve their lanes to one tile and touch, the wide ones (several tiles) do not. None of it
    # changes a token.
    run 0 env WGX_LOG_PIPELINES=1 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 8 --temp 0
    expect_err "^wgx: pipeline q4_gemv\[q4_gemv.f32.[a-z]*.r1.norm.i8\]{.*TOUCH=1"
    cp "$tmp/out" "$tmp/touched"
    run 0 env WGX_LOG_PIPELINES=1 "$wgx" --option quant_gemv_stage_wgs=1 \
      run --model "$root/models/demo" -p "The meaning of life is" -n 8 --temp 0
    expect_err "^wgx: pipeline q4_gemv\[q4_gemv.f32.[a-z]*.r1.xs.i8\]{.*TOUCH=1"
    grep "r1.norm.i8\]" "$tmp/err" | grep -qv "TOUCH" || fail "every product of several tiles per workgroup touched"
    diff <(grep -v "tok/s" "$tmp/out") <(grep -v "tok/s" "$tmp/touched") >/dev/null ||
      fail "the tokens changed with one workgroup per row" ;;
  merged_projection)
    # Decode steps whose attention runs split (sdpa_decode_single_max = 0) have the output
    # projection merge the chunks (q4_gemv's comb variant); the demo's greedy tokens are the same.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0
    cp "$tmp/out" "$tmp/plain"
    run 0 env WGX_LOG_PIPELINES=1 "$wgx" --option sdpa_decode_single_max=0 run --model "$root/models/demo" \
      -p "The meaning of life is" -n 24 --temp 0
    expect_err "^wgx: pipeline q4_gemv\[q4_gemv.f32.[a-z]*.r1.comb.i8\]"
    diff <(grep -v "tok/s" "$tmp/out") <(grep -v "tok/s" "$tmp/plain") >/dev/null ||
      fail "the tokens changed with the chunks merged in the projection" ;;
  persist_mlp)
    # The MLP in one dispatch (quant_mlp_persist=on; one workgroup on a CPU adapter) gives the
    # demo's greedy tokens; a wait that gave up (quant_mlp_persist_fault=on) stops the run with an
    # error on a line of its own after the first token (the prefill's), naming the route.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 16 --temp 0
    cp "$tmp/out" "$tmp/plain"
    run 0 env WGX_LOG_PIPELINES=1 "$wgx" --option quant_mlp_persist=on run --model "$root/models/demo" \
      -p "The meaning of life is" -n 16 --temp 0
    expect_err "^wgx: pipeline q4_gemv\[q4_gemv.f32.[a-z]*.r1.norm.i8.persist\]"
    diff <(grep -v "tok/s" "$tmp/out") <(grep -v "tok/s" "$tmp/plain") >/dev/null || fail "the tokens changed"
    run 1 "$wgx" --option quant_mlp_persist=on --option quant_mlp_persist_fault=on run --model "$root/models/demo" \
      -p "The meaning of life is" -n 16 --temp 0
    expect_err "^wgx: a dispatch whose workgroups hand work over to each other reported that a wait"
    expect_err "route q4_gemv_persist (--option quant_mlp_persist=off runs the MLP as two dispatches) in layers.0.mlp"
    [ "$(tail -c 1 "$tmp/out" | od -An -c | tr -d ' ')" = '\n' ] || fail "stdout's line was left open" ;;
  pipeline_stats_pairing)
    # pair.py joins each wgx label with the statistics line after it, masks the driver's high
    # bits off the local memory size and works out the workgroups an SM holds.
    printf '%s\n' "wgx: pipeline q4_gemv[q4_gemv.f32.wg.r1]" \
      "pipeline 0x5a: Register Count 64, Binary Size 22400, Stack Size 0, Local Memory Size 68719476864, Shared Memory Size 4096" \
      "pipeline 0x5b: Register Count 80, Binary Size 100, Stack Size 0, Local Memory Size 0, Shared Memory Size 0" \
      "wgx: pipeline q4_gemm[q4_gemm.i8.m64]" \
      "pipeline 0x5c: Register Count 97, Binary Size 83072, Stack Size 0, Local Memory Size 68719476736, Shared Memory Size 13824" \
      >"$tmp/log"
    run 0 python3 "$root/tools/vk_pipeline_stats/pair.py" "$tmp/log"
    expect_out "^  64   4096   128             4      57  q4_gemv\[q4_gemv.f32.wg.r1\]$"
    expect_out "^  80      0     0             3      32  (not wgx's)$"
    expect_out "^  97  13824     0             2      16  q4_gemm\[q4_gemm.i8.m64\]$" ;;
  bench_op_smoke)
    run 0 "$wgx" bench-op --filter "add.f32 qwen3-0.6b residual M=1\$" --iters 1
    expect_out "streaming bandwidth"
    expect_out "time us  stream us"
    expect_out "add.f32 qwen3-0.6b residual M=1 .* binary  *[0-9.]*  *[0-9.]* " ;;
  tokenize_round_trip)
    tokenizers=$("$root/scripts/fetch_tokenizers.sh" 2>/dev/null | tail -1)
    model=$(ls -d "$tokenizers"/*qwen3*/models 2>/dev/null | head -1)
    [ -n "$model" ] || fail "no Qwen3 tokenizer in the cache: run scripts/setup.sh"
    # The ids tests/tokenizer/data/qwen3.reference.json holds for this text (from the reference
    # JavaScript tokenizer).
    run 0 "$wgx" tokenize --model "$model" "Hello, world!"
    expect_out "^\[9707, 11, 1879, 0\]$"
    run 0 "$wgx" tokenize --model "$model" --decode "[9707, 11, 1879, 0]"
    expect_out "^Hello, world!$"
    run 2 "$wgx" tokenize --model "$model" --decode "[9707, banana]"
    expect_err "'banana' is not a token id"
    run 4 "$wgx" tokenize --model "$tmp/nothing" "x"
    expect_err "no such file or folder" ;;
  tokenize_demo)
    # tokenizer(text).input_ids as transformers gives them (tests/tokenizer/data/demo.hf_ids.json):
    # the demo's tokenizer_config.json names <|endoftext|> as bos, but its post-processor
    # (ByteLevel) adds nothing, with or without --no-add-special.
    for add in "" --no-add-special; do
      run 0 "$wgx" tokenize --model "$root/models/demo" $add "Hello, world!"
      expect_out "^\[42, 479, 81, 14, 695, 3\]$"
      run 0 "$wgx" tokenize --model "$root/models/demo" $add ""
      expect_out "^\[\]$"
      # <|endoftext|> (0) where the text has it, and only there.
      run 0 "$wgx" tokenize --model "$root/models/demo" $add "abc<|endoftext|>def<|eot_id|>ghi"
      expect_out "^\[421, 69, 0, 938, 72, 30, 94, 71, 312, 65, 338, 94, 32, 336, 75\]$"
    done
    run 0 "$wgx" tokenize --model "$root/models/demo" --no-special "abc<|endoftext|>def"
    grep -q "^\[421, 69, 0, " "$tmp/out" && fail "--no-special matched <|endoftext|>"
    run 0 "$wgx" tokenize --model "$root/models/demo" --decode "[42, 479, 81, 14, 695, 3]"
    expect_out "^Hello, world!$" ;;
  tokenize_llama_bos)
    # Llama 3.1's post-processor puts <|begin_of_text|> (128000) first; --no-add-special leaves
    # it out (tests/tokenizer/data/llama3_1.hf_ids.json).
    tokenizers=$("$root/scripts/fetch_tokenizers.sh" 2>/dev/null | tail -1)
    model=$(ls -d "$tokenizers"/*llama3_1*/models 2>/dev/null | head -1)
    [ -n "$model" ] || fail "no Llama 3.1 tokenizer in the cache: run scripts/setup.sh"
    run 0 "$wgx" tokenize --model "$model" "Hello, world!"
    expect_out "^\[128000, 9906, 11, 1917, 0\]$"
    run 0 "$wgx" tokenize --model "$model" --no-add-special "Hello, world!"
    expect_out "^\[9906, 11, 1917, 0\]$"
    run 0 "$wgx" tokenize --model "$model" ""
    expect_out "^\[128000\]$"
    # A text that starts with it gets another, as transformers does.
    run 0 "$wgx" tokenize --model "$model" "<|begin_of_text|>Hello"
    expect_out "^\[128000, 128000, 9906\]$" ;;
  tokenize_help)
    for help in --help -h; do
      run 0 "$wgx" tokenize $help
      expect_out "^usage: wgx tokenize --model PATH \[--no-add-special\] \[--no-special\] TEXT"
      expect_out "^  --no-add-special  "
      [ ! -s "$tmp/err" ] || fail "tokenize $help wrote to stderr"
    done
    run 2 "$wgx" tokenize --model "$root/models/demo"
    expect_err "usage: wgx tokenize" ;;
  run_demo_greedy)
    # The embedded demo model, greedy: the same text every time, and the statistics line.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0
    cp "$tmp/out" "$tmp/first"
    expect_err "prompt 6 tokens, .* tok/s | generated [0-9]* tokens, .* tok/s (pipelined)"
    [ -n "$(tr -d '[:space:]' <"$tmp/first")" ] || fail "no text generated"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0
    cmp -s "$tmp/first" "$tmp/out" || fail "greedy generation differs between two runs"
    # One step at a time, the token picked on the host: the same text as the pipelined default.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0 --in-flight 0
    cmp -s "$tmp/first" "$tmp/out" || fail "--in-flight 0 generates other text than the pipelined default"
    grep -q "(pipelined)" "$tmp/err" && fail "--in-flight 0 still pipelined"
    run 2 "$wgx" run --model "$root/models/demo" -p "x" --in-flight 9
    expect_err "--in-flight"
    # Four steps a submit: the same text again.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0 --in-flight 8 --steps-per-submit 4
    cmp -s "$tmp/first" "$tmp/out" || fail "--steps-per-submit 4 generates other text than the default"
    run 2 "$wgx" run --model "$root/models/demo" -p "x" --in-flight 2 --steps-per-submit 3
    expect_err "steps-per-submit 3 is more than the steps in flight"
    # Sampled with a seed: drawn on the device, pipelined, the same text twice; with a repetition
    # penalty too (other text), greedy or drawn; --host-sampling and --top-k 0 sample on the host,
    # one step at a time.
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --seed 5
    expect_err "tok/s (pipelined, drawn on the device) | first token"
    cp "$tmp/out" "$tmp/drawn"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --seed 5
    cmp -s "$tmp/drawn" "$tmp/out" || fail "sampling with one seed generates other text"
    cmp -s "$tmp/drawn" "$tmp/first" && fail "sampling generated the greedy text"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --seed 5 --repeat-penalty 1.5
    expect_err "tok/s (pipelined, drawn on the device) | first token"
    cmp -s "$tmp/drawn" "$tmp/out" && fail "a repetition penalty changed nothing"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --temp 0 --repeat-penalty 1.5
    expect_err "tok/s (pipelined) | first token"
    cmp -s "$tmp/first" "$tmp/out" && fail "a repetition penalty changed nothing in greedy decoding"
    for host in --host-sampling "--top-k 0"; do
      run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 24 --seed 5 $host
      grep -q "(pipelined" "$tmp/err" && fail "$host still pipelined"
    done ;;
  convert_demo_same_text)
    # A converted demo model generates exactly what its folder does, and is loaded from the file
    # alone (the options it fixed are refused when they differ).
    run 0 "$wgx" convert "$root/models/demo" -o "$tmp/demo.wgx"
    expect_err "wrote $tmp/demo.wgx: .* MiB (Llama, q4 weights, f16 KV cache, context 1024) in"
    run 0 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 16 --temp 0
    cp "$tmp/out" "$tmp/folder"
    run 0 "$wgx" run --model "$tmp/demo.wgx" -p "The meaning of life is" -n 16 --temp 0
    expect_err "demo.wgx (Llama, q4 weights, f16 KV cache, context 1024, .*) ready in .* (model read in .* s, program built in .* s)"
    cmp -s "$tmp/folder" "$tmp/out" || fail "the .wgx generated other text than the folder: $(cat "$tmp/folder")"
    run 2 "$wgx" run --model "$tmp/demo.wgx" -p "x" --weights f32
    expect_err "fixed when it was converted: the weights asked for cannot change them" ;;
  run_context_overflow)
    run 2 "$wgx" run --model "$root/models/demo" -p "The meaning of life is" -n 5000 --temp 0
    expect_err "the context holds 1024 tokens" ;;
  bench_synthetic)
    # Random weights at a tiny geometry: no model folder, no tokenizer.
    run 0 "$wgx" bench --synthetic demo-tiny -p 8 -n 4
    expect_out "^model        synthetic demo-tiny (Llama, q4 weights, f16 KV cache, context 4096"
    expect_out "), ready in [0-9.]* s (the program built in [0-9.]* s, [1-9][0-9]* kernels compiled)$"
    expect_out "^prefill      8 tokens at positions 0..7 in .* tok/s"
    expect_out "^first token  "
    expect_out "^warm-up      [1-9][0-9]* untimed runs\? of the same shape first (--warmup 1000 ms)"
    expect_out "^decode       4 tokens at positions 8..11 in .* tok/s (pipelined, up to 6 steps in flight, 3 a submit)"
    expect_out "^per token    [0-9]* dispatches, 1/3 submit "
    expect_out "^host time    per decode token: wall .* ms, CPU .* ms (process), .* ms (this thread)"
    expect_out "^             of which executing: resize .* ms, params .*, recording .*, copies and readback .*, submitting "
    expect_out "^memory       .*: constants .*, state .*, intermediates "
    expect_out "^kv cache     1.0 MiB as f16 at context 4096 (f16 1.0 MiB, f32 2.0 MiB"
    run 0 "$wgx" bench --synthetic demo-tiny -p 8 -n 4 --sync --warmup 0
    expect_out "^warm-up      0 untimed runs of the same shape first (--warmup 0 ms)"
    expect_out "^decode       4 tokens at positions 8..11 in .* tok/s (synchronous)"
    expect_out "^per token    [0-9]* dispatches, 1 submit (the step's command buffer, with the logits' copy"
    # Pipelined and synchronous decoding pick the same tokens.
    run 0 "$wgx" bench --synthetic demo-tiny --seed 3 -p 5 -n 12 --in-flight 4 --steps-per-submit 1 --json
    cp "$tmp/out" "$tmp/pipelined.json"
    expect_out '"decode_mode": "pipelined"'
    expect_out '"submits_per_decode_token": 1'
    # The program's build is a part of the load, and it compiled kernels.
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (0 < j["build_s"] <= j["load_s"] and j["kernels_compiled"] > 0))' \
      "$tmp/out" || fail "the build time is not a part of the load time, or no kernels were compiled"
    # execute()'s phases are part of the thread's CPU time (the same clock, inside it).
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); p = j["host_execute_ms_per_decode_token"]; s = sum(p[k] for k in ("resize", "params", "record", "copies", "submit")); sys.exit(not (all(v >= 0 for v in p.values()) and 0 < s <= j["host_thread_cpu_ms_per_decode_token"]))' \
      "$tmp/out" || fail "execute's phases are not a part of the thread's CPU time"
    run 0 "$wgx" bench --synthetic demo-tiny --seed 3 -p 5 -n 12 --sync --json
    expect_out '"decode_mode": "sync"'
    python3 -c 'import json, sys; a, b = (json.load(open(f))["token_ids"] for f in sys.argv[1:]); sys.exit(a != b or len(a) != 13)' \
      "$tmp/pipelined.json" "$tmp/out" || fail "pipelined and synchronous decoding picked other tokens"
    # Several steps a submit pick the same tokens too (11 steps: two groups of 4 and one of 3).
    cp "$tmp/out" "$tmp/sync.json"
    run 0 "$wgx" bench --synthetic demo-tiny --seed 3 -p 5 -n 12 --in-flight 8 --steps-per-submit 4 --json
    expect_out '"decode_steps_per_submit": 4'
    expect_out '"submits_per_decode_token": 0.25'
    python3 -c 'import json, sys; a, b = (json.load(open(f))["token_ids"] for f in sys.argv[1:]); sys.exit(a != b)' \
      "$tmp/sync.json" "$tmp/out" || fail "decoding 4 steps a submit picked other tokens"
    # Sampled (run's defaults, seed 1), drawn on the device and on the host: the same tokens
    # every run (this random model's tokens are its greedy ones: run_demo_greedy checks that
    # sampling draws others).
    for where in device host; do
      sync=; mode=pipelined_sampled
      [ $where = host ] && sync=--sync mode=sampled
      run 0 "$wgx" bench --synthetic demo-tiny --seed 3 -p 5 -n 12 --sample $sync --json
      expect_out "\"decode_mode\": \"$mode\""
      cp "$tmp/out" "$tmp/sampled.json"
      run 0 "$wgx" bench --synthetic demo-tiny --seed 3 -p 5 -n 12 --sample $sync --warmup 0 --json
      python3 -c 'import json, sys; a, b = (json.load(open(f))["token_ids"] for f in sys.argv[1:]); sys.exit(a != b or len(a) != 13)' \
        "$tmp/sampled.json" "$tmp/out" || fail "sampled decoding ($where) with one seed picked other tokens"
    done
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --sample --warmup 0
    expect_out "(pipelined, up to 6 steps in flight, 3 a submit, drawn on the device: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed 1)"
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --sample --sync --warmup 0
    expect_out "(synchronous, sampled on the host: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed 1)"
    # Settings of its own (implying --sample): drawn on the device where they allow it.
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --warmup 0 --top-k 7 --temp 1.5
    expect_out "drawn on the device: temperature 1.5, top-k 7, top-p 0.95, min-p 0.05, seed 1)"
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --warmup 0 --top-k 0
    expect_out "(synchronous, sampled on the host: temperature 0.8, top-k 0, top-p 0.95, min-p 0.05, seed 1)"
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --warmup 0 --repeat-penalty 1.1
    expect_out "drawn on the device: .*, a repetition penalty, seed 1)"
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --warmup 0 --repeat-penalty 1.1 --sync
    expect_out "(synchronous, sampled on the host: .*, a repetition penalty, seed 1)"
    run 0 "$wgx" bench --synthetic demo-tiny -p 5 -n 3 --warmup 0 --repeat-penalty 1.1 --temp 0
    expect_out "picked on the device: temperature 0, .*, a repetition penalty, seed 1)"
    run 2 "$wgx" bench --synthetic demo-tiny --top-p 0
    expect_err "--top-p"
    run 0 "$wgx" bench --synthetic demo-tiny -p 8 -n 4 --kv f32 --ctx 128 --pos 100 --profile --json --in-flight 2
    expect_out '"decode_pos": 100'
    expect_out '"dtype": "f32"'
    expect_out '"decode_steps_per_submit": 2'
    expect_out '"submits_per_decode_token": 0.5'
    expect_out '"profile": '
    # Rows per kind of node and kernel: the layer index starred, one row for the same node of every
    # layer; the attention's two kernels at 101 rows (flash decoding's split pass, the merging
    # projection) each a row of their own.
    python3 -c 'import json, sys; rows = json.load(open(sys.argv[1]))["profile"]["decode"]["rows"]; n = [r["nodes"] for r in rows]; sys.exit("layers.*.attn.sdpa_o_proj" not in n or len(n) != len(set((r["op"], r["route"], r["kernel"], r["nodes"]) for r in rows)) or any("layers.0." in x for x in n) or any(not r["kernel"] for r in rows))' \
      "$tmp/out" || fail "profile rows are not one per kind of node and kernel"
    python3 -c 'import json, sys; rows = json.load(open(sys.argv[1]))["profile"]["decode"]["rows"]; k = sorted(r["kernel"].split("[")[0] for r in rows if r["nodes"] == "layers.*.attn.sdpa_o_proj"); sys.exit(k != ["q4_gemv", "sdpa_flash"])' \
      "$tmp/out" || fail "the attention's kernels do not have a row each"
    # The steps timed whole as well (one timestamp pair per pass, not per dispatch).
    python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["profile"]; sys.exit(p is not None and not (p["decode"]["step_us"] > 0 and p["decode"]["queued_us"] > 0 and p["decode"]["step_runs"] == 24 and p["prefill"]["step_us"] > 0))' \
      "$tmp/out" || fail "the profile lacks the steps timed whole"
    run 2 "$wgx" bench --synthetic demo-tiny --in-flight 9
    expect_err "in-flight" 
    run 2 "$wgx" bench --synthetic demo-tiny --in-flight 2 --steps-per-submit 3
    expect_err "steps-per-submit 3 is more than the steps in flight" 
    run 2 "$wgx" bench --synthetic demo-tiny --warmup -5
    expect_err "warmup"
    run 2 "$wgx" bench --synthetic demo-tiny -p 8 --pos 4
    expect_err "it must be at least -p"
    run 2 "$wgx" bench --synthetic llama-9000
    expect_err "choose one of llama-3.2-1b, qwen3-0.6b, llama-3.1-8b, qwen3-8b, demo-tiny" ;;
  perplexity_demo)
    # The demo model on a few fortunes of its own kind: windows scored, the perplexity last.
    printf 'A friend in need is a friend indeed.\n\nThe meaning of life is not to be found in books.\n\nYou will meet a tall dark stranger.\n' >"$tmp/text.txt"
    run 0 "$wgx" perplexity --model "$root/models/demo" "$tmp/text.txt" --ctx 16 --stride 8
    expect_err "^wgx: window 1/[0-9]*: 15 tokens scored, perplexity so far [0-9.]*$"
    expect_out "^text         $tmp/text.txt: [0-9]* tokens, [0-9]* scored in [0-9]* windows of 16 tokens, stride 8$"
    expect_out "^mean NLL     [0-9.]* nats per token$"
    tail -n 1 "$tmp/out" | grep -q "^perplexity [0-9][0-9.]*$" || fail "the last line is not 'perplexity N'"
    # Every token but the first is scored once (stride < ctx); with stride = ctx a window's first
    # token has nothing before it in the window and is not scored.
    run 0 "$wgx" perplexity --model "$root/models/demo" "$tmp/text.txt" --ctx 16 --stride 8 --json
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (j["scored"] == j["tokens"] - 1 and j["perplexity"] > 1))' \
      "$tmp/out" || fail "not every token but the first was scored once"
    run 0 "$wgx" perplexity --model "$root/models/demo" "$tmp/text.txt" --ctx 16 --stride 16 --json
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (j["scored"] == j["tokens"] - j["windows"]))' \
      "$tmp/out" || fail "windows side by side did not score all but their first tokens"
    run 2 "$wgx" perplexity --model "$root/models/demo" "$tmp/text.txt" --ctx 16 --stride 17
    expect_err "stride 17 is more than a window (16 tokens)"
    printf 'A' >"$tmp/one.txt"
    run 2 "$wgx" perplexity --model "$root/models/demo" "$tmp/one.txt"
    expect_err "holds 1 token(s); it takes 2 or more"
    run 2 "$wgx" perplexity --model "$root/models/demo" "$tmp/none.txt"
    expect_err "cannot read $tmp/none.txt" ;;
  bench_parallel)
    # Continuous batching's bench: every prompt fed first (3 x 2 rows: one step), then the
    # sequences decode together, a token each per step.
    run 0 "$wgx" bench --synthetic demo-tiny --parallel 1,3 -p 6 -n 4 --warmup 0
    expect_out "^ streams  prefill tok/s   decode tok/s   per stream   ITL p50 ms   ITL p99 ms  GPU/step ms$"
    expect_out "^       3 "
    run 0 "$wgx" bench --synthetic demo-tiny --parallel 1,3 -p 2 -n 4 --warmup 0 --json
    python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["widths"]; sys.exit(not (w[1]["width"] == 3 and w[1]["prefill_steps"] == 1 and w[1]["decode_steps"] == 3 and w[1]["decode_tokens"] == 9))' \
      "$tmp/out" || fail "three sequences did not decode 3 tokens each in 3 steps after one prefill step"
    run 0 "$wgx" bench --synthetic demo-tiny --parallel 2 -p 2 -n 4 --warmup 0 --sample
    expect_out "decoded (sampled: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed 1, eos ignored)"
    run 2 "$wgx" bench --synthetic demo-tiny --parallel 2 --sync
    expect_err "do not apply" ;;
  transcribe_tiny)
    # The tiny random Whisper checkpoint on its sample WAV: the text is transformers' greedy text
    # (reference.json), the JSON has the segments, and bad input says why.
    dir="$root/tests/models/data/hf/tiny_whisper"
    run 0 "$wgx" transcribe --model "$dir" "$dir/sample.wav" --language en --max-new-tokens 24 --json
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); sys.exit(not (j["text"] == r["forward_greedy_text"]["plain"] and j["language"] == "en" and j["windows"] == 1 and abs(j["audio_seconds"] - 4.5) < 1e-9 and len(j["segments"]) == 1))' \
      "$tmp/out" "$dir/reference.json" || fail "the transcript is not transformers' greedy text"
    expect_err "^wgx: 4.5 s of audio in [0-9.]* s (real-time factor [0-9.]*), 1 window, 24 tokens, language en$"
    run 0 "$wgx" transcribe --model "$dir" "$dir/sample.wav" --timestamps --max-new-tokens 8
    expect_err "language ja$"  # detected, as transformers detects it (reference.json)
    grep -q "^\[00:0[0-9].[0-9]* --> 00:0[0-9].[0-9]*\]" "$tmp/out" || fail "no timestamped segment"
    run 2 "$wgx" transcribe --model "$dir" "$root/README.md"
    expect_err "not an audio file"
    # The same WAV from stdin, and as raw PCM (its 44-byte header cut off): the same text.
    run 0 "$wgx" transcribe --model "$dir" - --language en --max-new-tokens 24 --json <"$dir/sample.wav"
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); sys.exit(j["text"] != r["forward_greedy_text"]["plain"])' \
      "$tmp/out" "$dir/reference.json" || fail "stdin's transcript differs"
    tail -c +45 "$dir/sample.wav" >"$tmp/sample.raw"
    run 0 "$wgx" transcribe --model "$dir" --raw "$tmp/sample.raw" --language en --max-new-tokens 24 --json
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2])); sys.exit(j["text"] != r["forward_greedy_text"]["plain"])' \
      "$tmp/out" "$dir/reference.json" || fail "the raw PCM transcript differs"
    head -c 11 "$dir/sample.wav" | tail -c 1 >"$tmp/odd.raw"
    run 2 "$wgx" transcribe --model "$dir" --raw "$tmp/odd.raw"
    expect_err "odd number of bytes"
    run 2 "$wgx" transcribe --model "$dir" "$dir/sample.wav" --language xx
    expect_err 'language "xx" is not one of the model'"'"'s: de, en, es, fr, ja'
    run 2 "$wgx" transcribe --model "$dir" "$dir/sample.wav" --task summarize
    expect_err "it takes transcribe or translate"
    run 2 "$wgx" transcribe --model "$dir" "$dir/sample.wav" --beams 17
    expect_err "beams 17 is out of range \[1, 16\]"
    run 4 "$wgx" transcribe --model "$tmp/none" "$dir/sample.wav"
    expect_err "$tmp/none: not a folder" ;;
  transcribe_demo)
    # The demo speech model (models/speech) on two held-out espeak-ng sentences and a file that is
    # not audio, in one run: each text is transformers' greedy text for that file
    # (reference.json), and the bad file costs only its own text (an error object; exit 2).
    data="$root/tests/models/data/speech_demo"
    run 2 "$wgx" transcribe --model "$root/models/speech" "$data/0_000.wav" "$root/README.md" \
      "$root/models/speech/sample.wav" --json
    expect_err "README.md': not an audio file"
    python3 - "$tmp/out" "$data/reference.json" <<'PY' || fail "the transcripts are not transformers' (reference.json)"
import json, sys
got = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ref = json.load(open(sys.argv[2]))
assert len(got) == 3, got
assert got[1]["file"].endswith("README.md") and "not an audio file" in got[1]["error"], got[1]
for g, path, text in zip([got[0], got[2]], ref["files"], ref["transformers"]):
    assert g["file"].endswith(path) and g["text"] == text, (g["text"], text)
PY
    # --stream: a step longer than the sample makes one hypothesis of the whole audio, from the
    # file and from raw PCM on stdin (the WAV's 44-byte header cut off): transformers' text.
    text=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["transformers"][1].strip())' "$data/reference.json")
    run 0 "$wgx" transcribe --model "$root/models/speech" "$root/models/speech/sample.wav" --stream --step 5
    [ "$(cat "$tmp/out")" = "$text" ] || fail "the streamed text is not transformers'"
    expect_err "^wgx: streamed 4.2 s of audio in [0-9.]* s, 1 hypotheses (a step of 5.00 s)$"
    tail -c +45 "$root/models/speech/sample.wav" >"$tmp/sample.raw"
    run 0 "$wgx" transcribe --model "$root/models/speech" --stream --step 5 --raw - <"$tmp/sample.raw"
    [ "$(cat "$tmp/out")" = "$text" ] || fail "the text streamed from stdin is not transformers'"
    # A raw file that grows while it is streamed: its first 40,000 bytes are there at the start;
    # the rest is appended once wgx's read position (/proc/PID/fdinfo) has reached their end, so
    # that wgx has met the file's end and must wait for more. The whole text, and the note that
    # the file grew.
    head -c 40000 "$tmp/sample.raw" >"$tmp/growing.raw"
    "$wgx" transcribe --model "$root/models/speech" --stream --step 5 --raw "$tmp/growing.raw" --idle 5 \
      >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    at_end=
    for _ in $(seq 1 1200); do
      for fd in /proc/$pid/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "$tmp/growing.raw" ] || continue
        pos=$(awk '/^pos:/ {print $2}' "/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null)
        [ "$pos" = 40000 ] && at_end=1
      done
      [ -n "$at_end" ] && break
      sleep 0.1
    done
    [ -n "$at_end" ] || fail "wgx never read to the end of the first part"
    sleep 0.3
    tail -c +40001 "$tmp/sample.raw" >>"$tmp/growing.raw"
    wait $pid || fail "the stream of a growing file failed: $(cat "$tmp/err")"
    [ "$(cat "$tmp/out")" = "$text" ] || fail "the text of the growing file is not transformers'"
    expect_err "growing.raw grew; reading on"
    run 2 "$wgx" transcribe --model "$root/models/speech" "$data/0_000.wav" --stream --idle 1
    expect_err "idle is for a raw PCM file that grows"
    run 2 "$wgx" transcribe --model "$root/models/speech" --stream --step 5 --raw - --idle 1 <"$tmp/sample.raw"
    expect_err "idle is for a raw PCM file that grows"
    run 2 "$wgx" transcribe --model "$root/models/speech" - --stream <"$root/models/speech/sample.wav"
    expect_err "stream from stdin takes raw PCM"
    run 2 "$wgx" transcribe --model "$root/models/speech" "$data/0_000.wav" "$data/0_000.wav" --stream
    expect_err "stream takes one input"
    run 2 "$wgx" transcribe --model "$root/models/speech" "$data/0_000.wav" --stream --timestamps
    expect_err "stream prints plain text"
    ;;
  run_missing_model)
    # A model that is not there is a model that cannot be used (exit 4), said plainly.
    run 4 "$wgx" run --model "$tmp/none" -p "x"
    expect_err "$tmp/none: no such file or folder" ;;
  *) echo "unknown case $case_name"; exit 2 ;;
esac
echo "ok: $case_name"
