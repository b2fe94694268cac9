// wgx for the web: load a .wgx model onto the GPU through WebGPU and generate text, in a page or
// under Node.js. The engine is the same C++ as the native wgx, compiled to WebAssembly (wgx.wasm,
// loaded by wgx.mjs); this file is its JavaScript API, over the C API (include/wgx/wgx.h).
//
//   import * as wgx from './wgx.js';
//   const model = await wgx.load('demo.wgx', {onProgress: (p) => console.log(p.stage, p.fraction)});
//   for await (const piece of model.generate('The meaning of life is', {maxTokens: 40})) out += piece;
//   model.dispose();
//
// Calls on one model run one at a time, in order. wgx.d.ts documents every option.

import createWgxCore from './wgx.mjs';

const STATUS = ['ok', 'bad argument', 'invalid model', 'context full', 'out of memory', 'device lost',
  'no adapter', 'internal'];

/** A failed call: `kind` is one of STATUS (e.g. 'invalid model'), `message` says what and why. */
export class WgxError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'WgxError';
    this.kind = kind;
  }
}

// The wasm32 layouts of the C API structs (web/api_abi.cpp asserts them).
const GEN = {size: 56, maxTokens: 0, temperature: 8, topK: 12, topP: 16, minP: 20, repetitionPenalty: 24,
  seed: 32, hasSeed: 40, stop: 44, stopCount: 48, ignoreEos: 52};
const RESULT = {size: 48, promptTokens: 0, generatedTokens: 8, prefill: 16, decode: 24, seed: 32, stopReason: 40};
const LOAD = {size: 24, weights: 0, kv: 4, context: 8, onProgress: 16, user: 20};
const ENGINE = {size: 16, adapter: 0, toggles: 4, options: 8, quiet: 12};
const SESSION = {size: 8, systemPrompt: 0, noThinking: 4};

const isNode = typeof process === 'object' && process.versions && process.versions.node;

// The compiled wasm, shared by every model of this page (each model gets its own instance).
let compiled = null;
async function compileCore(options) {
  if (!compiled) {
    compiled = (async () => {
      const url = options.wasmUrl || new URL('./wgx.wasm', import.meta.url);
      if (isNode && String(url).startsWith('file:')) {
        const {readFile} = await import('node:fs/promises');
        return WebAssembly.compile(await readFile(new URL(url)));
      }
      if (WebAssembly.compileStreaming) {
        try {
          return await WebAssembly.compileStreaming(fetch(url));
        } catch (e) {
          // A server without the application/wasm type: compile from the bytes instead.
        }
      }
      const response = await fetch(url);
      if (!response.ok) throw new WgxError('invalid model', `wgx.wasm: HTTP ${response.status} from ${url}`);
      return WebAssembly.compile(await response.arrayBuffer());
    })();
    compiled.catch(() => { compiled = null; });
  }
  return compiled;
}

function gpuOf(options) {
  if (options.gpu) return options.gpu;
  if (typeof navigator !== 'undefined' && navigator.gpu) return navigator.gpu;
  throw new WgxError('no adapter', isNode
    ? 'no WebGPU: under Node.js pass {gpu}, e.g. create([]) from the `webgpu` package'
    : 'this browser has no WebGPU (navigator.gpu is missing): use a browser with WebGPU enabled, over https or localhost');
}

async function instantiate(options) {
  const gpu = gpuOf(options);
  const module = await compileCore(options);
  const log = options.log || ((text) => console.warn(text));
  let fail;
  const failed = new Promise((resolve, reject) => { fail = reject; });
  const core = createWgxCore({
    gpu,
    maxStorageBufferBindingSize: options.maxStorageBufferBindingSize,
    print: log,
    printErr: log,
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(module, imports).then((instance) => done(instance, module), (e) => {
        fail(new WgxError('internal', `wgx.wasm could not be instantiated (wgx.mjs and wgx.wasm from different builds?): ${e.message}`));
      });
      return {};
    },
  });
  return Promise.race([core, failed]);
}

