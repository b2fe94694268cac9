// The demo page in a real browser: serves the web package (build/web/dist, with demo/demo.wgx), opens
// /demo/ in headless Chromium through playwright-core, lets it load the demo model and generate
// greedily, and compares the text with the native engine's (`wgx run --temp 0`). Also times the first
// load cold and again with the browser's caches warm, and checks the messages for a browser without
// WebGPU and for a model URL that fails. Exit code 0 when every check passes.
//
//   node web/test/page.test.mjs [--dist build/web/dist] [--expected FILE] [--artifacts build/web/artifacts]
//
// The expected text: --expected FILE, or WGX_EXPECTED_FILE=FILE, or WGX_EXPECTED=TEXT; without one
// the text is printed but not compared. CHROMIUM=/path/to/chrome picks the browser (default
// /usr/bin/chromium); CHROMIUM_FLAGS adds flags; WGX_PAGE_TIMEOUT_S bounds each page (default 240).

import {mkdir, mkdtemp, readFile, rm, stat} from 'node:fs/promises';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {parseArgs} from 'node:util';
import {chromium} from 'playwright-core';
import {serve} from './serve.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PROMPT = 'The meaning of life is';
const MAX_TOKENS = 20;
const TIMEOUT_MS = Number(process.env.WGX_PAGE_TIMEOUT_S || 240) * 1000;

// WebGPU in headless Chromium without a GPU: SwiftShader's Vulkan, which Chromium ships.
const CHROMIUM_FLAGS = [
  '--enable-unsafe-webgpu',               // WebGPU on Linux, where it is not on by default
  '--enable-features=Vulkan',
  '--use-webgpu-adapter=swiftshader',     // the same adapter on every machine, GPU or not
  ...(process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : []),  // Chromium refuses root otherwise
  ...(process.env.CHROMIUM_FLAGS || '').split(/\s+/).filter(Boolean),
];

const {values: args} = parseArgs({
  options: {
    dist: {type: 'string', default: join(ROOT, 'build/web/dist')},
    expected: {type: 'string', default: process.env.WGX_EXPECTED_FILE},
    artifacts: {type: 'string', default: join(ROOT, 'build/web/artifacts')},
  },
});

let failures = 0;
// Prints `what` as passed or failed; a failure also prints `details` (what the page showed).
function check(ok, what, details = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) {
    failures++;
    if (details) console.log(`       ${details.replaceAll('\n', '\n       ')}`);
  }
  return ok;
}

async function expectedText() {
  if (args.expected) {
    // A file written by `wgx run ... > FILE` ends with the newline wgx run prints after the text.
    return (await readFile(args.expected, 'utf8')).replace(/\n$/, '');
  }
  return process.env.WGX_EXPECTED;
}

// Opens `url` in a new page of `context` and waits until the page says done or error.
async function runPage(context, url, {withoutWebGpu = false} = {}) {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  if (withoutWebGpu) {
    await page.addInitScript(() => { delete Navigator.prototype.gpu; });
  }
  const started = performance.now();
  await page.goto(url);
  let timedOut = false;
  const finished = page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), null,
    {timeout: TIMEOUT_MS, polling: 100}).catch(() => { timedOut = true; });
  // A page error may leave the page waiting for ever: give it a moment to say so, then stop.
  const broken = new Promise((done) => page.once('pageerror', () => setTimeout(done, 3000)));
  await Promise.race([finished, broken]);
  const seen = await page.evaluate(() => ({
    state: document.body.dataset.state,
    output: document.getElementById('output')?.textContent ?? null,
    error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
    errorKind: document.getElementById('error').dataset.kind ?? '',
    loadSeconds: Number(document.body.dataset.loadSeconds),
    loadSource: document.body.dataset.loadSource ?? '',
    status: [...document.querySelectorAll('#status span')].map((s) => s.textContent).filter(Boolean).join(' · '),
    progress: document.getElementById('progress-text').textContent,
    hasWebGpu: 'gpu' in navigator,
  }));
  seen.wallSeconds = (performance.now() - started) / 1000;
  seen.timedOut = timedOut;
  seen.problems = problems;
  return {page, seen};
}

function describe(seen) {
  return [`state ${seen.state}${seen.timedOut ? ' (timed out)' : ''}, ${seen.wallSeconds.toFixed(1)} s`,
    seen.error && `error (${seen.errorKind}): ${seen.error}`,
    seen.progress && `progress: ${seen.progress}`,
    seen.status && `status: ${seen.status}`,
    ...seen.problems].filter(Boolean).join('\n');
}

