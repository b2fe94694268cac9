// wgx: run Hugging Face language models on the GPU through WebGPU. The C++ API.
//
//   wgx::Model model = wgx::Model::load("models/demo");
//   wgx::Session session = model.session();
//   session.generate("The meaning of life is", {}, [](std::string_view text, int32_t) {
//     std::cout << text << std::flush;
//     return true;  // false stops the generation
//   });
//
// Everything here is self-contained: no header of wgx's implementation or of WebGPU is included.
// Every failure is a wgx::Error whose kind() says what happened and whose message says what to do.
//
// Threads: an Engine, a Model and a Tokenizer may be used from several threads (a Model runs one
// generation at a time; the others wait). A Session is used by one thread at a time, except
// cancel(), which any thread may call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if defined(_WIN32)
#define WGX_API __declspec(dllexport)
#else
#define WGX_API __attribute__((visibility("default")))
#endif

namespace wgx {

// The library's version, "MAJOR.MINOR.PATCH".
WGX_API const char* version();

// ---- Errors -------------------------------------------------------------------------------------

enum class ErrorKind {
  BadArgument,   // a bad value or option passed to the API: fix the call
  InvalidModel,  // a model file or folder that cannot be used: missing, malformed, unsupported
  ContextFull,   // the prompt and the tokens asked for do not fit the context
  OutOfMemory,   // the GPU could not allocate: a smaller context or weight format may fit
  DeviceLost,    // the GPU device is gone: load the model again with a new Engine
  NoAdapter,     // no usable GPU adapter (or SwiftShader) was found
  Internal,      // a bug in wgx or the WebGPU implementation; the message has the details
};
WGX_API const char* to_string(ErrorKind kind);  // "bad argument", "invalid model", ...

class WGX_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// ---- Runtime options ----------------------------------------------------------------------------

// One runtime option of the registry (`wgx options` prints them all).
struct OptionInfo {
  std::string name;
  std::string type;           // "on/off", "count", "choice"
  std::string default_value;  // "auto" where the adapter or the shape decides
  std::string values;         // the accepted values or range, e.g. "on|off", "1..64"
  std::string doc;            // one line
  bool changes_results = false;  // can change the numbers beyond the kernels' stated tolerances
  bool diagnostic = false;       // for tests and profiling, not a setting to run models with
};
WGX_API std::vector<OptionInfo> options();
// Throws Error(BadArgument) naming every valid option for an unknown name, or the values an
// option takes for a bad value. Engine's constructor makes the same check before any device.
WGX_API void check_options(const std::map<std::string, std::string>& options);

// ---- Engine: the GPU --------------------------------------------------------------------------

struct WGX_API EngineOptions {
  // "auto": a GPU if the Vulkan loader finds one, else SwiftShader on the CPU (said on stderr);
  // "gpu": a GPU or an error; "swiftshader": the CPU; "gles": Dawn's OpenGL ES backend.
  std::string adapter = "auto";
  // Dawn device toggles: "name" turns one on, "-name" off; an item may be a comma-separated list
  // (docs/options.md lists the defaults).
  std::vector<std::string> toggles;
  // Runtime options by name (wgx::options()); an unknown name or a bad value is a BadArgument.
  std::map<std::string, std::string> options;
  // Say on stderr which adapter `Auto` took.
  bool announce = true;

  // The defaults, with WGX_ADAPTER and WGX_TOGGLES applied where set.
  static EngineOptions from_env();
};

struct AdapterInfo {
  std::string name;     // "NVIDIA H200", "SwiftShader Device (Subzero)"
  std::string backend;  // "Vulkan", "OpenGLES"
  std::string type;     // "discrete GPU", "integrated GPU", "CPU", "unknown"
  std::string vendor;
  bool is_cpu = false;
  bool shader_f16 = false;
  bool subgroups = false;
  bool timestamps = false;
  uint64_t max_buffer_size = 0;
  uint64_t max_storage_binding_size = 0;
};

// One GPU device. Copies share it; it lives as long as the last copy or model using it.
class WGX_API Engine {
 public:
  explicit Engine(const EngineOptions& options = EngineOptions::from_env());
  ~Engine();
  Engine(const Engine&);
  Engine& operator=(const Engine&);
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;

  AdapterInfo adapter() const;

