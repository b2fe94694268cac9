#!/usr/bin/env bash
# Builds wgx if needed, then runs it: with no arguments, its main job (`wgx info`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$("$root/scripts/build.sh" release | tail -1)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
(($#)) || set -- info
exec "$build/bin/wgx" "$@"
