// Tests of wgx serve's HTTP API (/v1/completions, /v1/chat/completions, /v1/models, /health,
// /live, /metrics) against its specified behaviour: the official OpenAI client, greedy text equal
// to `wgx run --temp 0`, streaming, concurrency and load, cancellation, errors, API keys, CORS,
// the queue limit and draining on SIGTERM. Each suite starts its own `wgx serve --port 0` on the
// demo model and stops it at the end.
//
//   WGX_BIN=build/release/bin/wgx   the binary (relative to the repository root, or absolute)
//   WGX_ADAPTER=...                 passed through to every wgx process
//   WGX_SERVE_LOAD_REQUESTS=200     requests per round of the load test
//   WGX_SERVE_LOG=1                 copy the servers' stderr to this stderr
//
// Run with scripts/test-server.sh, or `node --test --test-concurrency=1 tests/server/`.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WGX_BIN = resolve(ROOT, process.env.WGX_BIN || 'build/release/bin/wgx');
const MODEL = 'models/demo';
const MODEL_NAME = 'demo';
const LOAD_REQUESTS = Number(process.env.WGX_SERVE_LOAD_REQUESTS || 200);
const ENV = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR || '/tmp' };
delete ENV.WGX_API_KEY; // the suites that want a key pass --api-key

const MINUTE = 60_000;
const LONG_PROMPT = 'word '.repeat(3000);

// ---- the server process --------------------------------------------------------------------------

// Starts `wgx serve --model models/demo --port 0 ...extra`, waits for its "listening" line, runs
// `onListening(server)` if given (before the model has loaded), then waits for /health to be 200.
async function startServer(extra = [], { onListening, healthTimeoutMs = 2 * MINUTE } = {}) {
  const args = ['serve', '--model', MODEL, '--port', '0', ...extra];
  const child = spawn(WGX_BIN, args, { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = {
    child,
    args,
    stderr: '',
    exit: null,
    port: 0,
    url: (path) => `http://127.0.0.1:${server.port}${path}`,
    tail: (n = 3000) => server.stderr.slice(-n),
    describe: () => `wgx ${args.join(' ')} (pid ${child.pid}); its stderr ends:\n${server.tail()}`,
  };
  child.stdout.resume();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    server.stderr += d;
    if (process.env.WGX_SERVE_LOG) process.stderr.write(d);
  });
  server.exited = new Promise((res) =>
    child.on('exit', (code, signal) => res((server.exit = { code, signal }))),
  );
  child.on('error', (e) => {
    server.stderr += `\n[spawn error: ${e.message}]`;
  });

  const deadline = Date.now() + healthTimeoutMs;
  for (;;) {
    const m = /wgx serve: listening on http:\/\/([^\s:]+):(\d+)/.exec(server.stderr);
    if (m) {
      server.port = Number(m[2]);
      break;
    }
    if (server.exit)
      throw new Error(
        `the server exited (${JSON.stringify(server.exit)}) before listening: ${server.describe()}`,
      );
    if (Date.now() > deadline) {
      await stopServer(server);
      throw new Error(`no "listening" line: ${server.describe()}`);
    }
    await sleep(20);
  }
  if (onListening) await onListening(server);
  for (;;) {
    if (server.exit)
      throw new Error(
        `the server exited (${JSON.stringify(server.exit)}) while loading: ${server.describe()}`,
      );
    try {
      if ((await fetch(server.url('/health'))).status === 200) return server;
    } catch {
      /* not answering yet */
    }
    if (Date.now() > deadline) {
      await stopServer(server);
      throw new Error(`/health never 200: ${server.describe()}`);
    }
    await sleep(200);
  }
}

// SIGTERM, then SIGKILL if it has not exited within `graceMs`. Returns the exit {code, signal}.
async function stopServer(server, graceMs = 30_000) {
  if (!server || server.exit) return server?.exit;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), graceMs);
  const exit = await server.exited;
  clearTimeout(timer);
  return exit;
}

function rssKiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

// ---- HTTP ----------------------------------------------------------------------------------------

// A request; `body` an object (sent as JSON) or a string (sent as it is). Returns status, headers,
// text and json (undefined when the body is not JSON).
async function request(server, method, path, body, { headers = {}, signal } = {}) {
  const init = { method, headers: { ...headers }, signal };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetchFrom(server, path, init);
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, json };
}

// fetch, with what became of the server when it fails.
async function fetchFrom(server, path, init) {
  try {
    return await fetch(server.url(path), init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    await sleep(100);
    const state = server.exit
      ? `the server has exited: ${JSON.stringify(server.exit)}`
      : 'the server is running';
    throw new Error(
      `${init.method ?? 'GET'} ${path}: ${e.message} (${e.cause?.code ?? e.cause?.message ?? ''}); ${state}; its stderr ends:\n${server.tail(1500)}`,
    );
  }
}

function assertAlive(server) {
  assert.ok(
    server && !server.exit,
    `the server is not running: ${server ? `${JSON.stringify(server.exit)}: ${server.describe()}` : 'never started'}`,
  );
}

const post = (server, path, body, opts) => request(server, 'POST', path, body, opts);
const get = (server, path, opts) => request(server, 'GET', path, undefined, opts);

// The events of a text/event-stream body: parsed JSON objects, or the string '[DONE]'.
async function* sseEvents(res) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      yield data === '[DONE]' ? data : JSON.parse(data);
    }
  }
  assert.equal(buffer.trim(), '', `the stream ended inside an event: ${JSON.stringify(buffer)}`);
}

function requestBody(kind, input, { max_tokens = 8, temperature = 0, stream = false, ...extra } = {}) {
  const messages = Array.isArray(input) ? input : [{ role: 'user', content: input }];
  const body = kind === 'chat' ? { messages } : { prompt: input };
  return { ...body, max_tokens, temperature, ...(stream ? { stream } : {}), ...extra };
}

const pathOf = (kind) => (kind === 'chat' ? '/v1/chat/completions' : '/v1/completions');

// One generation through fetch, streamed or not; returns {text, finish_reason, usage}. Throws on
// anything but a complete answer.
async function generate(server, kind, input, options = {}, { headers } = {}) {
  const body = requestBody(kind, input, options);
  const what = `POST ${pathOf(kind)} ${JSON.stringify(body).slice(0, 200)}`;
  if (!body.stream) {
    const r = await post(server, pathOf(kind), body, { headers });
    assert.equal(r.status, 200, `${what}: status ${r.status}, body ${r.text.slice(0, 500)}`);
    const choice = r.json.choices[0];
    return {
      text: kind === 'chat' ? choice.message.content : choice.text,
      finish_reason: choice.finish_reason,
      usage: r.json.usage,
    };
  }
  const res = await fetchFrom(server, pathOf(kind), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.status !== 200)
    assert.fail(`${what}: status ${res.status}, body ${(await res.text()).slice(0, 500)}`);
  let text = '',
    finish_reason = null,
    usage = null,
    done = false;
  for await (const ev of sseEvents(res)) {
    assert.ok(!done, `${what}: an event after [DONE]: ${JSON.stringify(ev)}`);
    if (ev === '[DONE]') {
      done = true;
      continue;
    }
    assert.ok(!ev.error, `${what}: an error event: ${JSON.stringify(ev)}`);
    if (ev.usage) usage = ev.usage;
    const choice = ev.choices?.[0];
    if (!choice) continue;
    text += (kind === 'chat' ? choice.delta?.content : choice.text) ?? '';
    if (choice.finish_reason) finish_reason = choice.finish_reason;
  }
  assert.ok(done, `${what}: the stream ended without [DONE]`);
  return { text, finish_reason, usage };
}

// The same, after a request that shares no prefix with it: nothing of its prompt is in the
// server's cache, so its answer is the one `wgx run` gives.
async function generateCold(server, kind, input, options = {}) {
  await generate(server, 'completion', '~', { max_tokens: 1 });
  return generate(server, kind, input, options);
}