  struct Impl;

 private:
  friend class Model;
  friend class ModelStream;
  friend class SpeechModel;
  friend struct Internals;
  std::shared_ptr<Impl> impl_;
};

// ---- Tokenizer ----------------------------------------------------------------------------------

struct EncodeOptions {
  // As Hugging Face's tokenizer(text): the tokenizer's post-processor adds its special tokens
  // (Llama 3's <|begin_of_text|>); false is tokenizer(text, add_special_tokens=False).
  bool add_special_tokens = true;
  // Special tokens written in the text (<|im_end|>) are matched; false treats their text as plain
  // text, for untrusted input.
  bool parse_special = true;
};

// A Hugging Face tokenizer.json byte-level BPE tokenizer (Llama 3, Qwen3). Cheap to copy.
class WGX_API Tokenizer {
 public:
  // A tokenizer.json, a folder holding one (and tokenizer_config.json), or a .wgx file.
  static Tokenizer load(const std::string& path);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const;
  // Bytes that do not form UTF-8 become U+FFFD; ids the tokenizer does not know are skipped.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;
  std::optional<int32_t> token_id(std::string_view token) const;  // "<|im_end|>" -> its id
  std::optional<std::string> token(int32_t id) const;             // the id's token, as the file spells it
  bool is_special(int32_t id) const;
  int32_t vocab_size() const;
  std::optional<int32_t> bos_id() const;  // as tokenizer_config.json names them
  std::optional<int32_t> eos_id() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  friend class Model;
  std::shared_ptr<const Impl> impl_;
};

// ---- Model --------------------------------------------------------------------------------------

enum class WeightFormat { Q4, F16, F32 };  // q4: 4-bit groups of 32 with f16 scales
enum class KvFormat { F16, F32 };

struct LoadProgress {
  std::string stage;  // "reading", "converting", "building", "done"
  // "layer 3/16" (converting); "matrix 37/226" (building: a folder's matrices are converted
  // while the program compiles, and each is written to the GPU as it is ready); "" where none.
  std::string step;
  double seconds = 0;  // since the load began
};

struct LoadOptions {
  // Unset: q4 weights, an f16 KV cache and a context of 4096 tokens (at most the model's
  // max_position_embeddings). A .wgx file has these fixed by `wgx convert`: setting them to other
  // values is a BadArgument.
  std::optional<WeightFormat> weights;
  std::optional<KvFormat> kv;
  std::optional<int64_t> context;
  int64_t max_prefill = 512;  // the most prompt tokens one step feeds (convert fixes it in the file)
  // Sequences a Batch decodes at once, each with a KV cache of `context` tokens of its own (memory
  // grows with it); 0: no Batch. Any value for a .wgx file.
  int64_t parallel = 0;
  // Called as the load goes on (each layer, then each matrix); none by default.
  std::function<void(const LoadProgress&)> on_progress;
};

struct ModelInfo {
  std::string path;
  std::string architecture;   // "llama", "qwen3"
  std::string weights;        // "q4", "f16", "f32"
  std::string kv_cache;       // "f16", "f32"
  std::string chat_template;  // "qwen3", "llama3", or "" for none
  std::string adapter;
  int64_t context = 0;      // tokens a session holds
  int64_t max_prefill = 0;  // prompt tokens one step feeds
  int64_t vocab_size = 0;   // the model's (its embedding rows)
  int64_t layers = 0;
  int64_t parallel = 0;     // sequences a Batch runs at once (LoadOptions::parallel)
  std::vector<int32_t> eos_ids;
  struct Memory {
    uint64_t weights = 0, state = 0, activations = 0, total = 0;  // bytes on the device
  } memory;
  double load_seconds = 0;   // all of Model::load
  double read_seconds = 0;   // of it: reading the files (and converting, with parallel > 0)
  double build_seconds = 0;  // of it: routes, kernels, uploads (and converting the weights meanwhile)
  size_t kernels = 0;        // compute pipelines created
  std::string description;   // "Llama, q4 weights, f16 KV cache, context 4096, <adapter>"
};

struct SessionOptions {
  std::string system_prompt;  // chat: the system message, when not empty
  bool thinking = true;       // chat with Qwen3: false answers without thinking first
};

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class Session;

// A model on the GPU: weights, kernels and the memory its sessions use.
class WGX_API Model {
 public:
  // A Hugging Face folder (config.json, tokenizer.json, *.safetensors of LlamaForCausalLM or
  // Qwen3ForCausalLM) or a .wgx file from convert(). The first form makes an Engine from the
  // environment (EngineOptions::from_env()).
  static Model load(const std::string& path, const LoadOptions& options = {});
  static Model load(const Engine& engine, const std::string& path, const LoadOptions& options = {});
  // Random weights at a real geometry, for benchmarks ("llama-3.2-1b", "qwen3-0.6b", ...): no
  // tokenizer, so its sessions take token ids.
  static Model synthetic(const Engine& engine, const std::string& name, const LoadOptions& options = {},
                         uint64_t seed = 1);
  static std::vector<std::string> synthetic_names();

