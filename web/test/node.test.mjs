// wgx.js under Node.js on the `webgpu` package's Dawn: the demo model streamed from its .wgx file
// generates exactly what the native wgx generates, and what a user can get wrong gets a clear
// WgxError. scripts/test-web.sh runs it:
//   node web/test/node.test.mjs DIST DEMO.wgx EXPECTED.json
// EXPECTED.json: {"prompt", "maxTokens", "text", "tokens"} from the native `wgx run --temp 0`.
import {readFile} from 'node:fs/promises';
import {create, globals} from 'webgpu';

const [dist, demoPath, expectedPath] = process.argv.slice(2);
if (!expectedPath) {
  console.error('usage: node node.test.mjs DIST DEMO.wgx EXPECTED.json');
  process.exit(2);
}
Object.assign(globalThis, globals);
const gpu = create((process.env.WGX_DAWN_FLAGS || '').split(' ').filter(Boolean));
const wgx = await import(new URL(`file://${dist}/wgx.js`).href);
const expected = JSON.parse(await readFile(expectedPath, 'utf8'));
const demo = await readFile(demoPath);

let failures = 0;
async function check(name, fn) {
  const started = performance.now();
  try {
    await fn();
    console.log(`ok   ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
function equal(actual, wanted, what) {
  if (JSON.stringify(actual) !== JSON.stringify(wanted)) {
    throw new Error(`${what}:\n  got      ${JSON.stringify(actual)}\n  expected ${JSON.stringify(wanted)}`);
  }
}
async function rejects(promise, kind, pattern) {
  try {
    await promise;
  } catch (e) {
    if (!(e instanceof wgx.WgxError)) throw new Error(`not a WgxError: ${e.stack || e}`);
    if (e.kind !== kind) throw new Error(`kind '${e.kind}', expected '${kind}': ${e.message}`);
    if (pattern && !pattern.test(e.message)) throw new Error(`the message does not match ${pattern}: ${e.message}`);
    return;
  }
  throw new Error(`no error (expected '${kind}')`);
}
async function collect(iterator) {
  let text = '';
  for await (const piece of iterator) text += piece;
  return text;
}

// Streamed in small pieces, so that words of weights straddle them.
function pieces(bytes, size) {
  return new Response(new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.subarray(at, at + size));
      controller.close();
    },
  }));
}

let model;
await check('the demo model loads from a stream of odd-sized pieces, with progress', async () => {
  const stages = [];
  model = await wgx.load(pieces(demo, 4093), {gpu, onProgress: (p) => stages.push(p.stage)});
  for (const stage of ['starting', 'building', 'download', 'ready']) {
    if (!stages.includes(stage)) throw new Error(`no '${stage}' progress (saw ${[...new Set(stages)]})`);
  }
  if (!/Llama, q4 weights/.test(model.description)) throw new Error(`description '${model.description}'`);
  if (!(model.memoryBytes > demo.length)) throw new Error(`memoryBytes ${model.memoryBytes}`);
});

await check('greedy generation equals the native wgx, token for token', async () => {
  const text = await collect(model.generate(expected.prompt, {maxTokens: expected.maxTokens, temperature: 0}));
  equal(text, expected.text, 'text');
  equal(model.last.generatedTokens, expected.tokens, 'generated tokens');
});

await check('the same prompt after reset() gives the same text again', async () => {
  await model.reset();
  const text = await collect(model.generate(expected.prompt, {maxTokens: expected.maxTokens, temperature: 0}));
  equal(text, expected.text, 'text');
});

await check('tokenize gives the ids the native tokenizer gives', async () => {
  equal(await model.tokenize(expected.prompt), expected.promptIds, 'ids');
});

await check('cancel() ends a generation after its next token', async () => {
  await model.reset();
  let pieces = 0;
  for await (const piece of model.generate('Once upon a time', {maxTokens: 50, temperature: 0, ignoreEos: true})) {
    if (piece && ++pieces === 2) model.cancel();
  }
  equal(model.last.stopReason, 'cancelled', 'stop reason');
});

await check('settings out of range are refused, naming the setting', async () => {
  await rejects(collect(model.generate('Hi', {temperature: -1})), 'bad argument', /temperature/);
  await rejects(collect(model.generate('Hi', {topP: 2})), 'bad argument', /top_p/);
  await rejects(collect(model.generate('Hi', {maxTokens: -3})), 'bad argument', /max_tokens/);
});

await check('a prompt longer than the context is refused, and the model still works', async () => {
  await model.reset();
  await rejects(collect(model.generate('word '.repeat(model.context + 10), {maxTokens: 4})), 'context full');
  const text = await collect(model.generate(expected.prompt, {maxTokens: expected.maxTokens, temperature: 0}));
  equal(text, expected.text, 'text after the error');
});

await model.dispose();

await check('a file that is not a .wgx is refused with what is wrong', async () => {
  await rejects(wgx.load(new TextEncoder().encode('<html>404 Not Found</html>'.repeat(10)), {gpu}),
    'invalid model', /magic/);
});

await check('a download cut short is refused', async () => {
  await rejects(wgx.load(demo.subarray(0, demo.length - 1000), {gpu}), 'invalid model', /ended after/);
});

await check('without WebGPU the error says so', async () => {
  await rejects(wgx.load(demo, {}), 'no adapter', /WebGPU/);
});

if (process.env.WGX_BIG_MODEL) {
  // A model whose embedding is over 128 MiB, on a device that binds at most 128 MiB: the same
  // text as on a device that binds it whole.
  const big = await readFile(process.env.WGX_BIG_MODEL);
  const prompt = 'The meaning of life is';
  let whole;
  await check('a model bigger than a binding, on a device with a 128 MiB limit, equals the unlimited one', async () => {
    // The precondition: this Dawn gives a device the lower limit asked for (it does not round it
    // up), so the table cannot be bound whole there.
    const device = await (await gpu.requestAdapter()).requestDevice({requiredLimits: {maxStorageBufferBindingSize: 128 << 20}});
    equal(device.limits.maxStorageBufferBindingSize, 128 << 20, 'the device limit');
    device.destroy();
    const a = await wgx.load(big, {gpu});
    whole = await collect(a.generate(prompt, {maxTokens: 8, temperature: 0, ignoreEos: true}));
    await a.dispose();
    const b = await wgx.load(big, {gpu, maxStorageBufferBindingSize: 128 << 20});
    const capped = await collect(b.generate(prompt, {maxTokens: 8, temperature: 0, ignoreEos: true}));
    await b.dispose();
    equal(capped, whole, 'text with a 128 MiB binding limit');
  });
}

console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