// Starts a streaming request and aborts it once its first event has come. Returns how many events
// it read.
async function streamThenAbort(server, kind, input, options = {}) {
  const controller = new AbortController();
  const body = requestBody(kind, input, { ...options, stream: true });
  const res = await fetchFrom(server, pathOf(kind), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  assert.equal(res.status, 200, `streaming ${pathOf(kind)}: status ${res.status}`);
  let events = 0;
  try {
    for await (const ev of sseEvents(res)) {
      assert.notEqual(ev, '[DONE]', `the stream to abort ended before its first chunk was read`);
      events++;
      controller.abort();
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
  return events;
}

// ---- /metrics ------------------------------------------------------------------------------------

// Prometheus text -> Map of 'name{labels}' (labels as the server wrote them, sorted) -> number.
function parseMetrics(text) {
  const values = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    assert.ok(m, `a /metrics line that is not a sample: ${JSON.stringify(line)}`);
    const labels = m[2] ? `{${m[2].slice(1, -1).split(',').filter(Boolean).sort().join(',')}}` : '';
    values.set(m[1] + labels, Number(m[3]));
  }
  return values;
}

async function metrics(server) {
  const r = await get(server, '/metrics');
  assert.equal(r.status, 200, `GET /metrics: status ${r.status}`);
  return parseMetrics(r.text);
}

// wgx_requests_total of one outcome, summed over the endpoints (or of one endpoint).
function requests(m, outcome, endpoint) {
  let sum = 0;
  for (const ep of endpoint ? [endpoint] : ['chat', 'completions']) {
    sum += m.get(`wgx_requests_total{endpoint="${ep}",outcome="${outcome}"}`) ?? 0;
  }
  return sum;
}

const OUTCOMES = ['ok', 'cancelled', 'error', 'rejected'];
const outcomeDeltas = (a, b) => Object.fromEntries(OUTCOMES.map((o) => [o, requests(b, o) - requests(a, o)]));

// ---- the command line's answers ------------------------------------------------------------------

function runWgx(args) {
  return new Promise((res, rej) => {
    execFile(
      WGX_BIN,
      args,
      { cwd: ROOT, env: ENV, encoding: 'utf8', maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        if (err) rej(new Error(`wgx ${args.join(' ')} failed (${err.code ?? err.signal}): ${stderr}`));
        else res({ stdout, stderr });
      },
    );
  });
}

// `wgx run --temp 0`: stdout, and from its stderr the prompt and generated token counts and the
// finish_reason the server should give.
async function cliGreedy(kind, prompt, n) {
  const args = [
    'run',
    '--model',
    MODEL,
    ...(kind === 'chat' ? ['--chat'] : []),
    '-p',
    prompt,
    '-n',
    String(n),
    '--temp',
    '0',
  ];
  const { stdout, stderr } = await runWgx(args);
  const promptTokens = /prompt (\d+) tokens/.exec(stderr);
  const generated = /generated (\d+) tokens/.exec(stderr);
  const stop = /stop: ([a-z ]+?)\s*(\||$)/m.exec(stderr);
  assert.ok(promptTokens && generated && stop, `unexpected statistics from wgx ${args.join(' ')}: ${stderr}`);
  return {
    args,
    stdout,
    promptTokens: Number(promptTokens[1]),
    generated: Number(generated[1]),
    finish_reason: stop[1] === 'max tokens' ? 'length' : 'stop',
  };
}

// What `wgx run` prints for a generated text: the text, and a newline where it does not end one.
const cliPrints = (text) => (text !== '' && !text.endsWith('\n') ? `${text}\n` : text);

async function tokenize(text) {
  const { stdout } = await runWgx(['tokenize', '--model', MODEL, text]);
  const ids = JSON.parse(stdout);
  assert.ok(Array.isArray(ids) && ids.every(Number.isInteger), `wgx tokenize printed ${stdout}`);
  return ids;
}

function assertUsage(usage, what) {
  assert.ok(usage, `${what}: no usage`);
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) {
    assert.ok(Number.isInteger(usage[k]) && usage[k] >= 0, `${what}: usage.${k} is ${usage[k]}`);
  }
  assert.equal(
    usage.total_tokens,
    usage.prompt_tokens + usage.completion_tokens,
    `${what}: total_tokens != prompt + completion in ${JSON.stringify(usage)}`,
  );
  const cached = usage.prompt_tokens_details?.cached_tokens;
  assert.ok(
    Number.isInteger(cached) && cached >= 0 && cached <= usage.prompt_tokens,
    `${what}: usage.prompt_tokens_details.cached_tokens should be an integer in [0, prompt_tokens]: ${JSON.stringify(usage)}`,
  );
}

function assertErrorBody(r, what) {
  assert.match(
    r.headers.get('content-type') ?? '',
    /application\/json/,
    `${what}: Content-Type of the error`,
  );
  const e = r.json?.error;
  assert.ok(e && typeof e === 'object', `${what}: no error object in ${r.text.slice(0, 300)}`);
  assert.equal(typeof e.message, 'string', `${what}: error.message in ${r.text}`);
  assert.ok(e.message.length > 0, `${what}: an empty error.message`);
  assert.equal(typeof e.type, 'string', `${what}: error.type in ${r.text}`);
  assert.ok(
    e.param === null || typeof e.param === 'string',
    `${what}: error.param must be a string or null: ${r.text}`,
  );
  assert.ok(
    'code' in e && (e.code === null || typeof e.code === 'string'),
    `${what}: error.code must be a string or null: ${r.text}`,
  );
  return e;
}

// A request that should be answered with an error; `code` and `param` checked where given.
async function expectError(server, method, path, body, { status, code, param, type, headers } = {}) {
  const what = `${method} ${path} ${typeof body === 'string' ? JSON.stringify(body.slice(0, 80)) : (JSON.stringify(body)?.slice(0, 200) ?? '')}`;
  const r = await request(server, method, path, body, { headers });
  assert.equal(
    r.status,
    status,
    `${what}: expected status ${status}, got ${r.status} ${r.text.slice(0, 300)}`,
  );
  const e = assertErrorBody(r, what);
  if (code !== undefined) assert.equal(e.code, code, `${what}: error.code in ${r.text}`);
  if (param !== undefined) assert.equal(e.param, param, `${what}: error.param in ${r.text}`);
  if (type !== undefined) assert.equal(e.type, type, `${what}: error.type in ${r.text}`);
  return r;
}

const clientFor = (server, apiKey = 'unused') =>
  new OpenAI({ baseURL: server.url('/v1'), apiKey, maxRetries: 0, timeout: 5 * MINUTE });

// ==================================================================================================

describe('wgx serve (default options)', { timeout: 30 * MINUTE }, () => {
  let server, client;
  const whileLoading = {};

  before(
    async () => {
      server = await startServer([], {
        // The model takes seconds to load on SwiftShader: ask right after the socket is bound.
        onListening: async (s) => {
          const [live, health, completion] = await Promise.all([
            get(s, '/live'),
            get(s, '/health'),
            post(s, '/v1/completions', { prompt: 'Hi', max_tokens: 1, temperature: 0 }),
          ]);
          Object.assign(whileLoading, { live, health, completion });
        },
      });
      client = clientFor(server);
    },
    { timeout: 3 * MINUTE },
  );
  beforeEach(() => assertAlive(server));

  after(async () => {
    const exit = await stopServer(server);
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `the server's exit after SIGTERM: ${server?.describe()}`,
    );
  });

  it('answers /live at once and /health 503 "loading" until the model is ready', (t) => {
    const { live, health, completion } = whileLoading;
    assert.equal(live.status, 200, `/live while loading: ${live.status} ${live.text}`);
    assert.deepEqual(live.json, { status: 'alive' });
    if (health.status === 200) return t.skip('the model had loaded before the first /health');
    assert.equal(health.status, 503, `/health while loading: ${health.status} ${health.text}`);
    assert.deepEqual(health.json, { status: 'loading' }, `/health while loading: ${health.text}`);
    // Sent at the same time as /health: it may have arrived after the load finished.
    if (completion.status !== 200) {
      assert.equal(
        completion.status,
        503,
        `a completion while loading: ${completion.status} ${completion.text}`,
      );
      assert.equal(
        completion.json?.error?.code,
        'unavailable',
        `a completion while loading: ${completion.text}`,
      );
    }
  });

  it('answers /health and /live', async () => {
    const health = await get(server, '/health');
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok' });
    const live = await get(server, '/live');
    assert.equal(live.status, 200);
    assert.deepEqual(live.json, { status: 'alive' });
  });

  it('lists the model as "demo" (client.models.list)', async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    assert.equal(models.length, 1, `models: ${JSON.stringify(models)}`);
    assert.equal(models[0].id, MODEL_NAME);
    assert.equal(models[0].object, 'model');
    assert.equal(models[0].owned_by, 'wgx');
    assert.ok(Number.isInteger(models[0].created), `created: ${models[0].created}`);
    const raw = await get(server, '/v1/models');
    assert.equal(raw.json.object, 'list', raw.text);
  });

  describe('greedy text equals wgx run --temp 0', () => {
    const completionPrompt = 'The meaning of life is';
    const chatMessage = 'Hello, who are you?';
    const N = 16;
    let cliCompletion, cliChat, promptIds;

    before(
      async () => {
        cliCompletion = await cliGreedy('completion', completionPrompt, N);
        cliChat = await cliGreedy('chat', chatMessage, N);
        promptIds = await tokenize(completionPrompt);
      },
      { timeout: 3 * MINUTE },
    );

    it('completions, not streamed', async () => {
      const r = await client.completions.create({
        model: MODEL_NAME,
        prompt: completionPrompt,
        max_tokens: N,
        temperature: 0,
      });
      assert.match(r.id, /^cmpl-/, `id: ${r.id}`);
      assert.equal(r.object, 'text_completion');
      assert.equal(r.model, MODEL_NAME);
      assert.ok(Number.isInteger(r.created), `created: ${r.created}`);
      assert.equal(r.choices.length, 1);
      const [c] = r.choices;
      assert.equal(c.index, 0);
      assert.equal(c.logprobs, null);
      assert.equal(
        cliPrints(c.text),
        cliCompletion.stdout,
        `the server's text ${JSON.stringify(c.text)} vs wgx ${cliCompletion.args.join(' ')}`,
      );
      assert.equal(
        c.finish_reason,
        cliCompletion.finish_reason,
        `finish_reason (the command line generated ${cliCompletion.generated} of ${N})`,
      );
      if (cliCompletion.finish_reason === 'length') assert.equal(c.finish_reason, 'length');
      assertUsage(r.usage, 'completion');
      assert.equal(
        r.usage.completion_tokens,
        cliCompletion.generated,
        `completion_tokens: ${JSON.stringify(r.usage)}`,
      );
      assert.equal(
        r.usage.prompt_tokens,
        promptIds.length,
        `prompt_tokens vs wgx tokenize ${JSON.stringify(promptIds)}`,
      );
      assert.equal(r.usage.prompt_tokens, cliCompletion.promptTokens, `prompt_tokens vs wgx run's count`);
    });

    it('completions, streamed: the pieces add up to the same text, then usage', async () => {
      const stream = await client.completions.create({
        model: MODEL_NAME,
        prompt: completionPrompt,
        max_tokens: N,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '',
        finish = [],
        usageChunks = [],
        pieces = 0;
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'text_completion', `chunk: ${JSON.stringify(chunk)}`);
        assert.match(chunk.id, /^cmpl-/);
        if (chunk.usage) {
          usageChunks.push(chunk);
          continue;
        }
        assert.equal(chunk.choices.length, 1, `chunk: ${JSON.stringify(chunk)}`);
        assert.equal(finish.length, 0, `a chunk after the one with finish_reason: ${JSON.stringify(chunk)}`);
        text += chunk.choices[0].text;
        pieces++;
        if (chunk.choices[0].finish_reason) finish.push(chunk.choices[0].finish_reason);
      }
      assert.ok(pieces > 1, `the text came in ${pieces} chunk(s)`);
      assert.equal(cliPrints(text), cliCompletion.stdout, `streamed text ${JSON.stringify(text)}`);
      assert.deepEqual(finish, [cliCompletion.finish_reason], 'finish_reason of the last text chunk');
      assert.equal(usageChunks.length, 1, `usage chunks: ${JSON.stringify(usageChunks)}`);
      assert.deepEqual(usageChunks[0].choices, [], 'the usage chunk has no choices');
      assertUsage(usageChunks[0].usage, 'the usage chunk');
      assert.equal(usageChunks[0].usage.completion_tokens, cliCompletion.generated);
      assert.equal(usageChunks[0].usage.prompt_tokens, promptIds.length);
    });

    it('a streamed completion without include_usage has no usage chunk', async () => {
      const stream = await client.completions.create({
        model: MODEL_NAME,
        prompt: completionPrompt,
        max_tokens: 4,
        temperature: 0,
        stream: true,
      });
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        assert.ok(!chunk.usage, `unasked-for usage: ${JSON.stringify(chunk)}`);
        assert.equal(chunk.choices.length, 1, `chunk: ${JSON.stringify(chunk)}`);
      }
      assert.ok(chunks > 0);
    });

    it('completions accept the prompt as an array of one string and as token ids', async () => {
      const expected = cliCompletion.stdout;
      const one = await generate(server, 'completion', [completionPrompt], { max_tokens: N });
      assert.equal(cliPrints(one.text), expected, 'prompt: [string]');
      const ids = await generate(server, 'completion', promptIds, { max_tokens: N });
      assert.equal(cliPrints(ids.text), expected, `prompt: ${JSON.stringify(promptIds)}`);
      assert.equal(ids.usage.prompt_tokens, promptIds.length);
    });

    it('chat, not streamed', async () => {
      const r = await client.chat.completions.create({
        model: MODEL_NAME,
        messages: [{ role: 'user', content: chatMessage }],
        max_tokens: N,
        temperature: 0,
      });
      assert.match(r.id, /^chatcmpl-/, `id: ${r.id}`);
      assert.equal(r.object, 'chat.completion');
      assert.equal(r.model, MODEL_NAME);
      assert.equal(r.choices.length, 1);
      const [c] = r.choices;
      assert.equal(c.index, 0);
      assert.equal(c.logprobs, null);
      assert.equal(c.message.role, 'assistant');
      assert.equal(
        cliPrints(c.message.content),
        cliChat.stdout,
        `the server's reply ${JSON.stringify(c.message.content)} vs wgx ${cliChat.args.join(' ')}`,
      );
      assert.equal(c.finish_reason, cliChat.finish_reason);
      assertUsage(r.usage, 'chat');
      assert.equal(
        r.usage.completion_tokens,
        cliChat.generated,
        `completion_tokens: ${JSON.stringify(r.usage)}`,
      );
      assert.equal(r.usage.prompt_tokens, cliChat.promptTokens, `prompt_tokens vs wgx run --chat's count`);
    });

    it('chat, streamed: role first, then the pieces, then finish_reason, then usage', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL_NAME,
        messages: [{ role: 'user', content: chatMessage }],
        max_tokens: N,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      const all = JSON.stringify(chunks).slice(0, 2000);
      for (const c of chunks) {
        assert.equal(c.object, 'chat.completion.chunk', all);
        assert.match(c.id, /^chatcmpl-/, all);
      }
      assert.equal(new Set(chunks.map((c) => c.id)).size, 1, `one id for the whole stream: ${all}`);
      assert.deepEqual(
        chunks[0].choices[0].delta,
        { role: 'assistant', content: '' },
        `the first chunk: ${JSON.stringify(chunks[0])}`,
      );
      const usage = chunks.at(-1);
      assert.deepEqual(
        usage.choices,
        [],
        `the last chunk should be the usage chunk: ${JSON.stringify(usage)}`,
      );
      assertUsage(usage.usage, 'the usage chunk');
      const last = chunks.at(-2);
      assert.deepEqual(last.choices[0].delta, {}, `the chunk with finish_reason: ${JSON.stringify(last)}`);
      assert.equal(last.choices[0].finish_reason, cliChat.finish_reason);
      const middle = chunks.slice(1, -2);
      assert.ok(middle.length > 1, `the reply came in ${middle.length} chunk(s)`);
      for (const c of middle) {
        assert.deepEqual(
          Object.keys(c.choices[0].delta),
          ['content'],
          `a content chunk: ${JSON.stringify(c)}`,
        );
        assert.equal(c.choices[0].finish_reason, null, `a content chunk: ${JSON.stringify(c)}`);
      }
      const text = middle.map((c) => c.choices[0].delta.content).join('');
      assert.equal(cliPrints(text), cliChat.stdout, `streamed reply ${JSON.stringify(text)}`);
      assert.equal(usage.usage.completion_tokens, cliChat.generated);
      assert.equal(usage.usage.prompt_tokens, cliChat.promptTokens);
    });

    it('chat accepts content parts and max_completion_tokens', async () => {
      const r = await post(server, '/v1/chat/completions', {
        messages: [{ role: 'user', content: [{ type: 'text', text: chatMessage }] }],
        max_completion_tokens: N,
        temperature: 0,
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(cliPrints(r.json.choices[0].message.content), cliChat.stdout);
      assert.equal(r.json.usage.completion_tokens, cliChat.generated);
    });

    it('fields at their only supported value are accepted and change nothing', async () => {
      const c = await post(server, '/v1/completions', {
        model: 'anything',
        prompt: completionPrompt,
        max_tokens: N,
        temperature: 0,
        n: 1,
        echo: false,
        logprobs: null,
        frequency_penalty: 0,
        presence_penalty: 0,
        logit_bias: {},
        suffix: '',
        user: 'someone',
        stream: false,
      });
      assert.equal(c.status, 200, c.text);
      assert.equal(cliPrints(c.json.choices[0].text), cliCompletion.stdout);
      assert.equal(c.json.model, MODEL_NAME, 'model is the served name whatever the request says');
      const chat = await post(server, '/v1/chat/completions', {
        model: 'anything',
        messages: [{ role: 'user', content: chatMessage }],
        max_tokens: N,
        temperature: 0,
        n: 1,
        logprobs: false,
        frequency_penalty: 0,
        presence_penalty: 0,
        tools: [],
        chat_template_kwargs: { enable_thinking: true },
        user: 'someone',
      });
      assert.equal(chat.status, 200, chat.text);
      assert.equal(cliPrints(chat.json.choices[0].message.content), cliChat.stdout);
    });

    it('a stop string ends the text before it, finish_reason "stop"', async () => {
      const full = (await generate(server, 'completion', completionPrompt, { max_tokens: N })).text;
      // A stop string from the middle of the greedy text, at its first occurrence.
      const at = Math.floor(full.length / 2);
      const stop = full.slice(at, at + 3);
      assert.ok(
        stop.trim().length > 0 && at > 0,
        `the greedy text is too short for this test: ${JSON.stringify(full)}`,
      );
      const expected = full.slice(0, full.indexOf(stop));
      for (const stream of [false, true]) {
        const r = await generate(server, 'completion', completionPrompt, {
          max_tokens: N,
          stop: stream ? stop : [stop],
          stream,
        });
        assert.equal(
          r.text,
          expected,
          `stop ${JSON.stringify(stop)} (stream ${stream}) in ${JSON.stringify(full)}`,
        );
        assert.equal(r.finish_reason, 'stop', `stop ${JSON.stringify(stop)} (stream ${stream})`);
      }
    });
  });

  const cached = (r) => r.usage.prompt_tokens_details.cached_tokens;

  // Cached rows were computed by other steps (a prefill chunk, or decode steps for a reply) than a
  // cold cache's, whose kernels round differently: a reply is the same within the kernels'
  // tolerance, not bit for bit (docs/serve.md), so near ties may go either way. What holds: the
  // prefix is counted as cached and not fed, and the same requests in the same order give the
  // same text.
  it('a prompt that extends the last one reuses its cached prefix, the same way each time', async () => {
    const prompt = 'The meaning of life is not';
    const run = async () => {
      await generateCold(server, 'completion', 'The meaning of life is', { max_tokens: 8 });
      return generate(server, 'completion', prompt, { max_tokens: 12 });
    };
    const warm = await run();
    const again = await run();
    assert.ok(cached(warm) > 0, `nothing cached: ${JSON.stringify(warm.usage)}`);
    assert.equal(cached(again), cached(warm));
    assert.equal(again.text, warm.text, `${JSON.stringify(prompt)} after "The meaning of life is", twice`);
    const cold = await generateCold(server, 'completion', prompt, { max_tokens: 12 });
    assert.equal(cached(cold), 0, `a cold request had cached tokens: ${JSON.stringify(cold.usage)}`);
    assert.equal(warm.usage.prompt_tokens, cold.usage.prompt_tokens, 'the whole prompt is counted either way');
  });

  it("a chat's next turn reuses its cached conversation, the same way each time", async () => {
    const run = async () => {
      const first = await generateCold(server, 'chat', 'Hello', { max_tokens: 8 });
      const turn2 = [
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: first.text },
        { role: 'user', content: 'Tell me more.' },
      ];
      return generate(server, 'chat', turn2, { max_tokens: 12 });
    };
    const warmChat = await run();
    const again = await run();
    assert.ok(cached(warmChat) > 0, `nothing cached for the second turn: ${JSON.stringify(warmChat.usage)}`);
    assert.equal(again.text, warmChat.text, "a chat's second turn, twice");
  });

  it('finish_reason is "length" exactly at max_tokens', async () => {
    for (const [kind, input] of [
      ['completion', 'Once upon a time'],
      ['chat', 'Tell me a story.'],
    ]) {
      for (const stream of [false, true]) {
        const r = await generate(server, kind, input, {
          max_tokens: 3,
          stream,
          stream_options: stream ? { include_usage: true } : undefined,
        });
        assert.equal(
          r.finish_reason,
          'length',
          `${kind} stream=${stream} max_tokens 3: ${JSON.stringify(r)}`,
        );
        assert.equal(r.usage.completion_tokens, 3, `${kind} stream=${stream}: ${JSON.stringify(r.usage)}`);
      }
    }
  });

  it('the same seed at temperature 0.9 gives the same text', async () => {
    for (const kind of ['completion', 'chat']) {
      const opts = { temperature: 0.9, seed: 1234, max_tokens: 24 };
      const a = await generateCold(server, kind, 'It was a dark and stormy night', opts);
      const b = await generateCold(server, kind, 'It was a dark and stormy night', {
        ...opts,
        stream: true,
        stream_options: { include_usage: true },
      });
      assert.ok(a.text.length > 0, `${kind}: an empty sample`);
      assert.equal(
        b.text,
        a.text,
        `${kind}: seed 1234, temperature 0.9, twice (cached prompt tokens: ${a.usage.prompt_tokens_details?.cached_tokens}, then ${b.usage.prompt_tokens_details?.cached_tokens})`,
      );
    }
  });

  it('logs one stderr line per finished completion request', async () => {
    // The line is matched by its token count (7, used by no other request here): node may
    // deliver an earlier request's stderr after that request's response.
    const line = /^wgx serve: POST \/v1\/chat\/completions 200 prompt \d+ \(\d+ cached\) \+ 7 tokens, stop: max tokens$/;
    const count = () => server.stderr.split('\n').filter((l) => line.test(l)).length;
    const before = count();
    await generate(server, 'chat', 'Hi', { max_tokens: 7, ignore_eos: true });
    for (let i = 0; i < 50 && count() === before; i++) await sleep(20);
    await sleep(200); // a second line, if the server wrote one, has arrived by now
    assert.equal(count(), before + 1, `lines matching ${line} before: ${before}; stderr ends:\n${server.tail(800)}`);
  });

  it('/metrics is Prometheus text with the documented series', async () => {
    const r = await get(server, '/metrics');
    assert.equal(r.status, 200);
    assert.match(
      r.headers.get('content-type') ?? '',
      /^text\/plain; ?version=0\.0\.4/,
      'Content-Type of /metrics',
    );
    const types = {
      wgx_requests_total: 'counter',
      wgx_prompt_tokens_total: 'counter',
      wgx_cached_prompt_tokens_total: 'counter',
      wgx_generated_tokens_total: 'counter',
      wgx_queue_length: 'gauge',
      wgx_requests_running: 'gauge',
      wgx_time_to_first_token_seconds: 'histogram',
      wgx_inter_token_latency_seconds: 'histogram',
      wgx_request_duration_seconds: 'histogram',
    };
    for (const [name, type] of Object.entries(types)) {
      assert.match(r.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `# TYPE line of ${name}`);
    }
    const m = parseMetrics(r.text);
    assert.ok(requests(m, 'ok') > 0, `no ok request counted yet:\n${r.text}`);
    assert.equal(m.get('wgx_queue_length'), 0);
    assert.equal(m.get('wgx_requests_running'), 0);
    for (const h of [
      'wgx_time_to_first_token_seconds',
      'wgx_inter_token_latency_seconds',
      'wgx_request_duration_seconds',
    ]) {
      const buckets = [...m].filter(([k]) => k.startsWith(`${h}_bucket{`));
      assert.ok(buckets.length > 1, `${h}: buckets ${JSON.stringify(buckets)}`);
      const le = (k) => {
        const v = /le="([^"]+)"/.exec(k)[1];
        return v === '+Inf' ? Infinity : Number(v);
      };
      buckets.sort((a, b) => le(a[0]) - le(b[0]));
      for (let i = 1; i < buckets.length; i++)
        assert.ok(
          buckets[i][1] >= buckets[i - 1][1],
          `${h}: buckets not cumulative: ${JSON.stringify(buckets)}`,
        );
      assert.equal(le(buckets.at(-1)[0]), Infinity, `${h}: no +Inf bucket`);
      assert.equal(buckets.at(-1)[1], m.get(`${h}_count`), `${h}: +Inf bucket vs _count`);
      assert.ok(
        m.get(`${h}_count`) > 0 && m.get(`${h}_sum`) > 0,
        `${h}: _count ${m.get(`${h}_count`)}, _sum ${m.get(`${h}_sum`)}`,
      );
    }
  });

  it(
    '16 concurrent greedy requests answer what they answer one at a time',
    { timeout: 10 * MINUTE },
    async () => {
      // Prompts that share no prefix beyond the chat template's opening (whose rows any prompt
      // computes alike): what one request leaves in the cache does not change another's text
      // (a cached prefix is exact only within the kernels' tolerance: see the tests above).
      const inputs = [
        ['completion', 'The meaning of life is'],
        ['completion', 'A fool and his money'],
        ['completion', 'Never trust a computer'],
        ['completion', 'Q: Why?\nA:'],
        ['completion', 'Computers are'],
        ['completion', 'If you want to'],
        ['completion', 'Your lucky number'],
        ['completion', 'Of all the'],
        ['chat', 'Hello'],
        ['chat', 'Tell me a joke.'],
        ['chat', 'What is the time?'],
        ['chat', 'Why is the sky blue?'],
        ['chat', 'Write a poem.'],
        ['chat', 'Good morning!'],
        ['chat', 'How are you?'],
        ['completion', 'Every cloud has'],
      ];
      const opts = (i) => ({
        max_tokens: 8 + (i % 3) * 4,
        stream: i % 3 === 1,
        stream_options: i % 3 === 1 ? { include_usage: true } : undefined,
      });
      const cached = (r) =>
        `${r.usage.prompt_tokens_details?.cached_tokens} of ${r.usage.prompt_tokens} prompt tokens cached`;
      const alone = [];
      for (const [i, [kind, input]] of inputs.entries())
        alone.push(await generateCold(server, kind, input, opts(i)));
      const together = await Promise.all(
        inputs.map(([kind, input], i) => generate(server, kind, input, opts(i))),
      );
      for (const [i, [kind, input]] of inputs.entries()) {
        assert.equal(
          together[i].text,
          alone[i].text,
          `#${i} ${kind} ${JSON.stringify(input)}: concurrent (${cached(together[i])}) vs one at a time (${cached(alone[i])})`,
        );
        assert.equal(together[i].finish_reason, alone[i].finish_reason, `#${i} finish_reason`);
        assert.equal(
          together[i].usage.completion_tokens,
          alone[i].usage.completion_tokens,
          `#${i} completion_tokens`,
        );
        assert.equal(together[i].usage.prompt_tokens, alone[i].usage.prompt_tokens, `#${i} prompt_tokens`);
      }
    },
  );

  it('a streaming client that disconnects frees the slot at once', { timeout: 5 * MINUTE }, async () => {
    const m0 = await metrics(server);
    const events = await streamThenAbort(server, 'completion', 'Once upon a time', { max_tokens: 900 });
    assert.ok(events >= 1);
    const start = Date.now();
    const r = await generate(server, 'completion', 'Hello', { max_tokens: 4 });
    const seconds = (Date.now() - start) / 1000;
    assert.equal(r.usage.completion_tokens, 4);
    const m1 = await metrics(server);
    const generated = m1.get('wgx_generated_tokens_total') - m0.get('wgx_generated_tokens_total');
    assert.ok(
      generated < 450,
      `${generated} tokens generated for the aborted 900-token request and a 4-token one: its generation did not stop`,
    );
    assert.ok(seconds < 20, `a 4-token request after an aborted 900-token stream took ${seconds} s`);
    const d = outcomeDeltas(m0, m1);
    assert.equal(d.cancelled, 1, `outcome="cancelled" grew by ${d.cancelled}: ${JSON.stringify(d)}`);
    assert.equal(d.ok, 1, `outcome="ok" grew by ${d.ok}: ${JSON.stringify(d)}`);
    assert.equal(m1.get('wgx_requests_running'), 0);
  });

  describe('errors', () => {
    const C = '/v1/completions';
    const CHAT = '/v1/chat/completions';
    const good = { prompt: 'Hello', max_tokens: 2, temperature: 0 };
    const goodChat = { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 2, temperature: 0 };
    const tool = {
      type: 'function',
      function: { name: 'f', parameters: { type: 'object', properties: {} } },
    };
    const cases = [
      // [path, body, status, code, param]; param undefined: not checked.
      [C, '{"prompt": "Hello",', 400, 'invalid_json'],
      [C, '', 400, 'invalid_json'],
      [CHAT, '{messages: []}', 400, 'invalid_json'],
      [C, '[1, 2]', 400, 'invalid_request'],
      [C, '"Hello"', 400, 'invalid_request'],
      [CHAT, 'null', 400, 'invalid_request'],
      [C, { ...good, foo: 1 }, 400, 'unknown_parameter', 'foo'],
      [CHAT, { ...goodChat, colour: 'red' }, 400, 'unknown_parameter', 'colour'],
      [C, { ...good, max_tokens: '8' }, 400, 'invalid_type', 'max_tokens'],
      [C, { ...good, temperature: 'hot' }, 400, 'invalid_type', 'temperature'],
      [C, { ...good, prompt: 42 }, 400, 'invalid_type', 'prompt'],
      [C, { ...good, stream: 'yes' }, 400, 'invalid_type', 'stream'],
      [C, { ...good, stop: 5 }, 400, 'invalid_type', 'stop'],
      [C, { ...good, seed: 'abc' }, 400, 'invalid_type', 'seed'],
      [CHAT, { ...goodChat, messages: 'Hello' }, 400, 'invalid_type', 'messages'],
      [CHAT, { ...goodChat, messages: [{ role: 'user', content: 5 }] }, 400, 'invalid_type'],
      [CHAT, { ...goodChat, chat_template_kwargs: { enable_thinking: 'no' } }, 400, 'invalid_type'],
      [C, { ...good, temperature: 5 }, 400, 'invalid_value', 'temperature'],
      [C, { ...good, temperature: -0.1 }, 400, 'invalid_value', 'temperature'],
      [C, { ...good, top_p: 0 }, 400, 'invalid_value', 'top_p'],
      [C, { ...good, top_p: 1.5 }, 400, 'invalid_value', 'top_p'],
      [C, { ...good, top_k: -1 }, 400, 'invalid_value', 'top_k'],
      [C, { ...good, min_p: 1.5 }, 400, 'invalid_value', 'min_p'],
      [C, { ...good, repetition_penalty: 0 }, 400, 'invalid_value', 'repetition_penalty'],
      [C, { ...good, repetition_penalty: 11 }, 400, 'invalid_value', 'repetition_penalty'],
      [C, { ...good, max_tokens: -1 }, 400, 'invalid_value', 'max_tokens'],
      [C, { ...good, stop: ['a', 'b', 'c', 'd', 'e'] }, 400, 'invalid_value', 'stop'],
      [CHAT, { ...goodChat, temperature: 2.5 }, 400, 'invalid_value', 'temperature'],
      [CHAT, { ...goodChat, max_completion_tokens: -1 }, 400, 'invalid_value', 'max_completion_tokens'],
      [CHAT, { ...goodChat, messages: [{ role: 'robot', content: 'Hello' }] }, 400, 'invalid_value'],
      [C, { ...good, n: 2 }, 400, 'unsupported_value', 'n'],
      [C, { ...good, echo: true }, 400, 'unsupported_value', 'echo'],
      [C, { ...good, logprobs: 1 }, 400, 'unsupported_value', 'logprobs'],
      [C, { ...good, frequency_penalty: 0.5 }, 400, 'unsupported_value', 'frequency_penalty'],
      [C, { ...good, presence_penalty: 1 }, 400, 'unsupported_value', 'presence_penalty'],
      [C, { ...good, logit_bias: { 42: 5 } }, 400, 'unsupported_value', 'logit_bias'],
      [C, { ...good, suffix: 'the end' }, 400, 'unsupported_value', 'suffix'],
      [CHAT, { ...goodChat, n: 2 }, 400, 'unsupported_value', 'n'],
      [CHAT, { ...goodChat, logprobs: true }, 400, 'unsupported_value', 'logprobs'],
      [CHAT, { ...goodChat, frequency_penalty: 0.5 }, 400, 'unsupported_value', 'frequency_penalty'],
      [CHAT, { ...goodChat, tools: [tool] }, 400, 'unsupported_value', 'tools'],
      [C, { max_tokens: 2 }, 400, 'missing_parameter', 'prompt'],
      [CHAT, { max_tokens: 2 }, 400, 'missing_parameter', 'messages'],
      [C, { ...good, prompt: LONG_PROMPT }, 400, 'context_length_exceeded'],
      [
        CHAT,
        { ...goodChat, messages: [{ role: 'user', content: LONG_PROMPT }] },
        400,
        'context_length_exceeded',
      ],
    ];

    for (const [path, body, status, code, param] of cases) {
      const shown =
        typeof body === 'string'
          ? JSON.stringify(body)
          : JSON.stringify(body).replace(LONG_PROMPT, '"word " x 3000').slice(0, 120);
      it(`${path} ${shown} -> ${status} ${code}${param ? ` (${param})` : ''}, then a good request`, async () => {
        await expectError(server, 'POST', path, body, { status, code, param });
        const r = await generate(server, 'completion', 'Hello', { max_tokens: 1 });
        assert.equal(r.usage.completion_tokens, 1, 'the good request after the error');
      });
    }

    it('unknown paths -> 404 not_found', async () => {
      await expectError(server, 'GET', '/nothing/here', undefined, { status: 404, code: 'not_found' });
      await expectError(
        server,
        'POST',
        '/v1/embeddings',
        { input: 'Hello' },
        { status: 404, code: 'not_found' },
      );
      const r = await generate(server, 'chat', 'Hello', { max_tokens: 1 });
      assert.equal(r.usage.completion_tokens, 1);
    });

    it('a body over the default --max-body (8 MiB) -> 413 request_too_large', async () => {
      const body = JSON.stringify({ prompt: 'x'.repeat(9 << 20), max_tokens: 1 });
      await expectError(server, 'POST', C, body, { status: 413, code: 'request_too_large' });
      const r = await generate(server, 'completion', 'Hello', { max_tokens: 1 });
      assert.equal(r.usage.completion_tokens, 1);
    });

    it('the official client raises OpenAI.BadRequestError', async () => {
      await assert.rejects(
        client.completions.create({ model: MODEL_NAME, prompt: 'Hello', max_tokens: 2, temperature: 5 }),
        (e) => {
          assert.ok(e instanceof OpenAI.BadRequestError, `got ${e?.constructor?.name}: ${e?.message}`);
          assert.equal(e.status, 400);
          assert.equal(e.code, 'invalid_value');
          assert.equal(e.param, 'temperature');
          return true;
        },
      );
      await assert.rejects(
        client.chat.completions.create({
          model: MODEL_NAME,
          messages: [{ role: 'user', content: LONG_PROMPT }],
          max_tokens: 2,
        }),
        (e) => e instanceof OpenAI.BadRequestError && e.code === 'context_length_exceeded',
      );
    });
  });

  describe('CORS (default: *)', () => {
    it('answers carry Access-Control-Allow-Origin: *', async () => {
      const headers = { Origin: 'http://example.com' };
      for (const r of [
        await get(server, '/v1/models', { headers }),
        await get(server, '/health', { headers }),
        await post(server, '/v1/completions', { prompt: 'Hi', max_tokens: 1, temperature: 0 }, { headers }),
        await post(server, '/v1/completions', { prompt: 'Hi', max_tokens: -1 }, { headers }),
        await get(server, '/nothing', { headers }),
      ]) {
        assert.equal(
          r.headers.get('access-control-allow-origin'),
          '*',
          `status ${r.status} ${r.text.slice(0, 100)}`,
        );
      }
    });

    it('OPTIONS preflight -> 204 with the allowed methods and headers', async () => {
      for (const path of ['/v1/chat/completions', '/v1/completions', '/anything']) {
        const res = await fetch(server.url(path), {
          method: 'OPTIONS',
          headers: {
            Origin: 'http://example.com',
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization, content-type',
          },
        });
        assert.equal(res.status, 204, `OPTIONS ${path}`);
        assert.equal(res.headers.get('access-control-allow-origin'), '*', `OPTIONS ${path}`);
        assert.equal(
          res.headers.get('access-control-allow-methods'),
          'GET, POST, OPTIONS',
          `OPTIONS ${path}`,
        );
        assert.equal(
          res.headers.get('access-control-allow-headers'),
          'Authorization, Content-Type',
          `OPTIONS ${path}`,
        );
        assert.equal(await res.text(), '', `OPTIONS ${path}: a 204 has no body`);
      }
    });
  });

  it(
    `load: ${LOAD_REQUESTS} requests from 32 workers, twice; answers, metrics and memory hold`,
    { timeout: 25 * MINUTE },
    async () => {
      // Neighbours in the queue ask different things (an answer sent to the wrong client shows);
      // the prompts share no prefix beyond the chat template's opening (see the 16-request test).
      const prompts = [
        ['completion', 'The meaning of life is'],
        ['completion', 'A friend in need is'],
        ['chat', 'Tell me a joke.'],
        ['chat', 'Write a poem.'],
      ];
      const malformed = [
        ['/v1/completions', '{"prompt": "Hi", "max_tokens": 8', 'invalid_json'],
        ['/v1/chat/completions', { messages: 'Hi', max_tokens: 8 }, 'invalid_type'],
        ['/v1/completions', { prompt: 'Hi', max_tokens: 8, colour: 'red' }, 'unknown_parameter'],
        ['/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi' }], top_p: 0 }, 'invalid_value'],
      ];
      const maxTokens = 8;
      const abortedMaxTokens = 32;
      const expected = [];
      for (const [kind, input] of prompts)
        expected.push(await generateCold(server, kind, input, { max_tokens: maxTokens }));

      // Request i, in blocks of 8 of one kind (chat or completion): the 4th malformed, the 6th a
      // stream aborted after its first chunk, the rest good, half of them streamed.
      const plan = Array.from({ length: LOAD_REQUESTS }, (_, i) =>
        i % 8 === 3 ? 'malformed' : i % 8 === 5 ? 'abort' : 'good',
      );
      const promptOf = (i) => 2 * (Math.floor(i / 8) % 2) + (i % 2);
      const count = (k) => plan.filter((p) => p === k).length;

      async function round() {
        let next = 0;
        const failures = [];
        const mismatches = [];
        async function worker() {
          for (let i; (i = next++) < plan.length; ) {
            const p = promptOf(i);
            const [kind, input] = prompts[p];
            try {
              if (plan[i] === 'malformed') {
                const [path, body, code] = malformed[Math.floor(i / 8) % malformed.length];
                const r = await post(server, path, body);
                if (r.status !== 400 || r.json?.error?.code !== code)
                  failures.push(
                    `#${i} malformed: expected 400 ${code}, got ${r.status} ${r.text.slice(0, 200)}`,
                  );
              } else if (plan[i] === 'abort') {
                await streamThenAbort(server, kind, input, { max_tokens: abortedMaxTokens });
              } else {
                const stream = Math.floor(i / 2) % 2 === 0;
                const r = await generate(server, kind, input, {
                  max_tokens: maxTokens,
                  stream,
                  stream_options: stream ? { include_usage: true } : undefined,
                });
                const want = expected[p];
                if (
                  r.usage?.completion_tokens !== want.usage.completion_tokens ||
                  r.finish_reason !== want.finish_reason
                ) {
                  failures.push(
                    `#${i} ${kind} ${JSON.stringify(input)} stream=${stream}: got ${JSON.stringify(r)}, alone ${JSON.stringify(want)}`,
                  );
                } else if (r.text !== want.text) {
                  mismatches.push(
                    `#${i} ${kind} ${JSON.stringify(input)} stream=${stream}: got ${JSON.stringify(r.text)} (cached ${r.usage.prompt_tokens_details?.cached_tokens}), alone ${JSON.stringify(want.text)}`,
                  );
                }
              }
            } catch (e) {
              failures.push(`#${i} ${plan[i]} ${kind} ${JSON.stringify(input)}: ${e.message}`);
            }
          }
        }
        const m0 = await metrics(server);
        const start = Date.now();
        await Promise.all(Array.from({ length: 32 }, worker));
        const seconds = (Date.now() - start) / 1000;
        assert.deepEqual(
          failures.slice(0, 10),
          [],
          `${failures.length} of ${plan.length} requests went wrong; server stderr ends:\n${server.tail(1500)}`,
        );
        const health = await get(server, '/health');
        assert.equal(health.status, 200, `/health after the round: ${health.text}`);
        // The aborted streams' generations stop at their next token; give them a moment.
        let m1;
        for (let i = 0; i < 50; i++) {
          m1 = await metrics(server);
          if (m1.get('wgx_requests_running') === 0 && m1.get('wgx_queue_length') === 0) break;
          await sleep(100);
        }
        const d = outcomeDeltas(m0, m1);
        const shown = `${JSON.stringify(d)} for ${count('good')} good, ${count('abort')} aborted, ${count('malformed')} malformed`;
        assert.equal(d.ok, count('good'), `outcome="ok" grew by ${shown}`);
        assert.ok(d.cancelled >= 1 && d.cancelled <= count('abort'), `outcome="cancelled" grew by ${shown}`);
        assert.equal(
          d.ok + d.cancelled + d.error + d.rejected,
          plan.length,
          `every request counted once: ${shown}`,
        );
        assert.equal(m1.get('wgx_requests_running'), 0, 'wgx_requests_running after the round');
        assert.equal(m1.get('wgx_queue_length'), 0, 'wgx_queue_length after the round');
        const goodTokens = plan.reduce(
          (s, p, i) => s + (p === 'good' ? expected[promptOf(i)].usage.completion_tokens : 0),
          0,
        );
        const generated = m1.get('wgx_generated_tokens_total') - m0.get('wgx_generated_tokens_total');
        assert.ok(
          generated >= goodTokens && generated <= goodTokens + abortedMaxTokens * count('abort'),
          `wgx_generated_tokens_total grew by ${generated}; the good requests alone generated ${goodTokens}`,
        );
        return { seconds, rss: rssKiB(server.child.pid), mismatches };
      }

      const first = await round();
      const second = await round();
      console.log(
        `load rounds: ${first.seconds.toFixed(1)} s and ${second.seconds.toFixed(1)} s; VmRSS ${first.rss} -> ${second.rss} kB`,
      );
      const allowed = Math.max(first.rss * 0.1, 8 * 1024);
      assert.ok(
        second.rss - first.rss <= allowed,
        `VmRSS ${first.rss} kB after the first round, ${second.rss} kB after the second (+${second.rss - first.rss} kB; allowed ${Math.round(allowed)} kB)`,
      );
      // Checked last so that a wrong text does not hide the checks above.
      const mismatches = [...first.mismatches, ...second.mismatches];
      assert.deepEqual(
        mismatches.slice(0, 10),
        [],
        `${mismatches.length} of ${2 * count('good')} good requests answered another text than the same request alone`,
      );
    },
  );
});