  ~Model();
  Model(const Model&);
  Model& operator=(const Model&);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // A new conversation. Sessions of one model share its GPU memory: a session whose turn comes
  // after another's feeds its conversation again first (its tokens are kept, not its cache).
  Session session(const SessionOptions& options = {}) const;
  // Throws InvalidModel for a synthetic model.
  Tokenizer tokenizer() const;
  ModelInfo info() const;
  // The chat template's text for `messages`, ending with the assistant's turn opened
  // (InvalidModel when the tokenizer has no chat template).
  std::string render_chat(const std::vector<Message>& messages, bool thinking = true) const;
  // How well the model predicts `tokens`: the natural log of each one's probability given the
  // ones before it (tokens.size() - 1 values, the first token has none), several positions a
  // step (wgx perplexity). Needs a model loaded with LoadOptions::parallel > 0 (its batch
  // program gives several positions' logits a step) and no Batch alive. BadArgument for fewer
  // than 2 tokens or an id outside the vocabulary; ContextFull past the context.
  std::vector<double> log_probs(std::span<const int32_t> tokens) const;

  struct Impl;

 private:
  explicit Model(std::shared_ptr<Impl> impl);
  friend class Session;
  friend class Batch;
  friend class ModelStream;
  friend struct Internals;
  std::shared_ptr<Impl> impl_;
};

// A .wgx file whose bytes arrive in order, as from a download: the program (and its kernels) is
// built as soon as the graph section is in, and each weight goes to the GPU as its bytes come, so
// the file is never held whole in memory.
//
//   wgx::ModelStream stream(engine);
//   while (size_t n = read_some(buffer)) stream.write(buffer, n);
//   wgx::Model model = stream.finish();
class WGX_API ModelStream {
 public:
  explicit ModelStream(const Engine& engine, const LoadOptions& options = {}, std::string name = "stream");
  ~ModelStream();
  ModelStream(ModelStream&&) noexcept;
  ModelStream& operator=(ModelStream&&) noexcept;

  // The next `size` bytes of the file, in any pieces. Throws wgx::Error: InvalidModel for a
  // damaged file or more bytes than it has (the stream is unusable afterwards), or what building
  // the program throws (OutOfMemory, ...).
  void write(const void* data, size_t size);
  // The file's size as its header says (0 until its first 64 bytes are in), and the bytes so far.
  uint64_t size() const;
  uint64_t received() const;
  // After the last byte: the model. InvalidModel when bytes are missing.
  Model finish();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Converts a Hugging Face folder into one .wgx file that loads without converting anything
// (weights, kv, context and max_prefill fixed in it). Needs no GPU. Returns what the file holds
// (the GPU's part of ModelInfo, adapter, memory and kernels, left empty).
WGX_API ModelInfo convert(const std::string& folder, const std::string& output, const LoadOptions& options = {});

// ---- Session ------------------------------------------------------------------------------------

struct WGX_API Sampling {
  float temperature = 0.8f;         // 0: greedy, always the most likely token
  int32_t top_k = 40;               // 0: off
  float top_p = 0.95f;              // 1: off
  float min_p = 0.05f;              // 0: off
  float repetition_penalty = 1.0f;  // 1: off
  std::optional<uint64_t> seed;     // unset: a random one (Result::seed says which)

