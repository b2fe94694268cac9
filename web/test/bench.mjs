// Prefill and decode speed of wgx.js under Node.js on the `webgpu` package's Dawn, to set beside
// the native `wgx bench --model FILE -p P -n N` on the same file and GPU:
//   node web/test/bench.mjs DIST MODEL.wgx [-p 128,512] [-n 128] [-r 3]
// Each prompt length P is fed as one prefill of P tokens after a reset, then N tokens are decoded
// greedily (end-of-sequence ignored). Prints a line per run and, last, the medians per P. A
// synthetic model (`wgx convert --synthetic NAME --tokenizer DIR`) has random weights: its text is
// noise, its speed that of the real geometry.
import {readFile} from 'node:fs/promises';
import {create, globals} from 'webgpu';

const args = process.argv.slice(2);
const [dist, file] = args;
if (!file) {
  console.error('usage: node bench.mjs DIST MODEL.wgx [-p 128,512] [-n 128] [-r 3]');
  process.exit(2);
}
const option = (flag, fallback) => {
  const at = args.indexOf(flag);
  return at < 0 ? fallback : args[at + 1];
};
const prompts = option('-p', '128,512').split(',').map(Number);
const newTokens = Number(option('-n', '128'));
const repeats = Number(option('-r', '3'));

Object.assign(globalThis, globals);
const gpu = create((process.env.WGX_DAWN_FLAGS || '').split(' ').filter(Boolean));
const wgx = await import(new URL(`file://${dist}/wgx.js`).href);
const started = performance.now();
const model = await wgx.load(await readFile(file), {gpu, cache: false});
console.log(`${file}: ${model.description} on ${model.adapter}, loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

// A prompt of exactly `count` tokens: words the tokenizer keeps whole, cut to length.
async function promptOf(count) {
  const ids = await model.tokenize('the '.repeat(count + 8), {addSpecial: false});
  if (ids.length < count) throw new Error(`the tokenizer gives ${ids.length} ids for ${count + 8} words`);
  let text = 'the '.repeat(count + 8);
  // Shrink word by word until the count matches (one id per "the " in a byte-level BPE).
  while ((await model.tokenize(text, {addSpecial: true})).length > count) text = text.slice(4);
  return text;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = [];
for (const p of prompts) {
  const prompt = await promptOf(p);
  const prefill = [], decode = [];
  for (let r = 0; r <= repeats; ++r) {  // run 0 warms the pipelines up
    await model.reset();
    const cpu = process.cpuUsage(), wall = performance.now();
    for await (const piece of model.generate(prompt, {maxTokens: newTokens, temperature: 0, ignoreEos: true})) {
      void piece;
    }
    const used = process.cpuUsage(cpu), seconds = (performance.now() - wall) / 1000;
    const last = model.last;
    if (r === 0) continue;
    prefill.push(last.prefillTokensPerSecond);
    decode.push(last.decodeTokensPerSecond);
    // The process's CPU time over the whole call (prefill and decode, all threads) per token.
    const cpuMs = (used.user + used.system) / 1000 / (last.promptTokens + last.generatedTokens);
    console.log(`p ${last.promptTokens} n ${last.generatedTokens}: prefill ${last.prefillTokensPerSecond.toFixed(1)} tok/s, ` +
      `decode ${last.decodeTokensPerSecond.toFixed(1)} tok/s; call ${seconds.toFixed(3)} s, ` +
      `CPU ${((used.user + used.system) / 1e6).toFixed(3)} s (${cpuMs.toFixed(3)} ms a token)`);
  }
  summary.push({p, prefill: median(prefill), decode: median(decode)});
}
await model.dispose();
console.log('\nprompt | prefill tok/s | decode tok/s (median)');
for (const s of summary) console.log(`${s.p} | ${s.prefill.toFixed(1)} | ${s.decode.toFixed(1)}`);
process.exit(0);