// ---- Small helpers over one core instance -------------------------------------------------------
class Core {
  constructor(m) {
    this.m = m;
    this.queue = Promise.resolve();
    this.allocs = [];
  }
  // Runs `fn` after every call queued before it; the result is its promise.
  serial(fn) {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }
  cstr(text) {
    if (text === undefined || text === null) return 0;
    const n = this.m.lengthBytesUTF8(text) + 1;
    const p = this.m._malloc(n);
    this.m.stringToUTF8(text, p, n);
    this.allocs.push(p);
    return p;
  }
  alloc(bytes) {
    const p = this.m._malloc(bytes);
    this.m.HEAPU8.fill(0, p, p + bytes);
    this.allocs.push(p);
    return p;
  }
  freeAll() {
    for (const p of this.allocs) this.m._free(p);
    this.allocs = [];
  }
  u32(p) { return this.m.HEAPU32[p >> 2]; }
  i64(p) { return this.m.HEAPU32[p >> 2] + this.m.HEAP32[(p + 4) >> 2] * 4294967296; }
  f64(p) { return this.m.HEAPF64[p >> 3]; }
  setU32(p, v) { this.m.HEAPU32[p >> 2] = v >>> 0; }
  setI64(p, v) {
    this.m.HEAPU32[p >> 2] = v % 4294967296;
    this.m.HEAP32[(p + 4) >> 2] = Math.floor(v / 4294967296);
  }
  setF32(p, v) { this.m.HEAPF32[p >> 2] = v; }
  text(p, n) { return new TextDecoder().decode(this.m.HEAPU8.slice(p, p + n)); }
  // Throws a WgxError for a failed status.
  check(status) {
    if (status === 0) return;
    const message = this.m.UTF8ToString(this.m._wgx_last_error());
    throw new WgxError(STATUS[status] || 'internal', message);
  }
  async call(name, args) {
    const types = args.map(() => 'number');
    return this.m.ccall(name, 'number', types, args, {async: true});
  }
}

const CACHE_NAME = 'wgx-models';

/**
 * Loads a .wgx model (made by `wgx convert`) from a URL, a Response, or bytes, onto the GPU. The
 * bytes stream into the engine as they arrive: the program is built (its kernels compile) as soon
 * as the graph is in, and each weight goes to the GPU as it comes.
 * @returns {Promise<Model>}
 */
export async function load(source, options = {}) {
  const onProgress = options.onProgress || (() => {});
  const started = performance.now();
  const report = (stage, extra = {}) =>
    onProgress({stage, ...extra, seconds: (performance.now() - started) / 1000});
  report('starting', {fraction: 0});
  const m = await instantiate(options);
  const core = new Core(m);
  const name = typeof source === 'string' || source instanceof URL ? String(source)
    : source instanceof Request ? source.url : 'model.wgx';
  return core.serial(async () => {
    let engine = 0;
    let stream = 0;
    let progress = 0;
    try {
      const eo = core.alloc(ENGINE.size);
      core.setU32(eo + ENGINE.adapter, core.cstr(options.adapter || 'auto'));
      core.setU32(eo + ENGINE.options, core.cstr(options.runtimeOptions));
      core.setU32(eo + ENGINE.quiet, 1);
      const out = core.alloc(4);
      core.check(await core.call('wgx_engine_create', [eo, out]));
      engine = core.u32(out);
      const lo = core.alloc(LOAD.size);
      progress = m.addFunction((stage, step) => {
        const s = m.UTF8ToString(stage);
        if (s === 'building' || s === 'weights') report(s, {detail: m.UTF8ToString(step)});
      }, 'viidi');
      core.setU32(lo + LOAD.onProgress, progress);
      core.check(await core.call('wgx_model_stream_begin', [engine, lo, core.cstr(name), out]));
      stream = core.u32(out);
      const {reader, total, cached, stored} = await open(source, options);
      const stage = cached ? 'cache' : 'download';
      let bytes = 0;
      let staging = 0;
      let stagingSize = 0;
      for (;;) {
        if (options.signal?.aborted) {
          reader.cancel().catch(() => {});
          throw new WgxError('bad argument', `${name}: the load was aborted`);
        }
        const {done, value} = await reader.read();
        if (done) break;
        if (value.byteLength > stagingSize) {
          if (staging) m._free(staging);
          stagingSize = Math.max(value.byteLength, 1 << 20);
          staging = m._malloc(stagingSize);
        }
        m.HEAPU8.set(value, staging);
        bytes += value.byteLength;
        try {
          core.check(await core.call('wgx_model_stream_write', [stream, staging, value.byteLength]));
        } catch (e) {
          reader.cancel().catch(() => {});
          throw e;
        }
        const size = Number(m._wgx_model_stream_size(stream)) || total;
        report(stage, {bytes, totalBytes: size || undefined, fraction: size ? bytes / size : undefined});
      }
      if (staging) m._free(staging);
      core.check(await core.call('wgx_model_stream_finish', [stream, out]));
      const model = new Model(core, engine, core.u32(out));
      engine = 0;
      if (stored) await stored.catch(() => {});  // the cache's copy: not needed to run
      report('ready', {fraction: 1});
      return model;
    } finally {
      if (stream) m._wgx_model_stream_destroy(stream);
      if (engine) m._wgx_engine_destroy(engine);
      if (progress) m.removeFunction(progress);
      core.freeAll();
    }
  });
}