  static Sampling greedy();  // temperature 0
};

struct GenerateOptions {
  int64_t max_tokens = 256;
  Sampling sampling;
  std::vector<std::string> stop;  // end once the text holds one of these (not included)
  bool ignore_eos = false;        // go on past end-of-sequence tokens (benchmarks)
  bool skip_special = false;      // leave special tokens out of the text
  // Text prompts at the start of a session get the tokenizer's special tokens (EncodeOptions);
  // later text continues the sequence as it is.
  bool add_special_tokens = true;
  // Decoding keeps up to `in_flight` steps on the GPU, `steps_per_submit` of them a submit, each
  // token picked there (0: one step at a time, picked on the host). `host_sampling` draws sampled
  // tokens on the host (its own random stream) instead.
  int64_t in_flight = 6;
  int64_t steps_per_submit = 3;
  bool host_sampling = false;
};

enum class StopReason { Eos, StopString, MaxTokens, Cancelled };
WGX_API const char* to_string(StopReason reason);  // "eos", "stop string", ...

struct WGX_API Stats {
  int64_t prompt_tokens = 0;     // fed before the first new token
  int64_t cached_tokens = 0;     // of the conversation before them, already in the cache (not fed)
  int64_t generated_tokens = 0;
  int64_t prefill_steps = 0;
  double prefill_seconds = 0;      // until the first new token was known
  double first_token_seconds = 0;  // from the call
  double decode_seconds = 0;       // from the first new token to the last
  bool pipelined = false;          // tokens picked on the GPU, steps kept in flight
  bool drawn_on_device = false;    // pipelined and sampled
  size_t dispatches_per_step = 0;  // GPU dispatches of the last decode step
  double decode_cpu_seconds = 0;   // the process's CPU time while decoding (every thread)
  double decode_thread_cpu_seconds = 0;  // the calling thread's

  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;  // tokens after the first, over decode_seconds
};

struct Result {
  std::string text;             // what was streamed: no eos, nothing from a stop string on
  std::vector<int32_t> tokens;  // every new token, an ending eos included
  StopReason stop = StopReason::MaxTokens;
  uint64_t seed = 0;
  Stats stats;
};

// Called once per new token with the text that became final with it (possibly empty: bytes of an
// unfinished character, or text that may begin a stop string, are held back; always UTF-8).
// Returning false stops the generation (StopReason::Cancelled).
using TokenCallback = std::function<bool(std::string_view text, int32_t token)>;

// One conversation: its tokens, and the model's cache while it is the model's current session.
class WGX_API Session {
 public:
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Continues the session with `prompt` and generates. ContextFull (before anything is fed) when
  // the session, the prompt and max_tokens do not fit the context.
  Result generate(std::string_view prompt, const GenerateOptions& options = {}, const TokenCallback& on_token = {});
  Result generate(std::span<const int32_t> tokens, const GenerateOptions& options = {},
                  const TokenCallback& on_token = {});
  // A user message in the model's chat template, after the conversation so far; the reply is
  // added to history(). max_tokens is lowered to what the context has left.
  Result chat(std::string_view message, const GenerateOptions& options = {}, const TokenCallback& on_token = {});
  // The whole conversation (OpenAI-style messages); the session's tokens that it starts with are
  // kept, the rest is fed. history() becomes `messages` and the reply.
  Result chat(const std::vector<Message>& messages, const GenerateOptions& options = {},
              const TokenCallback& on_token = {});

  // Ends the generate() or chat() running now on another thread, as soon as its next token is
  // known (StopReason::Cancelled). Safe from any thread; no effect when none runs.
  void cancel();
  // Forgets the conversation.
  void reset();
  // Keeps the first `tokens` of the conversation (no change when it has no more); their cache
  // rows stay, so what is fed next after them costs only its own tokens. Chat turns (history())
  // are forgotten when tokens are dropped. For callers that get whole prompts each time (a
  // server): keep the prefix the new prompt shares with tokens(), then generate the rest.
  void truncate(int64_t tokens);