async function main() {
  const dist = resolve(args.dist);
  try {
    await stat(join(dist, 'demo/index.html'));
    await stat(join(dist, 'demo/demo.wgx'));
  } catch {
    console.error(`${dist} lacks demo/index.html or demo/demo.wgx: build it with scripts/build-web.sh`);
    return 1;
  }
  const expected = await expectedText();
  await mkdir(args.artifacts, {recursive: true});

  const server = await serve(dist);
  const profile = await mkdtemp(join(tmpdir(), 'wgx-page-'));
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  console.log(`serving ${dist} at ${server.url}; ${executablePath} ${CHROMIUM_FLAGS.join(' ')}`);
  // A persistent profile: the second visit finds what the first left in the HTTP cache, the code
  // cache and Cache Storage, as a returning visitor would.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath, args: CHROMIUM_FLAGS, headless: true, viewport: {width: 960, height: 900},
  });
  try {
    const probe = await context.newPage();
    await probe.goto(server.url + 'demo/');  // WebGPU is only in secure contexts (not about:blank)
    const adapter = await probe.evaluate(async () => {
      const a = navigator.gpu && await navigator.gpu.requestAdapter();
      return a ? `${a.info.vendor} ${a.info.architecture} ${a.info.description}`.trim() : null;
    });
    await probe.close();
    if (!check(adapter !== null, `the browser has a WebGPU adapter (${adapter})`)) return 1;

    const query = new URLSearchParams({prompt: PROMPT, maxTokens: MAX_TOKENS, temperature: 0, autorun: 1});
    const url = `${server.url}demo/?${query}`.replaceAll('+', '%20');

    // Cold: a fresh profile downloads and compiles everything.
    const cold = await runPage(context, url);
    const shot = join(args.artifacts, 'demo.png');
    await cold.page.screenshot({path: shot, fullPage: true});
    check(cold.seen.state === 'done', 'the page loads the demo model and generates', describe(cold.seen));
    console.log(`     text: ${JSON.stringify(cold.seen.output)}`);
    if (expected === undefined) {
      console.log('     (no expected text given: --expected FILE, WGX_EXPECTED_FILE or WGX_EXPECTED)');
    } else {
      check(cold.seen.output === expected, 'the text is the native engine\'s',
        `page:   ${JSON.stringify(cold.seen.output)}\nnative: ${JSON.stringify(expected)}`);
    }
    check(cold.seen.problems.length === 0, 'no errors in the page\'s console', cold.seen.problems.join('\n'));
    console.log(`     status: ${cold.seen.status}`);
    console.log(`     screenshot: ${shot}`);
    await cold.page.close();

    // Warm: the same profile again, the model from Cache Storage where the API keeps it.
    const warm = await runPage(context, url);
    check(warm.seen.state === 'done' && warm.seen.output === cold.seen.output,
      'a second visit generates the same text', describe(warm.seen));
    await warm.page.close();
    const seconds = (s) => (Number.isFinite(s) ? s.toFixed(2) : 'n/a');
    console.log(`first-load cold ${seconds(cold.seen.loadSeconds)} s, cached ${seconds(warm.seen.loadSeconds)} s` +
      ` (the model from ${warm.seen.loadSource || '?'} the second time)`);

    // A browser without WebGPU: a clear message, Load off, nothing thrown.
    const bare = await runPage(context, url, {withoutWebGpu: true});
    await bare.page.screenshot({path: join(args.artifacts, 'no-webgpu.png'), fullPage: true});
    const loadDisabled = await bare.page.isDisabled('#load');
    check(!bare.seen.hasWebGpu && bare.seen.state === 'error' && bare.seen.errorKind === 'no webgpu' &&
      /WebGPU/.test(bare.seen.error) && /Chrome/.test(bare.seen.error) && loadDisabled &&
      bare.seen.problems.length === 0, 'without navigator.gpu the page says so', describe(bare.seen));
    console.log(`     message: ${bare.seen.error}`);
    await bare.page.close();

    // A model URL that fails: the message names it.
    const missing = `${server.url}demo/?${new URLSearchParams({model: './missing.wgx', autorun: 1})}`;
    const lost = await runPage(context, missing);
    check(lost.seen.state === 'error' && lost.seen.errorKind === 'invalid model' &&
      lost.seen.error.includes('missing.wgx'), 'a model URL that fails is reported', describe(lost.seen));
    console.log(`     message: ${lost.seen.error}`);
    await lost.page.close();
  } finally {
    await context.close();
    await server.close();
    await rm(profile, {recursive: true, force: true});
  }
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  return failures ? 1 : 0;
}

process.exitCode = await main().catch((e) => {
  console.error(e);
  return 1;
});
