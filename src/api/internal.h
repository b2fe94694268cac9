// What stands behind the public API's handles (include/wgx/wgx.hpp): the GPU context, the built
// program and the generator of each session. Only src/api and the command line's diagnostics
// (wgx inspect, bench --profile) include this.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "format/wgx_file.h"
#include "gpu/context.h"
#include "llm/batch.h"
#include "llm/score.h"
#include "llm/chat.h"
#include "llm/generator.h"
#include "models/model.h"
#include "runtime/program.h"
#ifdef WGX_HAS_SPEECH
#include "speech/stream.h"
#include "speech/transcriber.h"
#endif
#include "tokenizer/tokenizer.h"
#include "wgx/wgx.hpp"

namespace wgx {

// The current exception as a wgx::Error. `data` is the kind for a rejected model file, tokenizer
// file or graph (InvalidModel while loading; BadArgument for text or ids a call was given).
[[noreturn]] void rethrow_as_error(ErrorKind data = ErrorKind::InvalidModel);

// Runs `body`, turning whatever it throws into a wgx::Error.
template <typename F>
auto translated(ErrorKind data, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    rethrow_as_error(data);
  }
}

struct Engine::Impl {
  std::unique_ptr<gpu::Context> gpu;
  runtime::RuntimeOptions options;  // validated against the registry
};

struct Tokenizer::Impl {
  tokenizer::Tokenizer tok;
};

struct Model::Impl {
  std::shared_ptr<Engine::Impl> engine;
  std::optional<tokenizer::Tokenizer> tokenizer;  // none for a synthetic model
  models::ModelConfig config;
  models::LoadOptions load_options;
  llm::ModelLimits limits;
  std::vector<int32_t> eos_ids;  // config.json / generation_config.json and the tokenizer's
  std::optional<llm::ChatTemplate> chat_template;
  ModelInfo info;
  // The graph and weights the program was built from, where the load asked to keep them (to
  // build the model again with other runtime options: bench --profile); `file` is the mapping a
  // kept .wgx model borrows from.
  std::optional<models::BuiltModel> built;
  std::optional<format::WgxFile> file;
  std::unique_ptr<runtime::Program> program;
  // LoadOptions::parallel > 0: the rows graph's program (continuous batching), sharing the
  // program's weights; declared after it, so destroyed first.
  std::unique_ptr<runtime::Program> rows_program;
  std::optional<llm::BatchLimits> batch_limits;
  const void* batch_owner = nullptr;  // the Batch using rows_program

  // One generation at a time; the session whose conversation the program's cache holds.
  std::mutex mutex;
  const void* cache_owner = nullptr;
};

struct Session::Impl {
  std::shared_ptr<Model::Impl> model;
  SessionOptions options;
  std::unique_ptr<llm::Generator> generator;
  std::vector<Message> history;
  std::atomic<bool> cancel{false};
  llm::GenerationStats last_stats;  // of the last generation, with the host's phases (bench)
};

// Shared by Session and Batch (session.cpp): the generator's options for `o` (`seed` is the one
// drawn with), the seed asked for or a random one, and results in the API's terms.
llm::GenerationOptions generation_options(const GenerateOptions& o, const Model::Impl& m, uint64_t seed);
uint64_t seed_of(const GenerateOptions& o);
StopReason stop_reason(llm::StopReason r);
Stats stats_of(const llm::GenerationStats& s);
// A conversation in the model's chat template, encoded as apply_chat_template(tokenize=True), and
// the options of its reply: the template's end of turn ends it, max_new_tokens lowered to what
// the context has left (ContextFull when nothing is).
struct ChatPrompt {
  std::vector<int32_t> ids;
  llm::GenerationOptions options;
};
ChatPrompt chat_prompt(const Model::Impl& m, const std::vector<Message>& messages, bool thinking,
                       const GenerateOptions& options, uint64_t seed);

// What the command line's diagnostics reach through the API's handles.
#ifdef WGX_HAS_SPEECH
struct SpeechModel::Impl {
  std::shared_ptr<Engine::Impl> engine;
  std::unique_ptr<speech::Transcriber> transcriber;
  SpeechModelInfo info;
  std::mutex mutex;  // one transcription at a time: the programs hold one window's state
};

struct SpeechStream::Impl {
  std::shared_ptr<SpeechModel::Impl> model;
  std::unique_ptr<speech::Stream> stream;
};
#endif

struct Internals {
  static Engine::Impl& impl(const Engine& e) { return *e.impl_; }
  static Model::Impl& impl(const Model& m) { return *m.impl_; }
  static Session::Impl& impl(const Session& s) { return *s.impl_; }
  static SpeechModel::Impl& impl(const SpeechModel& m) { return *m.impl_; }
  static llm::Batch& batch(Batch& b);
  // Loads like Model::load, keeping the graph and weights the program was built from.
  static Model load_kept(const Engine& engine, const std::string& path, const LoadOptions& options);
  static Model synthetic_kept(const Engine& engine, const std::string& name, const LoadOptions& options,
                              uint64_t seed, bool shared_layers);
  // wgx::convert for a synthetic model (random weights, seed `seed`), with the tokenizer of the
  // folder `tokenizer_folder`: a .wgx file to benchmark where only files load (the web build).
  static ModelInfo convert_synthetic(const std::string& name, const std::string& tokenizer_folder,
                                     const std::string& output, const LoadOptions& options, uint64_t seed);
};

}  // namespace wgx