describe(
  'wgx serve with small limits: --ctx 64 --max-body 1000 --cors none',
  { timeout: 10 * MINUTE },
  () => {
    const ctx = 64;
    let server, helloIds;
    before(
      async () => {
        server = await startServer(['--ctx', String(ctx), '--max-body', '1000', '--cors', 'none']);
        helloIds = await tokenize('Hello');
      },
      { timeout: 3 * MINUTE },
    );
    beforeEach(() => assertAlive(server));
    after(async () => {
      const exit = await stopServer(server);
      assert.deepEqual(
        exit,
        { code: 0, signal: null },
        `the server's exit after SIGTERM: ${server?.describe()}`,
      );
    });

    it('a body over --max-body -> 413 request_too_large; one under it is served', async () => {
      await expectError(
        server,
        'POST',
        '/v1/completions',
        { prompt: 'x'.repeat(2000), max_tokens: 1 },
        { status: 413, code: 'request_too_large' },
      );
      const small = `{"prompt": "Hello", ${' '.repeat(900)} "max_tokens": 1, "temperature": 0}`;
      assert.ok(small.length < 1000);
      const r = await post(server, '/v1/completions', small);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.usage.completion_tokens, 1);
    });

    it('max_tokens defaults to, and is lowered to, what the context has left', async () => {
      const prompt = [...helloIds, ...Array(ctx - helloIds.length - 3).fill(helloIds.at(-1))];
      for (const max_tokens of [50, undefined]) {
        const body = { prompt, temperature: 0, ...(max_tokens ? { max_tokens } : {}) };
        const r = await post(server, '/v1/completions', body);
        assert.equal(
          r.status,
          200,
          `a ${prompt.length}-token prompt, max_tokens ${max_tokens}, --ctx ${ctx}: ${r.text}`,
        );
        const {
          usage,
          choices: [c],
        } = r.json;
        assert.equal(usage.prompt_tokens, ctx - 3, JSON.stringify(usage));
        assert.ok(
          c.finish_reason === 'length' ? usage.completion_tokens === 3 : usage.completion_tokens < 3,
          `max_tokens ${max_tokens} with 3 positions left: ${r.text}`,
        );
      }
      const chat = await post(server, '/v1/chat/completions', {
        messages: [{ role: 'user', content: 'Hello' }],
        temperature: 0,
      });
      assert.equal(chat.status, 200, chat.text);
      const {
        usage,
        choices: [c],
      } = chat.json;
      assert.ok(
        c.finish_reason === 'length' ? usage.total_tokens === ctx : usage.total_tokens < ctx,
        `a chat without max_tokens, --ctx ${ctx}: ${chat.text}`,
      );
    });

    it('a prompt longer than --ctx -> 400 context_length_exceeded', async () => {
      const prompt = [...helloIds, ...Array(ctx).fill(helloIds.at(-1))];
      await expectError(
        server,
        'POST',
        '/v1/completions',
        { prompt, max_tokens: 1 },
        { status: 400, code: 'context_length_exceeded' },
      );
      const messages = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello '.repeat(40) },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'Hello again.' },
      ];
      await expectError(
        server,
        'POST',
        '/v1/chat/completions',
        { messages, max_tokens: 1 },
        { status: 400, code: 'context_length_exceeded' },
      );
      const r = await generate(server, 'completion', 'Hello', { max_tokens: 2 });
      assert.equal(r.usage.completion_tokens, 2);
    });

    it('no CORS headers on any answer', async () => {
      const headers = { Origin: 'http://example.com' };
      const answers = [
        await get(server, '/v1/models', { headers }),
        await post(server, '/v1/completions', { prompt: 'Hi', max_tokens: 1, temperature: 0 }, { headers }),
        await post(server, '/v1/completions', { prompt: 'Hi', temperature: 9 }, { headers }),
        await request(server, 'OPTIONS', '/v1/completions', undefined, {
          headers: { ...headers, 'Access-Control-Request-Method': 'POST' },
        }),
      ];
      assert.equal(answers[1].status, 200, answers[1].text);
      for (const r of answers) {
        const cors = [...r.headers.keys()].filter((k) => k.startsWith('access-control-'));
        assert.deepEqual(cors, [], `status ${r.status}: CORS headers with --cors none`);
      }
    });
  },
);

