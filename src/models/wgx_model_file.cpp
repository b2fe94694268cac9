#include "models/wgx_model_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "models/error.h"

namespace wgx::models {

namespace {

constexpr const char* kVersionKey = "wgx.model_metadata";
constexpr const char* kVersion = "1";
constexpr const char* kTokenizerKey = "wgx.tokenizer.json";
constexpr const char* kTokenizerConfigKey = "wgx.tokenizer_config.json";
constexpr int64_t kMaxSize = int64_t{1} << 31;  // config.cpp's bound on sizes

// Shortest text that reads back as the same double, so a file's config equals the folder's.
std::string real_text(double v) {
  char buf[32];
#if defined(__cpp_lib_to_chars) || !defined(__EMSCRIPTEN__)
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
#else  // the WebAssembly build's standard library has no floating-point to_chars: 17 digits read back exactly
  return std::string(buf, static_cast<size_t>(std::snprintf(buf, sizeof buf, "%.17g", v)));
#endif
}

const char* weights_name(WeightFormat w) {
  switch (w) {
    case WeightFormat::Q4: return "q4";
    case WeightFormat::F16: return "f16";
    case WeightFormat::F32: return "f32";
  }
  return "?";
}

// The range of the graph's sym `name`; a graph the decoder did not emit has none.
const graph::SymInt& graph_sym(const graph::Graph& g, const char* name, const std::string& file) {
  const auto id = graph::find_sym(g, name);
  if (!id) throw ModelError(file, "graph", std::string("has no sym '") + name + "': not a decoder wgx convert made");
  return g.syms[id->index];
}

// Reads one file's metadata keys; every error names the file and the key.
class Keys {
 public:
  Keys(const format::Metadata& md, std::string file) : md_(md), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& detail) const {
    throw ModelError(file_, "metadata key " + key, detail);
  }

  const std::string& text(const std::string& key) const {
    const auto it = md_.find(key);
    if (it == md_.end()) fail(key, "is missing (made by another wgx version? convert the model again)");
    return it->second;
  }

  int64_t integer(const std::string& key, int64_t min, int64_t max) const {
    return parse_int(key, text(key), min, max);
  }

  double real(const std::string& key) const {
    const std::string& t = text(key);
    double v = 0;
#if defined(__cpp_lib_to_chars) || !defined(__EMSCRIPTEN__)
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    const bool whole = r.ec == std::errc() && r.ptr == t.data() + t.size();
#else  // no floating-point from_chars in the WebAssembly build's standard library
    char* end = nullptr;
    v = std::strtod(t.c_str(), &end);
    const bool whole = !t.empty() && end == t.c_str() + t.size() && !std::isspace(static_cast<unsigned char>(t[0]));
#endif
    if (!whole || !std::isfinite(v)) {
      fail(key, "is '" + t + "', not a number");
    }
    return v;
  }