  std::vector<int32_t> tokens() const;  // the conversation so far
  int64_t context_used() const;
  int64_t context_size() const;
  const std::vector<Message>& history() const;  // chat turns so far

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  friend class Model;
  friend struct Internals;
  std::unique_ptr<Impl> impl_;
};

// ---- Batch --------------------------------------------------------------------------------------

// Continuous batching: many generations share every decode step (one pass over the weights for
// all of them), so their aggregate rate grows with their number, as a server's clients need.
// Needs a model loaded with LoadOptions::parallel > 0; each sequence takes one of its slots.
// Sequences join (add) and leave between steps; step() advances every one by a token, and feeds
// new prompts in chunks beside them. Tokens are picked on the GPU (greedy, or drawn from a top_k
// of 1 to 128, a repetition penalty included), others on the host (top_k 0 or above 128, or
// sample_on_device off: their own seeded random stream). One Batch per model
// at a time; used by one thread at a time. Sessions of the model keep working beside it.
//
//   wgx::Batch batch(model);
//   batch.add(model.tokenizer().encode("Once"), options, on_token);
//   while (batch.running() > 0) for (auto& f : batch.step()) use(f.id, f.result);
class WGX_API Batch {
 public:
  explicit Batch(const Model& model);
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;

  // Starts generating after `prompt` (token ids, fed as given) in a free slot: the one whose rows
  // (each slot keeps those of the sequence that ran in it last) hold the longest prefix of the
  // prompt, which is then not fed again (Stats::cached_tokens; the tokens are those of a cold
  // prompt, bit for bit), else the least recently freed. on_token is called
  // from step() as Session's is (returning false ends the sequence). BadArgument when no slot is
  // free, the prompt is empty or an id is outside the vocabulary; ContextFull when the prompt and
  // max_tokens (at least 1) do not fit the context. Returns the sequence's id.
  uint64_t add(std::span<const int32_t> prompt, const GenerateOptions& options = {}, TokenCallback on_token = {});
  // A conversation in the model's chat template (as Session::chat(messages) renders it; the
  // reply ends at the template's end of turn); max_tokens is lowered to what the context has left.
  uint64_t add_chat(const std::vector<Message>& messages, const GenerateOptions& options = {},
                    TokenCallback on_token = {}, bool thinking = true);
  // Ends a sequence at the next step (StopReason::Cancelled); no effect for an unknown id.
  void cancel(uint64_t id);

  struct Finished {
    uint64_t id = 0;
    Result result;
  };
  // One step; the sequences that ended in it. Nothing happens when none runs.
  std::vector<Finished> step();

  size_t running() const;
  size_t free_slots() const;

  struct Impl;

 private:
  friend struct Internals;
  std::unique_ptr<Impl> impl_;
};

// ---- Speech -------------------------------------------------------------------------------------

// Speech to text with a Whisper folder (WhisperForConditionalGeneration: config.json,
// generation_config.json, preprocessor_config.json, safetensors, tokenizer.json). Audio files are
// WAV, FLAC or Ogg, any rate and channels (mixed to mono, resampled to 16 kHz); the model hears
// them in 30 s windows. Greedy decoding, as transformers' generate() without sampling.
struct SpeechLoadOptions {
  // f32 (default) or q4 for the products of the encoder and decoder (4-bit weights; x rounded
  // to int8 in the encoder's); the stem, norms and embeddings stay f32.
  std::optional<WeightFormat> weights;
  std::function<void(const LoadProgress&)> on_progress;
};

struct TranscribeOptions {
  std::string language;   // "en", "de", ...; empty: detected from the first window
  bool translate = false;  // into English, where the model has the task
  bool timestamps = false;  // segments at the model's timestamp tokens (else one per window)
  int64_t max_new_tokens = 0;  // per window; 0: half the decoder's positions (224 for OpenAI's models)
  int64_t beams = 1;  // 1: greedy; 2 to 16: beam search (transformers' num_beams)
  // After each window: seconds of audio done, and in all.
  std::function<void(double done_seconds, double total_seconds)> on_progress;
};

struct TranscriptSegment {
  double start = 0, end = 0;  // seconds from the audio's start
  std::string text;
};

struct Transcript {
  std::string text;      // every segment's text, joined (Whisper's text starts with a space)
  std::string language;  // given or detected; "" for an English-only model
  std::vector<TranscriptSegment> segments;
  int64_t windows = 0;        // 30 s windows decoded
  int64_t tokens = 0;         // tokens generated, timestamps and end tokens included
  double audio_seconds = 0;   // the audio's length
  double seconds = 0;         // the transcription's wall time
  double encode_seconds = 0;  // of it: features and the encoder, every window
  double decode_seconds = 0;  // of it: the decoder's steps
};

struct SpeechModelInfo {
  std::string path;
  std::string adapter;
  int64_t mel_bins = 0, encoder_layers = 0, decoder_layers = 0, d_model = 0, vocab_size = 0;
  std::vector<std::string> languages;  // empty for an English-only model
  double load_seconds = 0;
};

class SpeechStream;

// An audio file's samples as the speech models hear them: mono, 16 kHz, in [-1, 1]. WAV, FLAC or
// Ogg, any rate and channels. BadArgument for a file that is not audio (the message says why).
WGX_API std::vector<float> load_audio(const std::string& path);

// How a stream (SpeechModel::stream) turns audio that arrives in pieces into text.
struct SpeechStreamOptions {
  // Seconds of new audio between two hypotheses. A word is final once two hypotheses in a row
  // agree on it: it comes out one to two steps after it was spoken (plus a hypothesis's time).
  double step = 1.0;
  // Seconds of audio a hypothesis hears at most (2 to 29). Longer audio is cut at the quietest
  // 0.1 s of the buffer's last 8 s; a word spoken across that point may be split or lost.
  double max_buffer = 24.0;
};

class WGX_API SpeechModel {
 public:
  // Throws Error: InvalidModel for a folder that is not a usable Whisper checkpoint.
  static SpeechModel load(const Engine& engine, const std::string& path, const SpeechLoadOptions& options = {});
  // Whether `path` is a folder whose config.json names a Whisper model.
  static bool is_speech_model(const std::string& path);