describe(
  'wgx serve --api-key secret --cors http://app.example --name wgx-test',
  { timeout: 10 * MINUTE },
  () => {
    let server;
    before(
      async () => {
        server = await startServer([
          '--api-key',
          'secret',
          '--cors',
          'http://app.example',
          '--name',
          'wgx-test',
        ]);
      },
      { timeout: 3 * MINUTE },
    );
    beforeEach(() => assertAlive(server));
    after(async () => {
      const exit = await stopServer(server);
      assert.deepEqual(
        exit,
        { code: 0, signal: null },
        `the server's exit after SIGTERM: ${server?.describe()}`,
      );
    });

    const body = { prompt: 'Hello', max_tokens: 2, temperature: 0 };
    const unauthorized = { status: 401, code: 'invalid_api_key', type: 'authentication_error' };

    it('no key or a wrong key -> 401 invalid_api_key', async () => {
      await expectError(server, 'POST', '/v1/completions', body, unauthorized);
      await expectError(server, 'POST', '/v1/completions', body, {
        ...unauthorized,
        headers: { Authorization: 'Bearer wrong' },
      });
      await expectError(server, 'POST', '/v1/completions', body, {
        ...unauthorized,
        headers: { Authorization: 'secret' },
      });
      await expectError(
        server,
        'POST',
        '/v1/chat/completions',
        { messages: [{ role: 'user', content: 'Hi' }] },
        { ...unauthorized, headers: { Authorization: 'Bearer secre' } },
      );
      await expectError(server, 'GET', '/v1/models', undefined, unauthorized);
    });

    it('the right key works, through the official client too', async () => {
      const r = await post(server, '/v1/completions', body, { headers: { Authorization: 'Bearer secret' } });
      assert.equal(r.status, 200, r.text);
      const client = clientFor(server, 'secret');
      const chat = await client.chat.completions.create({
        model: MODEL_NAME,
        messages: [{ role: 'user', content: 'Hi' }],
        max_tokens: 2,
        temperature: 0,
      });
      assert.equal(chat.usage.completion_tokens, 2);
      assert.equal(chat.model, 'wgx-test', '--name in replies');
      const models = await client.models.list();
      assert.deepEqual(
        models.data.map((m) => m.id),
        ['wgx-test'],
        '--name in /v1/models',
      );
      await assert.rejects(
        clientFor(server, 'wrong').completions.create({ model: MODEL_NAME, prompt: 'Hi', max_tokens: 1 }),
        (e) => {
          assert.ok(e instanceof OpenAI.AuthenticationError, `got ${e?.constructor?.name}: ${e?.message}`);
          assert.equal(e.status, 401);
          return true;
        },
      );
    });

    it('/health, /live and OPTIONS need no key', async () => {
      assert.equal((await get(server, '/health')).status, 200);
      assert.equal((await get(server, '/live')).status, 200);
      const res = await fetch(server.url('/v1/completions'), {
        method: 'OPTIONS',
        headers: { Origin: 'http://app.example', 'Access-Control-Request-Method': 'POST' },
      });
      assert.equal(res.status, 204);
    });

    it('--cors ORIGIN sends that origin, on 401s too', async () => {
      const r = await post(server, '/v1/completions', body, { headers: { Origin: 'http://app.example' } });
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('access-control-allow-origin'), 'http://app.example');
      const ok = await get(server, '/health', { headers: { Origin: 'http://app.example' } });
      assert.equal(ok.headers.get('access-control-allow-origin'), 'http://app.example');
    });
  },
);

