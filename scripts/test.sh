#!/usr/bin/env bash
# Builds wgx if needed, then runs the whole test suite (GoogleTest under CTest), then the op
# kernels' tests again with robust buffer access, then wgx serve's tests over HTTP
# (scripts/test-server.sh), then the web build's tests (scripts/test-web.sh: WebAssembly under
# Node.js and the demo page in headless Chromium). Tests run on real WebGPU:
# the GPU if there is one, otherwise SwiftShader on the CPU (WGX_ADAPTER overrides). Every part
# runs even when one before it failed; the exit status says whether all passed.
#   scripts/test.sh [release|debug|asan] [extra ctest arguments]
# With extra arguments, only ctest runs (with them).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
type=release
case "${1:-}" in release|debug|asan) type=$1; shift ;; esac
build=$("$root/scripts/build.sh" "$type" | tail -1)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
[ "$type" = asan ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
cd "$build"
failed=()
ctest --output-on-failure -j "$(nproc)" "$@" || failed+=(ctest)
# Kernels must stay in bounds and write workgroup memory before reading it. wgx runs without
# Dawn's robust buffer access and without zero-filled workgroup memory by default (so the suite
# above sees a read before a write as garbage), where an access out of a binding's bounds may
# go unnoticed; so the op tests run once more with robust access (an index clamped into range
# then shows as a wrong result).
if [ $# -eq 0 ]; then
  for t in bin/test_ops_*; do
    echo "$t with robust access:"
    WGX_TOGGLES="${WGX_TOGGLES:+$WGX_TOGGLES,}-disable_robustness,disable_workgroup_init" "$t" --gtest_brief=1 ||
      failed+=("$t with robust access")
  done
  # wgx serve over HTTP, with the official OpenAI client (Node.js).
  WGX_BIN="$build/bin/wgx" "$root/scripts/test-server.sh" || failed+=(test-server)
  # The web build's tests compare with the native release build.
  if [ "$type" = release ]; then
    "$root/scripts/test-web.sh" || failed+=(test-web)
  fi
fi
if ((${#failed[@]})); then
  printf 'test: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test: all passed"
