#include "cli/llm_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "api/internal.h"
#include "cli/progress_line.h"

namespace wgx::cli {

namespace fs = std::filesystem;

const char* const kModelOptionsHelp = R"(model:
  --model PATH          a Hugging Face model folder (config.json, tokenizer.json, *.safetensors)
                        or a .wgx file from wgx convert (which fixes --weights, --kv and --ctx)
  --weights q4|f16|f32  how the weights are held on the GPU (default q4: 4-bit, groups of 32)
  --kv f16|f32          how the KV cache holds keys and values (default f16: half the bytes)
  --ctx N               context length, the tokens the KV cache holds (default 4096; at most
                        the model's max_position_embeddings)
)";

const char* const kSamplingOptionsHelp = R"(sampling (applied in this order, as Hugging Face does):
  --repeat-penalty R    divide (multiply, when negative) the logits of tokens already in the
                        context by R (default 1: off)
  --temp T              temperature (default 0.8; 0: greedy, always the most likely token)
  --top-k K             keep the K most likely tokens (default 40; 0: off)
  --top-p P             keep the most likely tokens up to probability P (default 0.95; 1: off)
  --min-p P             drop tokens below P times the most likely one's probability
                        (default 0.05; 0: off)
  --seed S              random seed (default: a random one, shown with the statistics); the
                        device's draws and the host sampler's are different streams
)";

int64_t parse_int(const std::string& option, const std::string& text, int64_t min, int64_t max) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw std::invalid_argument(option + " takes a whole number, not '" + text + "'");
  if (v < min || v > max) {
    throw std::invalid_argument(option + " " + text + " is out of range [" + std::to_string(min) + ", " +
                                std::to_string(max) + "]");
  }
  return v;
}

double parse_number(const std::string& option, const std::string& text, double min, double max) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || std::isnan(v)) {
    throw std::invalid_argument(option + " takes a number, not '" + text + "'");
  }
  if (v < min || v > max) {
    char range[64];
    std::snprintf(range, sizeof range, "[%g, %g]", min, max);
    throw std::invalid_argument(option + " " + text + " is out of range " + range);
  }
  return v;
}

bool ArgWalker::take(const char* name, const char* alias) {
  if (done() || (current() != name && (!alias || current() != alias))) return false;
  taken_ = current();
  ++i_;
  return true;
}

std::string ArgWalker::value() {
  if (done())
    throw std::invalid_argument(command_ + ": " + taken_ + " needs a value (see wgx " + command_ + " --help)");
  return args_[i_++];
}

void ArgWalker::unknown() const {
  throw std::invalid_argument(command_ + ": unknown argument '" + current() + "' (see wgx " + command_ + " --help)");
}

bool take_model_option(ArgWalker& args, ModelArgs& model) {
  if (args.take("--model", "-m")) {
    model.path = args.value();
  } else if (args.take("--weights")) {
    const std::string w = args.value();
    if (w == "q4") {
      model.load.weights = WeightFormat::Q4;
    } else if (w == "f16") {
      model.load.weights = WeightFormat::F16;
    } else if (w == "f32") {
      model.load.weights = WeightFormat::F32;
    } else {
      throw std::invalid_argument("--weights is '" + w + "': choose q4, f16 or f32");
    }
  } else if (args.take("--kv")) {
    const std::string kv = args.value();
    if (kv != "f16" && kv != "f32") throw std::invalid_argument("--kv is '" + kv + "': choose f16 or f32");
    model.load.kv = kv == "f16" ? KvFormat::F16 : KvFormat::F32;
  } else if (args.take("--ctx")) {
    model.load.context = parse_int("--ctx", args.value(), 1, int64_t{1} << 20);
  } else {
    return false;
  }
  return true;
}

bool take_sampling_option(ArgWalker& args, Sampling& s) {
  if (args.take("--temp")) {
    s.temperature = static_cast<float>(parse_number("--temp", args.value(), 0, 100));
  } else if (args.take("--top-k")) {
    s.top_k = static_cast<int32_t>(parse_int("--top-k", args.value(), 0, INT32_MAX));
  } else if (args.take("--top-p")) {
    s.top_p = static_cast<float>(parse_number("--top-p", args.value(), 1e-6, 1));
  } else if (args.take("--min-p")) {
    s.min_p = static_cast<float>(parse_number("--min-p", args.value(), 0, 1));
  } else if (args.take("--repeat-penalty")) {
    s.repetition_penalty = static_cast<float>(parse_number("--repeat-penalty", args.value(), 1e-3, 100));
  } else if (args.take("--seed")) {
    s.seed = static_cast<uint64_t>(parse_int("--seed", args.value(), 0, INT64_MAX));
  } else {
    return false;
  }
  return true;
}

Engine make_engine(const GlobalOptions& global) { return Engine(global.engine); }

Model load_model(const Engine& engine, const ModelArgs& args, bool keep) {
  if (!args.synthetic.empty()) {
    if (!args.path.empty()) throw std::invalid_argument("pass --model or --synthetic, not both");
    return keep || args.shared_layers
               ? Internals::synthetic_kept(engine, args.synthetic, args.load, args.seed, args.shared_layers)
               : Model::synthetic(engine, args.synthetic, args.load, args.seed);
  }
  if (args.path.empty()) {
    throw std::invalid_argument("name the model with --model PATH (a Hugging Face model folder or a .wgx file)");
  }
  ProgressLine line("loading " + args.path);
  LoadOptions o = args.load;
  o.on_progress = line.callback();
  return keep ? Internals::load_kept(engine, args.path, o) : Model::load(engine, args.path, o);
}

void announce(const Model& model) {
  const ModelInfo i = model.info();
  std::fprintf(stderr, "wgx: %s (%s) ready in %.2f s (model read in %.3f s, program built in %.3f s)\n",
               i.path.c_str(), i.description.c_str(), i.load_seconds, i.read_seconds, i.build_seconds);
}

std::string stats_line(const Result& r) {
  const Stats& s = r.stats;
  char line[256];
  std::snprintf(line, sizeof line,
                "prompt %lld tokens, %.1f tok/s | generated %lld tokens, %.1f tok/s%s | first token %.3f s | stop: %s",
                static_cast<long long>(s.prompt_tokens), s.prefill_tokens_per_second(),
                static_cast<long long>(s.generated_tokens), s.decode_tokens_per_second(),
                s.drawn_on_device ? " (pipelined, drawn on the device)" : s.pipelined ? " (pipelined)" : "",
                s.first_token_seconds, to_string(r.stop));
  return line;
}

}  // namespace wgx::cli
