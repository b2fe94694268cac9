#include "cli/llm_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "models/synthetic.h"
#include "models/wgx_model_file.h"

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
    model.given.push_back("--weights");
    const std::string w = args.value();
    if (w == "q4") {
      model.weights = models::WeightFormat::Q4;
    } else if (w == "f16") {
      model.weights = models::WeightFormat::F16;
    } else if (w == "f32") {
      model.weights = models::WeightFormat::F32;
    } else {
      throw std::invalid_argument("--weights is '" + w + "': choose q4, f16 or f32");
    }
  } else if (args.take("--kv")) {
    model.given.push_back("--kv");
    const std::string kv = args.value();
    if (kv != "f16" && kv != "f32") throw std::invalid_argument("--kv is '" + kv + "': choose f16 or f32");
    model.half_kv_cache = kv == "f16";
  } else if (args.take("--ctx")) {
    model.given.push_back("--ctx");
    model.context = parse_int("--ctx", args.value(), 1, int64_t{1} << 20);
  } else {
    return false;
  }
  return true;
}

llm::SamplingOptions default_sampling() {
  llm::SamplingOptions s;
  s.temperature = 0.8f;
  s.top_k = 40;
  s.top_p = 0.95f;
  s.min_p = 0.05f;
  return s;
}

bool take_sampling_option(ArgWalker& args, llm::SamplingOptions& s, bool& seed_given) {
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
    seed_given = true;
  } else {
    return false;
  }
  return true;
}

namespace {

const char* weights_name(models::WeightFormat w) {
  switch (w) {
    case models::WeightFormat::Q4: return "q4";
    case models::WeightFormat::F16: return "f16";
    case models::WeightFormat::F32: return "f32";
  }
  return "?";
}

// True for a file (a .wgx, whose reader says what is wrong with it), false for a model folder.
bool check_model_path(const ModelArgs& args) {
  if (args.path.empty()) {
    throw std::invalid_argument("name the model with --model PATH (a Hugging Face model folder or a .wgx file)");
  }
  const fs::path p(args.path);
  if (!fs::exists(p)) throw std::invalid_argument("--model " + args.path + ": no such file or folder");
  if (fs::is_regular_file(p)) return true;
  if (!fs::is_directory(p))
    throw std::invalid_argument("--model " + args.path + ": not a folder or a .wgx file");
  for (const char* file : {"config.json", "tokenizer.json"}) {
    if (!fs::exists(p / file)) {
      throw std::invalid_argument("--model " + args.path + ": no " + file +
                                  " in it (a Hugging Face model folder holds config.json, tokenizer.json and the "
                                  "*.safetensors weights; huggingface-cli download fetches all three)");
    }
  }
  return false;
}

// A .wgx holds its weights, cache and context as converted: options asking for others are refused
// rather than ignored; the same values are accepted.
void check_fixed_options(const ModelArgs& args, const models::WgxModel& file) {
  const models::LoadOptions& o = file.options;
  for (const std::string& option : args.given) {
    const int64_t context = std::min(args.context, file.model.config.max_position_embeddings);  // as convert clamps
    const bool same = option == "--weights" ? args.weights == o.weights
                      : option == "--kv"    ? args.half_kv_cache == o.half_kv_cache
                                            : context == o.max_seq;
    if (same) continue;
    throw std::invalid_argument("--model " + args.path + " holds " + weights_name(o.weights) + " weights, an " +
                                (o.half_kv_cache ? "f16" : "f32") + " KV cache and a context of " +
                                std::to_string(o.max_seq) + ", fixed by wgx convert: " + option +
                                " cannot change them (convert the folder again to get others)");
  }
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The geometry --synthetic names; nothing for a model folder.
std::optional<models::ModelConfig> synthetic_model(const ModelArgs& args) {
  if (args.synthetic.empty()) return std::nullopt;
  if (!args.path.empty()) throw std::invalid_argument("pass --model or --synthetic, not both");
  auto config = models::synthetic_config(args.synthetic);
  if (!config) {
    std::string names;
    for (const std::string& n : models::synthetic_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("--synthetic " + args.synthetic + ": choose one of " + names);
  }
  return config;
}

}  // namespace

LoadedModel load_model(const GlobalOptions& global, const ModelArgs& args, bool keep_built) {
  const std::optional<models::ModelConfig> synthetic = synthetic_model(args);
  const bool wgx_file = !synthetic && check_model_path(args);
  const auto start = std::chrono::steady_clock::now();
  LoadedModel m;
  models::LoadOptions options;
  options.weights = args.weights;
  options.half_kv_cache = args.half_kv_cache;
  options.max_seq = args.context;
  options.share_layer_weights = args.shared_layers;
  std::optional<models::WgxModel> file;
  if (wgx_file) {
    file = models::load_wgx(args.path);  // a mapping and the metadata: quick
    m.read_seconds = since(start);
    check_fixed_options(args, *file);
    options = file->options;
    const std::string* config = file->tokenizer_config_json();
    m.tokenizer = tokenizer::Tokenizer::from_json(
        file->tokenizer_json(), config ? std::optional<std::string_view>(*config) : std::nullopt, args.path);
  } else if (!synthetic) {
    m.tokenizer = tokenizer::Tokenizer::load(args.path);  // first: its errors are the quick ones
  }
  m.gpu = std::make_unique<gpu::Context>(global.context);
  const auto read_start = std::chrono::steady_clock::now();
  models::BuiltModel built =
      file        ? std::move(file->model)
      : synthetic ? models::build_decoder(*synthetic, models::synthetic_weights(args.seed), options)
                  : models::load_hf(args.path, options);
  if (!file) m.read_seconds = since(read_start);
  m.config = built.config;
  m.limits = llm::model_limits(built.graph);
  const auto build_start = std::chrono::steady_clock::now();
  if (keep_built) {
    m.program = std::make_unique<runtime::Program>(*m.gpu, built.graph, built.weights, global.program);
    m.built = std::move(built);
    if (file) m.wgx_file = std::move(file->file);
  } else {
    m.program = std::make_unique<runtime::Program>(*m.gpu, std::move(built.graph), built.weights, global.program);
  }
  m.build_seconds = since(build_start);
  m.eos_ids = m.config.eos_token_ids;
  if (const auto eos = m.tokenizer ? m.tokenizer->special_tokens().eos : std::nullopt;
      eos && std::find(m.eos_ids.begin(), m.eos_ids.end(), *eos) == m.eos_ids.end()) {
    m.eos_ids.push_back(*eos);
  }
  m.description = std::string(m.config.architecture == models::Architecture::Qwen3 ? "Qwen3" : "Llama") + ", " +
                  weights_name(options.weights) + " weights, " + (options.half_kv_cache ? "f16" : "f32") +
                  " KV cache, context " + std::to_string(m.limits.max_seq) + ", " + m.gpu->adapter().device;
  m.load_seconds = since(start);
  return m;
}

std::string stats_line(const llm::GenerationStats& s, llm::StopReason stop) {
  char line[256];
  std::snprintf(line, sizeof line,
                "prompt %lld tokens, %.1f tok/s | generated %lld tokens, %.1f tok/s%s | first token %.3f s | stop: %s",
                static_cast<long long>(s.prompt_tokens), s.prefill_tokens_per_second(),
                static_cast<long long>(s.generated_tokens), s.decode_tokens_per_second(),
                s.drawn_on_device ? " (pipelined, drawn on the device)" : s.pipelined ? " (pipelined)" : "",
                s.first_token_seconds, llm::stop_reason_name(stop));
  return line;
}

}  // namespace wgx::cli