  std::string choice(const std::string& key, std::initializer_list<const char*> allowed) const {
    const std::string& t = text(key);
    std::string list;
    for (const char* a : allowed) {
      if (t == a) return t;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    fail(key, "is '" + t + "', not one of " + list);
  }

  // "1,2,3"; empty for none.
  std::vector<int32_t> ids(const std::string& key) const {
    const std::string& t = text(key);
    std::vector<int32_t> out;
    if (t.empty()) return out;
    for (size_t start = 0;;) {
      const size_t comma = std::min(t.find(',', start), t.size());
      out.push_back(static_cast<int32_t>(parse_int(key, t.substr(start, comma - start), 0, INT32_MAX)));
      if (comma == t.size()) return out;
      start = comma + 1;
    }
  }

 private:
  int64_t parse_int(const std::string& key, const std::string& t, int64_t min, int64_t max) const {
    int64_t v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) {
      fail(key, "is '" + t + "', not a whole number");
    }
    if (v < min || v > max) {
      fail(key, "is " + t + ", outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return v;
  }

  const format::Metadata& md_;
  std::string file_;
};

ModelConfig read_config(const Keys& k) {
  ModelConfig c;
  c.architecture = k.choice("wgx.arch", {"llama", "qwen3"}) == "qwen3" ? Architecture::Qwen3 : Architecture::Llama;
  c.vocab_size = k.integer("wgx.vocab_size", 1, kMaxSize);
  c.hidden_size = k.integer("wgx.hidden_size", 1, kMaxSize);
  c.intermediate_size = k.integer("wgx.intermediate_size", 1, kMaxSize);
  c.num_layers = k.integer("wgx.num_layers", 1, 4096);
  c.num_heads = k.integer("wgx.num_heads", 1, 4096);
  c.num_kv_heads = k.integer("wgx.num_kv_heads", 1, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0) k.fail("wgx.num_kv_heads", "does not divide wgx.num_heads");
  c.head_dim = k.integer("wgx.head_dim", 2, 1024);
  if (c.head_dim % 2 != 0) k.fail("wgx.head_dim", "is odd");
  c.rms_norm_eps = k.real("wgx.rms_norm_eps");
  if (!(c.rms_norm_eps >= 0)) k.fail("wgx.rms_norm_eps", "must be >= 0");
  c.rope_theta = k.real("wgx.rope_theta");
  if (!(c.rope_theta > 0)) k.fail("wgx.rope_theta", "must be > 0");
  if (k.choice("wgx.rope_scaling", {"none", "llama3"}) == "llama3") {
    RopeScaling s;
    s.factor = k.real("wgx.rope_scaling.factor");
    s.low_freq_factor = k.real("wgx.rope_scaling.low_freq_factor");
    s.high_freq_factor = k.real("wgx.rope_scaling.high_freq_factor");
    s.original_max_position = k.integer("wgx.rope_scaling.original_max_position", 1, kMaxSize);
    c.rope_scaling = s;
  }
  c.tie_word_embeddings = k.choice("wgx.tie_word_embeddings", {"true", "false"}) == "true";
  c.max_position_embeddings = k.integer("wgx.max_position_embeddings", 1, kMaxSize);
  if (k.text("wgx.bos_token_id") != "none") {
    c.bos_token_id = static_cast<int32_t>(k.integer("wgx.bos_token_id", 0, INT32_MAX));
  }
  c.eos_token_ids = k.ids("wgx.eos_token_ids");
  return c;
}

// The load options the graph was built with; the context sizes must be the graph's own, since
// the generator takes its limits from the graph and the metadata only describes it.
LoadOptions read_options(const Keys& k, const ModelConfig& c, const graph::Graph& g, const std::string& file) {
  LoadOptions o;
  const std::string w = k.choice("wgx.weights", {"q4", "f16", "f32"});
  o.weights = w == "q4" ? WeightFormat::Q4 : w == "f16" ? WeightFormat::F16 : WeightFormat::F32;
  o.half_kv_cache = k.choice("wgx.kv", {"f16", "f32"}) == "f16";
  o.max_seq = k.integer("wgx.max_seq", 1, c.max_position_embeddings);
  o.max_prefill = k.integer("wgx.max_prefill", 1, o.max_seq);
  const int64_t graph_seq = graph_sym(g, "input_pos", file).max + 1;
  if (graph_seq != o.max_seq) k.fail("wgx.max_seq", "does not match the graph's " + std::to_string(graph_seq));
  const int64_t graph_prefill = graph_sym(g, "seq", file).max;
  if (graph_prefill != o.max_prefill) {
    k.fail("wgx.max_prefill", "does not match the graph's " + std::to_string(graph_prefill));
  }
  return o;
}

}  // namespace

const std::string& WgxModel::tokenizer_json() const { return file.metadata().at(kTokenizerKey); }

const std::string* WgxModel::tokenizer_config_json() const {
  const auto it = file.metadata().find(kTokenizerConfigKey);
  return it == file.metadata().end() ? nullptr : &it->second;
}

format::Metadata model_metadata(const BuiltModel& model, const LoadOptions& options, const TokenizerTexts& tokenizer) {
  const ModelConfig& c = model.config;
  format::Metadata md;
  md[kVersionKey] = kVersion;
  md["wgx.arch"] = c.architecture == Architecture::Qwen3 ? "qwen3" : "llama";
  md["wgx.vocab_size"] = std::to_string(c.vocab_size);
  md["wgx.hidden_size"] = std::to_string(c.hidden_size);
  md["wgx.intermediate_size"] = std::to_string(c.intermediate_size);
  md["wgx.num_layers"] = std::to_string(c.num_layers);
  md["wgx.num_heads"] = std::to_string(c.num_heads);
  md["wgx.num_kv_heads"] = std::to_string(c.num_kv_heads);
  md["wgx.head_dim"] = std::to_string(c.head_dim);
  md["wgx.rms_norm_eps"] = real_text(c.rms_norm_eps);
  md["wgx.rope_theta"] = real_text(c.rope_theta);
  md["wgx.rope_scaling"] = c.rope_scaling ? "llama3" : "none";
  if (c.rope_scaling) {
    md["wgx.rope_scaling.factor"] = real_text(c.rope_scaling->factor);
    md["wgx.rope_scaling.low_freq_factor"] = real_text(c.rope_scaling->low_freq_factor);
    md["wgx.rope_scaling.high_freq_factor"] = real_text(c.rope_scaling->high_freq_factor);
    md["wgx.rope_scaling.original_max_position"] = std::to_string(c.rope_scaling->original_max_position);
  }
  md["wgx.tie_word_embeddings"] = c.tie_word_embeddings ? "true" : "false";
  md["wgx.max_position_embeddings"] = std::to_string(c.max_position_embeddings);
  md["wgx.bos_token_id"] = c.bos_token_id ? std::to_string(*c.bos_token_id) : "none";
  std::string eos;
  for (int32_t id : c.eos_token_ids) eos += (eos.empty() ? "" : ",") + std::to_string(id);
  md["wgx.eos_token_ids"] = eos;
  md["wgx.weights"] = weights_name(options.weights);
  md["wgx.kv"] = options.half_kv_cache ? "f16" : "f32";
  // What the graph holds: the decoder clamps the requested sizes to the model's.
  md["wgx.max_seq"] = std::to_string(graph_sym(model.graph, "input_pos", "").max + 1);
  md["wgx.max_prefill"] = std::to_string(graph_sym(model.graph, "seq", "").max);
  md[kTokenizerKey] = tokenizer.tokenizer_json;
  if (tokenizer.tokenizer_config_json) md[kTokenizerConfigKey] = *tokenizer.tokenizer_config_json;
  return md;
}

void write_model_wgx(const std::filesystem::path& path, const BuiltModel& model, const LoadOptions& options,
                     const TokenizerTexts& tokenizer) {
  format::write_wgx(path.string(), model.graph, model.weights, model_metadata(model, options, tokenizer));
}

namespace {
WgxModel from_file(format::WgxFile f, const std::string& file) {
  WgxModel w{std::move(f), {}, {}};
  const Keys keys(w.file.metadata(), file);
  if (keys.text(kVersionKey) != kVersion) {
    keys.fail(kVersionKey, "is '" + keys.text(kVersionKey) + "'; this wgx reads version " + kVersion);
  }
  w.model.config = read_config(keys);
  w.model.graph = w.file.graph();
  w.model.weights = w.file.weights();  // a view of the mapping: nothing is copied here
  w.options = read_options(keys, w.model.config, w.model.graph, file);
  keys.text(kTokenizerKey);  // required: the commands that generate text need it
  return w;
}
}  // namespace

WgxModel load_wgx(const std::filesystem::path& path) {
  const std::string file = path.string();
  return from_file(format::open_wgx(file), file);
}

WgxModel load_wgx_head(std::span<const uint8_t> head, const std::string& name) {
  try {
    return from_file(format::parse_wgx_head(head), name);
  } catch (const format::FormatError& e) {
    throw format::FormatError(e.site(), e.detail(), name);
  }
}

}  // namespace wgx::models
