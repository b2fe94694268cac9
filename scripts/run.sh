#!/usr/bin/env bash
# Builds wgx if needed, then runs it. With no arguments, its main job: generate text with the
# embedded demo model (models/demo, a small Llama trained on fortunes) on the GPU, or on the CPU
# through SwiftShader where there is none. `transcribe` alone: speech to text with the demo speech
# model (models/speech) on its sample. Other arguments go to wgx (e.g. `info`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$("$root/scripts/build.sh" release | tail -1)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
(($#)) || set -- run --model "$root/models/demo" -p "The meaning of life is" -n 80
# `run.sh transcribe`: the demo speech model (models/speech) on its sample sentence.
if [[ $# == 1 && $1 == transcribe ]]; then set -- transcribe --model "$root/models/speech" "$root/models/speech/sample.wav"; fi
exec "$build/bin/wgx" "$@"
