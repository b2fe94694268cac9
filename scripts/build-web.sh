#!/usr/bin/env bash
# Sets up (scripts/setup-web.sh), configures and builds wgx for the web: build/web/dist/ then holds
# the package (wgx.js, wgx.mjs, wgx.wasm, wgx.d.ts) and the demo page (demo/, with the demo model
# converted to demo.wgx by the native wgx, which it builds too). Quick when nothing changed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$("$root/scripts/setup-web.sh" | tail -1)
build=$root/build/web
# Emscripten's JavaScript tools need Debian's node modules (acorn), which a Node.js from elsewhere does
# not look for.
export NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
if [ ! -f "$build/build.ninja" ] || ! grep -qxF "WGX_WEB_DEPS:PATH=$deps" "$build/CMakeCache.txt" 2>/dev/null; then
  emcmake cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWGX_WEB_DEPS:PATH="$deps" >&2
fi
cmake --build "$build" >&2
demo=$build/dist/demo/demo.wgx
if [ ! -f "$demo" ] || [ -n "$(find "$root/models/demo" -newer "$demo" -print -quit)" ]; then
  native=$("$root/scripts/build.sh" release | tail -1)
  "$native/bin/wgx" convert "$root/models/demo" -o "$demo" >&2
fi
echo "$build/dist"
