// wgx for the web: the JavaScript API (wgx.js) over the engine compiled to WebAssembly.

/** What a failed call reports: `kind` says what went wrong, `message` what and why. */
export declare class WgxError extends Error {
  readonly kind:
    | 'bad argument'
    | 'invalid model'
    | 'context full'
    | 'out of memory'
    | 'device lost'
    | 'no adapter'
    | 'internal';
}

export interface LoadProgress {
  /** 'starting', 'download' (or 'cache' when the file comes from the cache), 'building', 'ready', ... */
  stage: string;
  /** 0 to 1 where it is known. */
  fraction?: number;
  /** Bytes of the file read so far, and in all (where the server says). */
  bytes?: number;
  totalBytes?: number;
  /** What the stage is doing now (e.g. a kernel's or a layer's name). */
  detail?: string;
  /** Since load() began. */
  seconds: number;
}

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** The WebGPU entry point: navigator.gpu by default; under Node.js, create([]) of the `webgpu` package. */
  gpu?: GPU;
  /** Keep the downloaded file in Cache Storage ("wgx-models") for the next visit (default true where it exists). */
  cache?: boolean;
  /** Ask the device for at most this maxStorageBufferBindingSize (bytes), as a smaller GPU would offer. */
  maxStorageBufferBindingSize?: number;
  /** wgx runtime options, "name=value,name=value" (`wgx options` lists them). */
  runtimeOptions?: string;
  /** Where wgx.wasm is (default: beside wgx.js). */
  wasmUrl?: string | URL;
  /** Aborts the load (between pieces of the download): load() then rejects. */
  signal?: AbortSignal;
  /** Where the engine's own messages go (default console.warn). */
  log?: (line: string) => void;
}

export interface GenerateOptions {
  /** Tokens to generate at most (default 256). */
  maxTokens?: number;
  /** 0: greedy (default 0.8). */
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repetitionPenalty?: number;
  /** A fixed seed makes sampling repeatable. */
  seed?: number;
  /** Generation ends before any of these strings. */
  stop?: string[];
  ignoreEos?: boolean;
  /** chat(): the system message of a new conversation. */
  systemPrompt?: string;
  /** chat() with Qwen3: false answers without thinking first. */
  thinking?: boolean;
}

export interface GenerateResult {
  promptTokens: number;
  generatedTokens: number;
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  /** 'eos', 'stop string', 'max tokens' or 'cancelled'. */
  stopReason: string;
}

/** A model on the GPU with one conversation. Calls run one at a time, in order. */
export declare class Model {
  /** The adapter's name. */
  readonly adapter: string;
  /** "Llama, q4 weights, f16 KV cache, context 1024". */
  readonly description: string;
  /** GPU memory the model holds, in bytes. */
  readonly memoryBytes: number;
  /** The context length and the vocabulary size, in tokens. */
  readonly context: number;
  readonly vocabSize: number;
  /** The numbers of the last generation. */
  readonly last?: GenerateResult;
  /** Continues the conversation with `prompt` as text; yields the text as it is generated. */
  generate(prompt: string, options?: GenerateOptions): AsyncIterableIterator<string>;
  /** A user message in the model's chat template, after the conversation so far. */
  chat(message: string, options?: GenerateOptions): AsyncIterableIterator<string>;
  /** Ends the generation running now after its next token. */
  cancel(): void;
  /** Forgets the conversation. */
  reset(): Promise<void>;
  /** Token ids of `text`, as Hugging Face's tokenizer(text) (addSpecial false: add_special_tokens=False). */
  tokenize(text: string, options?: {addSpecial?: boolean}): Promise<number[]>;
  /** Frees the GPU memory; the model cannot be used afterwards. */
  dispose(): Promise<void>;
}

/** Loads a .wgx model (made by `wgx convert`) from a URL, a Response or bytes onto the GPU. */
export declare function load(
  source: string | URL | Request | Response | ArrayBuffer | Uint8Array,
  options?: LoadOptions,
): Promise<Model>;
