#!/usr/bin/env bash
# Sets up (scripts/setup.sh), configures and builds wgx. Quick when nothing changed.
#   scripts/build.sh [release|debug|asan]     (default: release; output in build/<type>)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
type=${1:-release}
case "$type" in
  release) args=(-DCMAKE_BUILD_TYPE=Release) ;;
  debug) args=(-DCMAKE_BUILD_TYPE=Debug) ;;
  asan) args=(-DCMAKE_BUILD_TYPE=Debug -DWGX_SANITIZE=ON) ;;
  *) echo "build: unknown build type '$type' (release, debug or asan)" >&2; exit 2 ;;
esac
dawn=$("$root/scripts/setup.sh" | tail -1)
build=$root/build/$type
if [ ! -f "$build/build.ninja" ] || ! grep -qxF "WGX_DAWN_LIBRARY:FILEPATH=$dawn" "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S "$root" -B "$build" -G Ninja "${args[@]}" -DWGX_DAWN_LIBRARY="$dawn" >&2
fi
cmake --build "$build" >&2
echo "$build"