  SpeechModel(const SpeechModel&);
  SpeechModel& operator=(const SpeechModel&);
  SpeechModel(SpeechModel&&) noexcept;
  SpeechModel& operator=(SpeechModel&&) noexcept;
  ~SpeechModel();

  // An audio file's text. BadArgument for a file that is not audio (the message says why) and
  // for options the model cannot follow (an unknown language, translate on an English-only
  // model). Calls on one model run one at a time (copies share it).
  Transcript transcribe_file(const std::string& audio_path, const TranscribeOptions& options = {}) const;
  // The same for an audio file's bytes (from stdin, a socket, memory).
  Transcript transcribe_file_bytes(std::span<const uint8_t> file, const TranscribeOptions& options = {}) const;
  // The same for mono samples at 16 kHz in [-1, 1].
  Transcript transcribe(std::span<const float> samples_16k, const TranscribeOptions& options = {}) const;

  // A stream for audio that arrives in pieces. BadArgument for options it cannot follow
  // (timestamps are not streamed).
  SpeechStream stream(const TranscribeOptions& options = {}, const SpeechStreamOptions& stream = {}) const;

  SpeechModelInfo info() const;

  struct Impl;

 private:
  explicit SpeechModel(std::shared_ptr<Impl> impl);
  friend struct Internals;
  std::shared_ptr<Impl> impl_;
};

// Speech to text as the audio arrives (a microphone, a socket): push() samples as they come and
// get back the words that became final. Whisper hears whole windows, so the stream keeps the
// audio since its last cut and transcribes it again every `step` seconds; a word is final once
// two hypotheses in a row agree on it and on every word before it. Where the audio is shorter
// than max_buffer, the streamed text is the text of the whole audio at once unless the last
// hypothesis changed a word already final (the final word stays). The text depends on the
// samples only, not on how they were split into push() calls. A stream's calls take turns with
// its model's other calls; it keeps the model alive.
class WGX_API SpeechStream {
 public:
  // Mono samples at 16 kHz in [-1, 1] -> the text they made final (often ""). BadArgument for a
  // sample that is not a finite number, and after finish().
  std::string push(std::span<const float> samples_16k);
  // The end of the audio: the text of what was left.
  std::string finish();

  std::string text() const;      // final so far, every piece push() and finish() returned
  std::string language() const;  // given or detected; "" for an English-only model
  double audio_seconds() const;  // pushed so far
  int64_t windows() const;       // hypotheses decoded so far

  SpeechStream(SpeechStream&&) noexcept;
  SpeechStream& operator=(SpeechStream&&) noexcept;
  ~SpeechStream();

  struct Impl;

 private:
  explicit SpeechStream(std::unique_ptr<Impl> impl);
  friend class SpeechModel;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wgx
