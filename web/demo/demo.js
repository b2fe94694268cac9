// The wgx demo page: load a .wgx model onto the GPU, then stream text from it.
//
// Scriptable through the query string (the page test uses it):
//   ?prompt=TEXT&maxTokens=20&temperature=0&mode=continue|chat&model=URL&autorun=1
// autorun loads the model (the demo one unless `model` names another) and generates at once.
// What a test waits for is in the DOM: body[data-state] is 'done' when a generation has finished
// (#output holds its text) or 'error' (#error says why, data-kind says what); body[data-load-seconds]
// is the time from navigation to the model ready, body[data-load-source] where the file came from.

import * as wgx from '../wgx.js';

const DEMO_MODEL = './demo.wgx';
const HINT = 'Load a model, write the start of a text and press Generate: the model continues it.';

const $ = (id) => document.getElementById(id);
const ui = {
  loadForm: $('load-form'), modelUrl: $('model-url'), load: $('load'),
  progressBox: $('progress-box'), progress: $('progress'), progressText: $('progress-text'),
  log: $('log'), promptForm: $('prompt-form'), prompt: $('prompt'), mode: $('mode'),
  maxTokens: $('max-tokens'), temperature: $('temperature'),
  generate: $('generate'), stop: $('stop'), reset: $('reset'),
  error: $('error'), stats: $('stats'), adapter: $('adapter'), memory: $('memory'), description: $('description'),
};

let model = null;
let adapterInfo = '';  // what navigator.gpu's adapter says of itself, where the model does not

function setState(next) {
  // 'unsupported' (no WebGPU) is an error to a test; the page keeps Load off for it.
  document.body.dataset.state = next === 'unsupported' ? 'error' : next;
  const busy = next === 'loading' || next === 'generating' || next === 'starting';
  const hasModel = model !== null;
  ui.load.disabled = busy || next === 'unsupported';
  ui.generate.disabled = busy || !hasModel;
  ui.reset.disabled = busy || !hasModel;
  ui.stop.disabled = next !== 'generating';
  ui.log.setAttribute('aria-busy', String(next === 'generating'));
}

// ---- Messages ------------------------------------------------------------------------------------

// Flags, settings and addresses in a message, set as code so that they read (and wrap) as one word.
const CODE = /(--[a-z-]+(?:=[\w-]+)?|dom\.webgpu\.enabled|about:config|chrome:\/\/gpu|wgx convert(?: --ctx)?)/;

function showError(kind, message) {
  ui.error.dataset.kind = kind;
  ui.error.replaceChildren(...message.split(CODE).map((part, i) => {
    if (i % 2 === 0) return part;
    const code = document.createElement('code');
    code.textContent = part;
    return code;
  }));
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
  delete ui.error.dataset.kind;
}

function fail(kind, message) {
  showError(kind, message);
  setState('error');
}

const NO_WEBGPU = 'This browser has no WebGPU, which the model needs to run on your GPU. Use a ' +
  'recent Chrome or Edge (113 or newer on Windows, macOS and ChromeOS; on Linux start it with ' +
  '--enable-unsafe-webgpu --enable-features=Vulkan), Firefox 141 or newer on Windows (elsewhere ' +
  'set dom.webgpu.enabled in about:config), or Safari 26.';

function noWebGpuMessage() {
  if (!window.isSecureContext) {
    return `WebGPU is only offered to secure pages, and ${location.origin} is not one: open the page ` +
      'over https, or from localhost / 127.0.0.1.';
  }
  return NO_WEBGPU;
}

// An error's message without its final full stop, to go inside a sentence of the page's.
function reason(error) {
  return String(error && error.message ? error.message : error).replace(/[.\s]+$/, '');
}

// What a failed load means to the person who asked for it.
function loadErrorMessage(error, source) {
  const where = source === DEMO_MODEL ? 'the demo model' : source;
  const why = reason(error);
  switch (error && error.kind) {
    case 'out of memory':
      return `The GPU (${adapterInfo || 'this adapter'}) cannot hold ${where}: ${why}. ` +
        'Try a smaller model, or one converted with a shorter context (wgx convert --ctx).';
    case 'invalid model':
      if (/HTTP \d+/.test(why)) return `Could not load ${where}: ${why}. Check the URL.`;
      if (/download|fetch/i.test(why)) {
        return `Could not download ${where}: ${why}. Check the URL and the network; a file on ` +
          'another site must allow this page to read it (CORS).';
      }
      return `Could not load ${where}: ${why}. Is it a .wgx file made by wgx convert, and whole?`;
    case 'no adapter':
      return `WebGPU gave no GPU adapter: ${why}. ${NO_WEBGPU}`;
    case 'device lost':
      return `The GPU device was lost while loading ${where}: ${why}. Reload the page to try again.`;
    case undefined:
      // fetch() itself failed: no network, a wrong host, or a server that does not allow CORS.
      if (error instanceof TypeError) {
        return `Could not download ${where}: ${why}. Check the URL; a file on another site must ` +
          'allow this page to read it (CORS).';
      }
      return `Could not load ${where}: ${why}`;
    default:
      return `Could not load ${where} (${error.kind}): ${why}`;
  }
}