describe('wgx serve --queue 1', { timeout: 10 * MINUTE }, () => {
  let server;
  before(
    async () => {
      server = await startServer(['--queue', '1']);
    },
    { timeout: 3 * MINUTE },
  );
  beforeEach(() => assertAlive(server));
  after(async () => {
    const exit = await stopServer(server);
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `the server's exit after SIGTERM: ${server?.describe()}`,
    );
  });

  it('one running, one waiting: the next gets 429 queue_full with Retry-After', async () => {
    // The running one: a long stream, read until its first chunk.
    const running = new AbortController();
    const res = await fetch(server.url('/v1/completions'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      signal: running.signal,
      body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 300, temperature: 0, stream: true }),
    });
    assert.equal(res.status, 200);
    const events = sseEvents(res);
    assert.notEqual((await events.next()).value, '[DONE]');
    // The waiting one (its answer comes once the running one ends).
    const waiting = generate(server, 'chat', 'Hello', {
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    waiting.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    let queued = 0;
    for (let i = 0; i < 100 && queued !== 1; i++) {
      queued = (await metrics(server)).get('wgx_queue_length');
      if (queued !== 1) await sleep(50);
    }
    assert.equal(queued, 1, 'wgx_queue_length with one request waiting');
    const r = await expectError(
      server,
      'POST',
      '/v1/completions',
      { prompt: 'Hi', max_tokens: 1 },
      { status: 429, code: 'queue_full', type: 'rate_limit_error' },
    );
    const retry = r.headers.get('retry-after');
    assert.match(retry ?? '', /^\d+$/, `Retry-After: ${retry}`);
    running.abort();
    await events.return().catch(() => {});
    const w = await waiting;
    assert.equal(w.usage?.completion_tokens, 4, `the waiting request: ${JSON.stringify(w)}`);
    assert.equal(w.finish_reason, 'length', `the waiting request: ${JSON.stringify(w)}`);
    const after = await generate(server, 'completion', 'Hi', { max_tokens: 1 });
    assert.equal(after.finish_reason, 'length');
  });
});