// A reader of the model's bytes, from the cache where it holds them, else from the network
// (copied into the cache on the way where `cache` allows).
async function open(source, options) {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    const bytes = source instanceof Uint8Array ? source : new Uint8Array(source);
    return {reader: new Blob([bytes]).stream().getReader(), total: bytes.byteLength, cached: false};
  }
  if (source instanceof Response) return fromResponse(source, String(source.url || 'the response'));
  const url = source instanceof Request ? source.url : new URL(String(source), globalThis.location?.href).href;
  const useCache = options.cache !== false && typeof caches !== 'undefined' && /^https?:/.test(url);
  let cache = null;
  if (useCache) {
    try {
      cache = await caches.open(CACHE_NAME);
      const hit = await cache.match(url);
      if (hit) return {...fromResponse(hit, url), cached: true};
    } catch (e) {
      cache = null;  // no Cache Storage here (an opaque origin): download every time
    }
  }
  let response;
  try {
    response = await fetch(source instanceof Request ? source : url);
  } catch (e) {
    throw new WgxError('invalid model', `${url}: the download failed (${e.message})`);
  }
  if (!response.ok || !response.body) {
    throw new WgxError('invalid model', `${url}: HTTP ${response.status} ${response.statusText}`);
  }
  if (!cache) return fromResponse(response, url);
  const [mine, kept] = response.body.tee();
  const stored = cache.put(url, new Response(kept, {headers: response.headers}));
  return {...fromResponse(new Response(mine, {headers: response.headers}), url), stored};
}

function fromResponse(response, url) {
  if (!response.body) throw new WgxError('invalid model', `${url}: the response has no body`);
  const total = Number(response.headers.get('content-length')) || 0;
  return {reader: response.body.getReader(), total, cached: false};
}

/** A model on the GPU, with one conversation (session) of its own. */
export class Model {
  constructor(core, engine, handle) {
    this.core = core;
    this.engine = engine;
    this.handle = handle;
    this.session = 0;
    this.cancelled = false;
    const m = core.m;
    this.adapter = m.UTF8ToString(m._wgx_engine_adapter_name(engine));
    this.description = m.UTF8ToString(m._wgx_model_description(handle));
    this.memoryBytes = Number(m._wgx_model_memory(handle));
    this.context = Number(m._wgx_model_context(handle));
    this.vocabSize = Number(m._wgx_model_vocab_size(handle));
  }

  /** Streams the continuation of `prompt` as pieces of text. */
  generate(prompt, options = {}) { return this.stream('wgx_session_generate', prompt, options); }
  /** Streams the reply to a user message, in the model's chat template, after the conversation so far. */
  chat(message, options = {}) { return this.stream('wgx_session_chat', message, options); }
  /** Ends the generation running now after its next token. */
  cancel() { this.cancelled = true; }
  /** Forgets the conversation. */
  reset() {
    return this.core.serial(async () => {
      if (this.session) this.core.check(this.core.m._wgx_session_reset(this.session));
    });
  }
  /** Token ids of `text`, as Hugging Face's tokenizer(text). */
  tokenize(text, {addSpecial = true} = {}) {
    return this.core.serial(async () => {
      const core = this.core;
      try {
        const countOut = core.alloc(4);
        const t = core.cstr(text);
        core.check(core.m._wgx_tokenize(this.handle, t, addSpecial ? 1 : 0, 0, 0, countOut));
        const n = core.u32(countOut);
        const ids = core.alloc(4 * Math.max(n, 1));
        core.check(core.m._wgx_tokenize(this.handle, t, addSpecial ? 1 : 0, ids, n, countOut));
        return Array.from(core.m.HEAP32.subarray(ids >> 2, (ids >> 2) + n));
      } finally {
        core.freeAll();
      }
    });
  }
  /** Frees the GPU memory; the model cannot be used afterwards. */
  dispose() {
    return this.core.serial(async () => {
      const m = this.core.m;
      if (this.session) m._wgx_session_destroy(this.session);
      if (this.handle) m._wgx_model_destroy(this.handle);
      if (this.engine) m._wgx_engine_destroy(this.engine);
      this.session = this.handle = this.engine = 0;
    });
  }