// ---- Numbers -------------------------------------------------------------------------------------

function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 || value >= 100 ? 0 : 1)} ${units[unit]}`;
}

function formatRate(tokensPerSecond) {
  return Number.isFinite(tokensPerSecond) && tokensPerSecond > 0
    ? `${tokensPerSecond.toFixed(tokensPerSecond >= 100 ? 0 : 1)} tok/s` : '–';
}

function showProgress(p) {
  ui.progressBox.hidden = false;
  if (Number.isFinite(p.fraction)) {
    ui.progress.value = p.fraction;
  } else {
    ui.progress.removeAttribute('value');  // indeterminate
  }
  const parts = [p.stage + (p.detail ? `: ${p.detail}` : '')];
  if (Number.isFinite(p.bytes)) {
    parts.push(Number.isFinite(p.totalBytes)
      ? `${formatBytes(p.bytes)} of ${formatBytes(p.totalBytes)}` : formatBytes(p.bytes));
  }
  if (Number.isFinite(p.fraction) && p.stage !== 'ready') parts.push(`${Math.round(p.fraction * 100)}%`);
  parts.push(`${p.seconds.toFixed(1)} s`);
  ui.progressText.textContent = parts.join(' · ');
}

function showModel(m) {
  ui.adapter.textContent = m.adapter || adapterInfo;
  ui.memory.textContent = Number.isFinite(m.memoryBytes) ? `${formatBytes(m.memoryBytes)} on the GPU` : '';
  ui.description.textContent = m.description || `context ${m.context} tokens, vocabulary ${m.vocabSize}`;
}

function showStats(last) {
  if (!last) {
    ui.stats.textContent = '';
    return;
  }
  ui.stats.textContent = `generated ${last.generatedTokens} tokens at ${formatRate(last.decodeTokensPerSecond)}` +
    ` · prompt ${last.promptTokens} tokens at ${formatRate(last.prefillTokensPerSecond)}` +
    ` · stop: ${last.stopReason}`;
}

// ---- Loading -------------------------------------------------------------------------------------

function chosenSource() {
  const picked = ui.loadForm.elements.source.value;
  return picked === 'url' ? ui.modelUrl.value.trim() : DEMO_MODEL;
}

async function loadModel(source) {
  if (!source) {
    showError('bad argument', 'Type the URL of a .wgx file, or choose the demo model.');
    ui.modelUrl.focus();
    return false;
  }
  clearError();
  if (model) {
    const old = model;
    model = null;
    await old.dispose().catch(() => {});
  }
  setState('loading');
  const started = performance.now();
  for (const span of [ui.stats, ui.adapter, ui.memory, ui.description]) span.textContent = '';
  clearLog(HINT);
  ui.progressBox.hidden = false;
  let from = 'download';
  try {
    model = await wgx.load(source, {
      onProgress(p) {
        if (p.stage === 'cache') from = 'cache';
        showProgress(p);
      },
    });
  } catch (e) {
    model = null;
    ui.progressBox.hidden = true;
    fail(e && e.kind ? e.kind : 'invalid model', loadErrorMessage(e, source));
    return false;
  }
  document.body.dataset.loadSeconds = (performance.now() / 1000).toFixed(3);
  document.body.dataset.loadSource = from;
  ui.progressText.textContent = `ready in ${((performance.now() - started) / 1000).toFixed(1)} s` +
    (from === 'cache' ? ' (from the cache)' : '');
  showModel(model);
  clearLog();
  setState('ready');
  return true;
}

// ---- Generating ----------------------------------------------------------------------------------

function clearLog(hint = '') {
  ui.log.replaceChildren();
  if (hint) {
    const p = document.createElement('p');
    p.className = 'hint';
    p.textContent = hint;
    ui.log.append(p);
  }
}

// A turn of the log: the prompt, then the reply as it streams in. The latest reply is #output.
function addTurn(prompt, mode) {
  const hint = ui.log.querySelector('.hint');
  if (hint) hint.remove();
  const old = $('output');
  if (old) old.removeAttribute('id');
  const turn = document.createElement('div');
  turn.className = `turn ${mode}`;
  const asked = document.createElement('span');
  asked.className = 'prompt';
  asked.textContent = prompt;
  const reply = document.createElement('span');
  reply.className = 'reply';
  reply.id = 'output';
  turn.append(asked, reply);
  ui.log.append(turn);
  return reply;
}

function numberOf(input, fallback) {
  const value = Number(input.value);
  return input.value !== '' && Number.isFinite(value) ? value : fallback;
}

async function generate() {
  const prompt = ui.prompt.value;
  // An empty prompt goes on with the text so far; a conversation needs a message.
  if (!model || (!prompt && (ui.mode.value === 'chat' || !$('output')))) return;
  clearError();
  const mode = ui.mode.value;
  const options = {
    maxTokens: Math.max(1, Math.round(numberOf(ui.maxTokens, 100))),
    temperature: Math.max(0, numberOf(ui.temperature, 0.8)),
  };
  const reply = addTurn(prompt, mode);
  reply.dataset.state = 'generating';
  ui.prompt.value = '';
  ui.prompt.placeholder = mode === 'chat' ? 'Your next message' : 'More text to add, or press Generate to go on';
  setState('generating');
  ui.stats.textContent = 'generating…';
  try {
    const pieces = mode === 'chat' ? model.chat(prompt, options) : model.generate(prompt, options);
    for await (const piece of pieces) {
      reply.append(piece);
      ui.log.scrollTop = ui.log.scrollHeight;
    }
    showStats(model.last);
    reply.dataset.state = 'done';
    setState('done');
  } catch (e) {
    reply.dataset.state = 'error';
    ui.stats.textContent = '';
    if (!reply.textContent) ui.prompt.value = prompt;  // to try again
    const kind = e && e.kind ? e.kind : 'internal';
    const hint = {
      'context full': ' The text fills the model\'s context: press "Start over" to begin a new one.',
      'device lost': ' The GPU was lost: reload the page to start again.',
    }[kind] || '';
    fail(kind, `Generation failed: ${reason(e)}.${hint}`);
  }
  ui.prompt.focus();
}

async function startOver() {
  if (!model) return;
  await model.reset();
  clearLog('A new text: write its start and press Generate.');
  ui.stats.textContent = '';
  clearError();
  setState('ready');
  ui.prompt.focus();
}

// ---- Wiring --------------------------------------------------------------------------------------

function applyQuery(params) {
  if (params.has('prompt')) ui.prompt.value = params.get('prompt');
  if (params.has('maxTokens')) ui.maxTokens.value = params.get('maxTokens');
  if (params.has('temperature')) ui.temperature.value = params.get('temperature');
  if (['continue', 'chat'].includes(params.get('mode'))) ui.mode.value = params.get('mode');
  if (params.get('model')) {
    ui.loadForm.elements.source.value = 'url';
    ui.modelUrl.value = params.get('model');
  }
}

// True when the page can run a model; otherwise says why and leaves the page without Load.
async function checkWebGpu() {
  if (!navigator.gpu) {
    showError('no webgpu', noWebGpuMessage());
    setState('unsupported');
    return false;
  }
  let adapter = null;
  try {
    adapter = await navigator.gpu.requestAdapter();
  } catch (e) {
    adapter = null;
  }
  if (adapter) {
    const info = adapter.info || {};
    adapterInfo = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ');
  } else {
    showError('no adapter', 'WebGPU is here but offers no GPU adapter (the GPU may be blocked or ' +
      `its driver too old; chrome://gpu says more). ${NO_WEBGPU}`);
    setState('unsupported');
  }
  return adapter !== null;
}

