#!/usr/bin/env node
// Load for wgx serve (or any OpenAI-compatible server): at each width W, W clients stream one
// completion each at once (a prompt of P random token ids, N new tokens with ignore_eos), and
// the aggregate generation rate and the inter-token latencies are printed.
//
//   node tools/serve_load/load.mjs --url http://127.0.0.1:8080 [--parallel 1,4,16,64]
//        [--prompt 128] [--tokens 128] [--rounds 2] [--vocab 2000] [--json]
//
// Per width: "agg tok/s" is all generated tokens over the wall time from the first request to the
// last token (prefill included, as clients see it); "decode tok/s" counts the tokens after each
// request's first over the time from the first request's first token to the last token;
// inter-token latencies come from the arrival times of the stream's chunks (one per token
// where the text of each token is final at once; the chunk count is printed beside the token
// count so that a shortfall shows). Needs Node.js 18+ (fetch), nothing else.

const args = process.argv.slice(2);
const opt = { url: "http://127.0.0.1:8080", parallel: "1,4,16,64", prompt: 128, tokens: 128, rounds: 2, vocab: 2000, json: false };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const take = () => {
    if (i + 1 >= args.length) throw new Error(`${a} needs a value`);
    return args[++i];
  };
  if (a === "--url") opt.url = take();
  else if (a === "--parallel") opt.parallel = take();
  else if (a === "--prompt") opt.prompt = Number(take());
  else if (a === "--tokens") opt.tokens = Number(take());
  else if (a === "--rounds") opt.rounds = Number(take());
  else if (a === "--vocab") opt.vocab = Number(take());
  else if (a === "--json") opt.json = true;
  else if (a === "-h" || a === "--help") {
    console.log("usage: node tools/serve_load/load.mjs --url URL [--parallel 1,4,16,64] [--prompt P] [--tokens N] [--rounds R] [--vocab V] [--json]");
    process.exit(0);
  } else {
    console.error(`load: unknown argument '${a}'`);
    process.exit(2);
  }
}
const widths = opt.parallel.split(",").map(Number);
if (widths.some((w) => !(w >= 1))) throw new Error(`--parallel takes widths >= 1: ${opt.parallel}`);

let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

// One streamed completion; the arrival time of every chunk that carries text.
async function one(start) {
  const prompt = Array.from({ length: opt.prompt }, () => 1 + Math.floor(random() * (opt.vocab - 1)));
  const res = await fetch(`${opt.url}/v1/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt, max_tokens: opt.tokens, temperature: 0, ignore_eos: true, stream: true,
                           stream_options: { include_usage: true } }),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const times = [];
  let usage = null, buffer = "";
  const decoder = new TextDecoder();
  for await (const bytes of res.body) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    let at;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
      const chunk = JSON.parse(event.slice(6));
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices?.[0]?.text) times.push(now - start);
    }
  }
  return { times, tokens: usage ? usage.completion_tokens : times.length };
}

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// The server may still be loading its model: wait for /health (up to 10 minutes).
for (let waited = 0; ; waited++) {
  const ok = await fetch(`${opt.url}/health`).then((r) => r.ok, () => false);
  if (ok) break;
  if (waited >= 1200) throw new Error(`${opt.url}/health did not answer 200 in 10 minutes`);
  await new Promise((r) => setTimeout(r, 500));
}

const rows = [];
for (const w of widths) {
  for (let round = 1; round <= opt.rounds; round++) {
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: w }, () => one(start)));
    const end = Math.max(...results.map((r) => r.times.at(-1) ?? 0));
    const firstToken = Math.min(...results.map((r) => r.times[0] ?? Infinity));
    const tokens = results.reduce((s, r) => s + r.tokens, 0);
    const chunks = results.reduce((s, r) => s + r.times.length, 0);
    const gaps = results.flatMap((r) => r.times.slice(1).map((t, i) => t - r.times[i])).sort((a, b) => a - b);
    const ttft = results.map((r) => r.times[0]).sort((a, b) => a - b);
    rows.push({
      width: w, round, tokens, chunks,
      agg: tokens / (end / 1000),
      decode: (tokens - w) / ((end - firstToken) / 1000),
      itl_p50: percentile(gaps, 50), itl_p99: percentile(gaps, 99),
      ttft_p50: percentile(ttft, 50), ttft_max: ttft.at(-1),
    });
  }
}
if (opt.json) {
  console.log(JSON.stringify(rows));
} else {
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "-");
  console.log("width round tokens chunks  agg tok/s  decode tok/s  itl p50 ms  itl p99 ms  ttft p50 ms  ttft max ms");
  for (const r of rows) {
    console.log(`${String(r.width).padStart(5)} ${String(r.round).padStart(5)} ${String(r.tokens).padStart(6)} ${String(r.chunks).padStart(6)} ` +
                `${f(r.agg).padStart(10)} ${f(r.decode).padStart(13)} ${f(r.itl_p50, 2).padStart(11)} ${f(r.itl_p99, 2).padStart(11)} ` +
                `${f(r.ttft_p50, 1).padStart(12)} ${f(r.ttft_max, 1).padStart(12)}`);
  }
}
