#!/usr/bin/env bash
# Builds wgx for the web (scripts/build-web.sh) and runs its tests, all on SwiftShader (the CPU):
#  - the op tests of the q4 products, attention routes and sampling, compiled to WebAssembly, under
#    Node.js on the `webgpu` package's Dawn;
#  - the JavaScript API under Node.js: the demo model streamed from its .wgx must generate what the
#    native `wgx run --temp 0` generates, token for token, and bad input must get clear errors; a
#    model whose embedding (132 MiB) is over a 128 MiB storage binding limit must generate what
#    it generates without the limit;
#  - the demo page in headless Chromium: the same text on the page, and a screenshot kept in
#    build/web/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
native=$("$root/scripts/build.sh" release | tail -1)
dist=$("$root/scripts/build-web.sh" | tail -1)
NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs cmake --build "$root/build/web" --target web_tests >&2
# The test packages (webgpu, playwright-core), exactly as package-lock.json pins them.
if [ ! -d "$root/web/node_modules/webgpu" ] || [ "$root/web/package-lock.json" -nt "$root/web/node_modules/.package-lock.json" ]; then
  (cd "$root/web" && npm ci --no-audit --no-fund >&2)
fi

export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export VK_ICD_FILENAMES=${WGX_SWIFTSHADER_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}
export WGX_DAWN_NODE=$root/web/node_modules/webgpu/dist/linux-x64/dawn.node
# The device settings the native build uses (gpu/context.h), so that both run the same kernels the
# same way; SwiftShader compiles pipelines 20x faster without Vulkan's workgroup zeroing extension.
export WGX_DAWN_FLAGS="enable-dawn-features=disable_robustness,disable_workgroup_init disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension,timestamp_quantization"
work=$root/build/web/test
mkdir -p "$work" "$root/build/web/artifacts"
failed=0

echo "== op tests (WebAssembly, Node.js)"
for t in "$root"/build/web/tests/web_test_ops_*.cjs; do
  echo "-- $(basename "$t" .cjs)"
  node "$t" --gtest_brief=1 || failed=1
done

echo "== the reference: native wgx run --temp 0 on the demo model"
prompt="The meaning of life is"
tokens=40
"$native/bin/wgx" --adapter swiftshader run --model "$dist/demo/demo.wgx" -p "$prompt" -n $tokens --temp 0 \
  >"$work/native.out" 2>"$work/native.err"
"$native/bin/wgx" tokenize --model "$dist/demo/demo.wgx" "$prompt" >"$work/native.ids"
node - "$work" "$prompt" $tokens <<'JS'
const fs = require('fs');
const [work, prompt, maxTokens] = process.argv.slice(2);
let text = fs.readFileSync(`${work}/native.out`, 'utf8');
// wgx run ends its output with a newline where the text has none.
if (text.endsWith('\n') && !text.endsWith('\n\n')) text = text.slice(0, -1);
const tokens = Number(/generated (\d+) tokens/.exec(fs.readFileSync(`${work}/native.err`, 'utf8'))[1]);
const promptIds = JSON.parse(fs.readFileSync(`${work}/native.ids`, 'utf8'));
fs.writeFileSync(`${work}/expected.json`, JSON.stringify({prompt, maxTokens: Number(maxTokens), text, tokens, promptIds}));
fs.writeFileSync(`${work}/expected.txt`, text);
JS

echo "== the JavaScript API (Node.js)"
# The demo model with its vocabulary padded to 135,000 rows: an f32 embedding of 131.8 MiB.
if [ ! -f "$work/big.wgx" ] || [ "$dist/demo/demo.wgx" -nt "$work/big.wgx" ]; then
  node "$root/web/test/make-big-model.mjs" "$root/models/demo" 135000 "$work/big"
  "$native/bin/wgx" convert "$work/big" -o "$work/big.wgx" --weights f32
  rm -rf "$work/big"
fi
(cd "$root/web" && WGX_BIG_MODEL=$work/big.wgx node test/node.test.mjs "$dist" "$dist/demo/demo.wgx" "$work/expected.json") || failed=1

echo "== the demo page (headless Chromium)"
# Chromium's Dawn takes the same SwiftShader setting as above from its command line.
export CHROMIUM_FLAGS="${CHROMIUM_FLAGS:-} --disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension"
(cd "$root/web" && node test/page.test.mjs --dist "$dist" --expected "$work/expected.txt" \
  --artifacts "$root/build/web/artifacts") || failed=1

if ((failed)); then
  echo "test-web: FAILED" >&2
  exit 1
fi
echo "test-web: all passed"