function wire() {
  // An error nothing caught while the page waits on the engine would otherwise leave it waiting.
  const unexpected = (error) => {
    if (['loading', 'generating', 'starting'].includes(document.body.dataset.state)) {
      ui.progressBox.hidden = true;
      fail('internal', `Something went wrong inside the page: ${reason(error)}. The browser's console may say more.`);
    }
  };
  window.addEventListener('error', (event) => unexpected(event.error || event.message));
  window.addEventListener('unhandledrejection', (event) => unexpected(event.reason));
  ui.loadForm.addEventListener('submit', (event) => {
    event.preventDefault();
    loadModel(chosenSource());
  });
  ui.modelUrl.addEventListener('input', () => { ui.loadForm.elements.source.value = 'url'; });
  ui.promptForm.addEventListener('submit', (event) => {
    event.preventDefault();
    generate();
  });
  // Enter generates, Shift+Enter starts a new line.
  ui.prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (!ui.generate.disabled) generate();
    }
  });
  ui.stop.addEventListener('click', () => { if (model) model.cancel(); });
  ui.reset.addEventListener('click', () => { startOver(); });
}

async function main() {
  const params = new URLSearchParams(location.search);
  applyQuery(params);
  wire();
  if (!(await checkWebGpu())) return;
  clearLog(HINT);
  setState('idle');
  if (params.get('autorun') === '1' && await loadModel(chosenSource())) await generate();
}

main();
