// What wgx run, chat, bench and convert share: the model and sampling options, loading a model
// through the public API (with a progress line), and the statistics line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "wgx/wgx.hpp"

namespace wgx::cli {

// The options text every generating command lists in its --help.
extern const char* const kModelOptionsHelp;
extern const char* const kSamplingOptionsHelp;

struct ModelArgs {
  std::string path;
  std::string synthetic;       // instead of a path: a Model::synthetic_names() name (bench)
  uint64_t seed = 1;           // of the synthetic weights
  bool shared_layers = false;  // of the synthetic weights: every layer reads layer 0's (bench)
  LoadOptions load;            // --weights, --kv, --ctx (unset: the defaults, or a .wgx file's)
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
bool take_sampling_option(ArgWalker& args, Sampling& sampling);

// The Engine for the global options (adapter, toggles, runtime options).
Engine make_engine(const GlobalOptions& global);
// Loads args.path (a Hugging Face folder or a .wgx file) or the synthetic model args.synthetic
// names, with a progress line. `keep`: keep the graph and weights (bench --profile rebuilds them).
Model load_model(const Engine& engine, const ModelArgs& args, bool keep = false);
// "wgx: PATH (description) ready in 1.20 s (model read in 0.40 s, program built in 0.80 s)".
void announce(const Model& model);

// "prompt 12 tokens, 250.1 tok/s | generated 64 tokens, 30.2 tok/s | first token 0.05 s | stop: eos".
std::string stats_line(const Result& result);

}  // namespace wgx::cli
