// wgx serve --parallel (continuous batching) on the demo model: greedy requests sent together,
// which share the server's steps, answer exactly what they answer one at a time; a chat's next
// turn is fed only past the conversation its slot kept; the official client streams through it; a streaming client that leaves stops its sequence; SIGTERM drains.
// (Each batched step on SwiftShader computes whole 64-row tiles: token counts stay small.)
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.resolve(root, process.env.WGX_BIN || 'build/release/bin/wgx');
const MINUTE = 60_000;

function start(args) {
  const child = spawn(bin, ['serve', '--model', path.join(root, 'models/demo'), '--port', '0', ...args],
                      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const server = { child, stderr: '', exit: null };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { server.stderr += d; });
  server.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    server.exit = { code, signal };
    resolve(server.exit);
  }));
  return server;
}

async function ready(server) {
  const deadline = Date.now() + 3 * MINUTE;
  for (;;) {
    if (server.exit) throw new Error(`wgx serve exited: ${server.stderr}`);
    const m = /listening on (http:\/\/[^\s]+)/.exec(server.stderr);
    if (m) {
      server.url = m[1];
      const ok = await fetch(`${server.url}/health`).then((r) => r.ok, () => false);
      if (ok) return;
    }
    if (Date.now() > deadline) throw new Error(`wgx serve not ready: ${server.stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function complete(server, prompt, extra = {}) {
  const res = await fetch(`${server.url}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: 6, temperature: 0, ...extra }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

async function metric(server, pattern) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(pattern));
  assert.ok(line, `/metrics has no ${pattern}`);
  return Number(line.split(' ').at(-1));
}

describe('wgx serve --parallel 4', { timeout: 20 * MINUTE }, () => {
  let server;
  before(async () => {
    server = start(['--parallel', '4', '--ctx', '128']);
    await ready(server);
  });
  after(async () => {
    if (server && !server.exit) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });

  const prompts = ['The meaning of life is', 'You will meet', 'A friend in need', 'Computers are'];

  it('greedy requests sent together answer what they answer one at a time', async () => {
    const together = await Promise.all(prompts.map((p) => complete(server, p)));
    for (const [i, p] of prompts.entries()) {
      const alone = await complete(server, p);
      assert.equal(together[i].choices[0].text, alone.choices[0].text, `"${p}" beside others`);
      assert.equal(together[i].usage.completion_tokens, 6);
      assert.equal(together[i].choices[0].finish_reason, 'length');
    }
    assert.notEqual(together[0].choices[0].text, together[1].choices[0].text, 'different prompts, one answer');
  });

  it("a chat's next turn is fed only past the conversation its slot kept", async () => {
    const chat = async (messages) => {
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages, max_tokens: 6, temperature: 0 }),
      });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      return body;
    };
    const turn1 = [{ role: 'user', content: 'Tell me about the sea.' }];
    const first = await chat(turn1);
    const turn2 = [...turn1, { role: 'assistant', content: first.choices[0].message.content },
                   { role: 'user', content: 'And the mountains?' }];
    const second = await chat(turn2);
    const cached = second.usage.prompt_tokens_details.cached_tokens;
    assert.ok(cached >= first.usage.prompt_tokens && cached < second.usage.prompt_tokens,
              `the second turn's usage: ${JSON.stringify(second.usage)} (the first's: ${JSON.stringify(first.usage)})`);
    // The same conversation again: the same reply (kept rows are the bits a cold prompt computes).
    const again = await chat(turn2);
    assert.equal(again.choices[0].message.content, second.choices[0].message.content);
    assert.ok(again.usage.prompt_tokens_details.cached_tokens > cached, JSON.stringify(again.usage));
  });

  it('streams chat through the official client', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const stream = await client.chat.completions.create({
      model: 'demo', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 6, temperature: 0, stream: true,
    });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const whole = await client.chat.completions.create({
      model: 'demo', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 6, temperature: 0,
    });
    assert.equal(text, whole.choices[0].message.content);
    assert.ok(finish === 'length' || finish === 'stop', `finish_reason ${finish}`);
  });

  it('a streaming client that leaves stops its sequence', async () => {
    const cancelled = await metric(server, 'wgx_requests_total{endpoint="completions",outcome="cancelled"}');
    const before = await metric(server, 'wgx_generated_tokens_total');
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: 'Once', max_tokens: 100, temperature: 0, stream: true, ignore_eos: true }),
      signal: controller.signal,
    });
    const reader = res.body.getReader();
    await reader.read();
    controller.abort();
    const deadline = Date.now() + 2 * MINUTE;
    while ((await metric(server, 'wgx_requests_total{endpoint="completions",outcome="cancelled"}')) === cancelled) {
      assert.ok(Date.now() < deadline, 'the abandoned stream was never counted as cancelled');
      await new Promise((r) => setTimeout(r, 200));
    }
    const generated = (await metric(server, 'wgx_generated_tokens_total')) - before;
    assert.equal(await metric(server, 'wgx_requests_running'), 0);
    // It stopped early: fewer than its 100 tokens were generated.
    assert.ok(generated >= 1 && generated < 100, `the abandoned stream generated ${generated} tokens`);
  });

  it('SIGTERM lets a running stream finish, then exits 0', async () => {
    const res = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: 'Once', max_tokens: 8, temperature: 0, stream: true, ignore_eos: true }),
    });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let body = decoder.decode((await reader.read()).value);
    server.child.kill('SIGTERM');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      body += decoder.decode(value);
    }
    assert.ok(body.includes('data: [DONE]'), `the stream did not end with [DONE]: ${body.slice(-200)}`);
    assert.ok(body.includes('"finish_reason":"length"'));
    assert.deepEqual(await server.exited, { code: 0, signal: null });
    assert.match(server.stderr, /wgx serve: stopped/);
  });
});