  async *stream(fn, text, options) {
    const pieces = [];
    let wake = null;
    let finished = false;
    let failure = null;
    const notify = () => { if (wake) { wake(); wake = null; } };
    this.cancelled = false;
    const run = this.core.serial(() => this.run(fn, text, options, (piece) => { pieces.push(piece); notify(); }));
    run.then((result) => { this.last = result; }, (e) => { failure = e; })
      .finally(() => { finished = true; notify(); });
    try {
      for (;;) {
        if (pieces.length) {
          yield pieces.shift();
        } else if (finished) {
          break;
        } else {
          await new Promise((resolve) => { wake = resolve; });
        }
      }
      if (failure) throw failure;
    } finally {
      if (!finished) this.cancel();  // the consumer stopped early
    }
  }

  async run(fn, text, options, emit) {
    const core = this.core;
    const m = core.m;
    if (!this.handle) throw new WgxError('bad argument', 'the model was disposed');
    try {
      if (!this.session) {
        const so = core.alloc(SESSION.size);
        core.setU32(so + SESSION.systemPrompt, core.cstr(options.systemPrompt));
        core.setU32(so + SESSION.noThinking, options.thinking === false ? 1 : 0);
        const out = core.alloc(4);
        core.check(m._wgx_session_create(this.handle, so, out));
        this.session = core.u32(out);
      }
      const g = core.alloc(GEN.size);
      m._wgx_generate_options_default(g);
      if (options.maxTokens !== undefined) core.setI64(g + GEN.maxTokens, options.maxTokens);
      if (options.temperature !== undefined) core.setF32(g + GEN.temperature, options.temperature);
      if (options.topK !== undefined) core.setU32(g + GEN.topK, options.topK);
      if (options.topP !== undefined) core.setF32(g + GEN.topP, options.topP);
      if (options.minP !== undefined) core.setF32(g + GEN.minP, options.minP);
      if (options.repetitionPenalty !== undefined) core.setF32(g + GEN.repetitionPenalty, options.repetitionPenalty);
      if (options.seed !== undefined) {
        core.setI64(g + GEN.seed, options.seed);
        core.setU32(g + GEN.hasSeed, 1);
      }
      if (options.ignoreEos) core.setU32(g + GEN.ignoreEos, 1);
      const stop = options.stop || [];
      if (stop.length) {
        const list = core.alloc(4 * stop.length);
        stop.forEach((s, i) => core.setU32(list + 4 * i, core.cstr(s)));
        core.setU32(g + GEN.stop, list);
        core.setU32(g + GEN.stopCount, stop.length);
      }
      const result = core.alloc(RESULT.size);
      const callback = m.addFunction((ptr, length, token) => {
        if (length) emit(core.text(ptr, length));
        return this.cancelled ? 1 : 0;
      }, 'iiiii');
      try {
        core.check(await core.call(fn, [this.session, core.cstr(text), g, callback, 0, result]));
      } finally {
        m.removeFunction(callback);
      }
      return {
        promptTokens: core.i64(result + RESULT.promptTokens),
        generatedTokens: core.i64(result + RESULT.generatedTokens),
        prefillTokensPerSecond: core.f64(result + RESULT.prefill),
        decodeTokensPerSecond: core.f64(result + RESULT.decode),
        stopReason: m.UTF8ToString(core.u32(result + RESULT.stopReason)),
      };
    } finally {
      core.freeAll();
    }
  }
}
