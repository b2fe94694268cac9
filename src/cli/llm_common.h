// What wgx run, chat and bench share: the model and sampling options, loading a model folder into
// a built program with its tokenizer, and the statistics line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "format/wgx_file.h"
#include "llm/chat.h"
#include "llm/generator.h"
#include "models/model.h"
#include "runtime/program.h"
#include "tokenizer/tokenizer.h"

namespace wgx::cli {

// The options text every generating command lists in its --help.
extern const char* const kModelOptionsHelp;
extern const char* const kSamplingOptionsHelp;

struct ModelArgs {
  std::string path;
  std::string synthetic;  // instead of a folder: a models/synthetic.h name, random weights (bench)
  uint64_t seed = 1;      // of the synthetic weights
  bool shared_layers = false;  // of the synthetic weights: every layer reads layer 0's (bench)
  models::WeightFormat weights = models::WeightFormat::Q4;
  bool half_kv_cache = true;
  int64_t context = 4096;
  std::vector<std::string> given;  // which of --weights, --kv, --ctx were given (a .wgx fixes them)
};

// Numbers from the command line, with the option named when one is not a number or out of range.
int64_t parse_int(const std::string& option, const std::string& text, int64_t min, int64_t max);
double parse_number(const std::string& option, const std::string& text, double min, double max);

// Walks a command's arguments. take(name) matches the current argument, value() is the next one.
class ArgWalker {
 public:
  ArgWalker(std::string command, const std::vector<std::string>& args) : command_(std::move(command)), args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& current() const { return args_[i_]; }
  bool take(const char* name, const char* alias = nullptr);
  std::string value();  // of the option just taken
  void skip() { ++i_; }
  [[noreturn]] void unknown() const;

 private:
  std::string command_;
  const std::vector<std::string>& args_;
  size_t i_ = 0;
  std::string taken_;
};

// --model, --weights, --kv, --ctx; true when the current argument was one of them.
bool take_model_option(ArgWalker& args, ModelArgs& model);
// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --seed.
bool take_sampling_option(ArgWalker& args, llm::SamplingOptions& sampling, bool& seed_given);
// Defaults of the generating commands (llama.cpp's): temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05, no repetition penalty.
llm::SamplingOptions default_sampling();

struct LoadedModel {
  std::unique_ptr<gpu::Context> gpu;
  models::ModelConfig config;
  std::unique_ptr<runtime::Program> program;
  std::optional<tokenizer::Tokenizer> tokenizer;  // none for a synthetic model
  llm::ModelLimits limits;
  std::vector<int32_t> eos_ids;  // config.json / generation_config.json and the tokenizer's
  std::string description;       // "Qwen3, q4 weights, f16 KV cache, context 4096, <adapter>"
  double load_seconds = 0;
  double read_seconds = 0;  // of load_seconds: reading the model (a folder: + converting weights)
  double build_seconds = 0;  // of load_seconds: building the program (routes, kernels, uploads)
  // With keep_built: the graph and weights the program was built from, to build it again with
  // other runtime options (wgx bench --profile).
  std::optional<models::BuiltModel> built;
  std::optional<format::WgxFile> wgx_file;  // the mapping a kept `built` of a .wgx borrows from
};

// Loads a Hugging Face folder (config.json, tokenizer.json, *.safetensors), a .wgx file from wgx
// convert, or generates the synthetic model args.synthetic names, and builds it for the adapter. Throws
// std::invalid_argument with what to do for a path that is not such a folder or an unknown name.
LoadedModel load_model(const GlobalOptions& global, const ModelArgs& args, bool keep_built = false);

// "prompt 12 tokens 250.1 tok/s | 64 tokens 30.2 tok/s | first token 0.05 s | stop: eos".
std::string stats_line(const llm::GenerationStats& stats, llm::StopReason stop);

}  // namespace wgx::cli