describe('wgx serve: SIGTERM drains', { timeout: 10 * MINUTE }, () => {
  let server;
  before(
    async () => {
      server = await startServer([]);
    },
    { timeout: 3 * MINUTE },
  );
  after(async () => {
    await stopServer(server, 5_000);
  });

  it('the running and queued requests complete, new ones get 503, exit 0 after "wgx serve: stopped"', async () => {
    const res = await fetch(server.url('/v1/chat/completions'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: 'Tell me a long story.' }],
        max_tokens: 200,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    assert.equal(res.status, 200);
    const events = sseEvents(res);
    const first = await events.next();
    assert.ok(!first.done && first.value !== '[DONE]', 'no first chunk');
    const queued = generate(server, 'completion', 'Hi', { max_tokens: 4 });
    queued.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    let waiting = 0;
    for (let i = 0; i < 100 && waiting !== 1; i++) {
      waiting = (await metrics(server)).get('wgx_queue_length');
      if (waiting !== 1) await sleep(50);
    }
    assert.equal(waiting, 1, 'wgx_queue_length with one request waiting');
    server.child.kill('SIGTERM');
    await sleep(300);

    // New requests during the drain: 503 unavailable, or refused when the socket is closed already.
    let during;
    try {
      during = await post(server, '/v1/completions', { prompt: 'Hi', max_tokens: 1 });
    } catch (e) {
      during = { error: e };
    }
    if (!during.error) {
      assert.equal(during.status, 503, `a request while draining: ${during.status} ${during.text}`);
      assert.equal(during.json?.error?.code, 'unavailable', during.text);
      let health, live;
      try {
        health = await get(server, '/health');
        live = await get(server, '/live');
      } catch {
        /* closed meanwhile */
      }
      if (health) {
        assert.equal(health.status, 503, `/health while draining: ${health.text}`);
        assert.deepEqual(health.json, { status: 'draining' });
      }
      if (live) assert.equal(live.status, 200, `/live while draining: ${live.text}`);
    }

    let finish = null,
      usage = null,
      done = false,
      text = '';
    for await (const ev of events) {
      if (ev === '[DONE]') {
        done = true;
        continue;
      }
      assert.ok(!ev.error, `an error event while draining: ${JSON.stringify(ev)}`);
      if (ev.usage) usage = ev.usage;
      const c = ev.choices?.[0];
      if (c?.delta?.content) text += c.delta.content;
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.ok(done, 'the stream ended without [DONE]');
    assert.ok(finish === 'length' || finish === 'stop', `finish_reason ${finish}`);
    if (finish === 'length') assert.equal(usage?.completion_tokens, 200, `usage ${JSON.stringify(usage)}`);
    assert.ok(text.length > 0);
    const q = await queued;
    assert.equal(q.usage.completion_tokens, 4, `the request queued before SIGTERM: ${JSON.stringify(q)}`);

    const timer = setTimeout(() => server.child.kill('SIGKILL'), 60_000);
    const exit = await server.exited;
    clearTimeout(timer);
    assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM: ${server.describe()}`);
    assert.match(server.stderr, /^wgx serve: stopped/m, `stderr: ${server.tail()}`);
  });
});
