#include "models/config.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "models/config_fields.h"
#include "models/error.h"
#include "models/json_excerpt.h"

namespace wgx::models {

namespace {

using nlohmann::json;

constexpr int64_t kMaxSize = int64_t{1} << 31;

Architecture parse_architecture(const Fields& f) {
  const json* list = f.find("architectures");
  if (!list) f.fail("architectures", "is missing (LlamaForCausalLM or Qwen3ForCausalLM expected)");
  if (!list->is_array() || list->size() != 1 || !(*list)[0].is_string()) {
    f.fail("architectures", "is " + json_excerpt(*list) + ", not a list of one name");
  }
  const std::string name = (*list)[0].get<std::string>();
  if (name == "LlamaForCausalLM") return Architecture::Llama;
  if (name == "Qwen3ForCausalLM") return Architecture::Qwen3;
  f.fail("architectures", "is " + json_excerpt(json(name)) + "; wgx runs LlamaForCausalLM and Qwen3ForCausalLM");
}

// Rope: transformers 5 keeps theta and the scaling in "rope_parameters"; earlier versions have
// "rope_theta" and "rope_scaling" at the top level. Either is read; rope_parameters wins.
void parse_rope(const Fields& f, ModelConfig& c) {
  std::optional<Fields> params;
  if (f.has("rope_parameters")) {
    params.emplace(f.object("rope_parameters"));
  } else if (f.has("rope_scaling")) {
    params.emplace(f.object("rope_scaling"));
  }
  if (params && params->has("rope_theta")) {
    c.rope_theta = params->number("rope_theta");
  } else {
    c.rope_theta = f.number("rope_theta");
  }
  if (!(c.rope_theta > 0)) f.fail("rope_theta", "must be > 0");
  if (!params) return;
  if (params->has("partial_rotary_factor") && params->number("partial_rotary_factor") != 1.0) {
    params->fail("partial_rotary_factor", "is not 1; wgx rotates the whole head_dim");
  }
  const char* type_key = params->has("rope_type") ? "rope_type" : "type";
  const std::string type = params->has(type_key) ? params->string(type_key) : "default";
  if (type == "default") return;
  if (type != "llama3") params->fail(type_key, "is " + json_excerpt(json(type)) + "; wgx supports \"default\" and \"llama3\"");
  RopeScaling s;
  s.factor = params->number("factor");
  s.low_freq_factor = params->number("low_freq_factor");
  s.high_freq_factor = params->number("high_freq_factor");
  s.original_max_position = params->integer("original_max_position_embeddings", 1, kMaxSize);
  if (!(s.factor > 0)) params->fail("factor", "must be > 0");
  if (!(s.low_freq_factor > 0) || !(s.high_freq_factor > s.low_freq_factor)) {
    params->fail("high_freq_factor", "must be greater than low_freq_factor, both > 0");
  }
  c.rope_scaling = s;
}

void refuse_unsupported(const Fields& f) {
  if (f.boolean_or("attention_bias", false)) f.fail("attention_bias", "is true; wgx has no attention biases");
  if (f.boolean_or("mlp_bias", false)) f.fail("mlp_bias", "is true; wgx has no MLP biases");
  if (f.boolean_or("use_sliding_window", false)) f.fail("use_sliding_window", "is true; wgx has no sliding window");
  if (f.has("hidden_act") && f.string("hidden_act") != "silu") {
    f.fail("hidden_act", "is " + json_excerpt(json(f.string("hidden_act"))) + "; wgx runs silu (SwiGLU)");
  }
}

void append_unique(std::vector<int32_t>& to, const std::vector<int32_t>& ids) {
  // A set of what `to` holds: a file may list many ids, and searching the list for each would
  // take time quadratic in the count.
  std::unordered_set<int32_t> seen(to.begin(), to.end());
  for (int32_t id : ids) {
    if (seen.insert(id).second) to.push_back(id);
  }
}

}  // namespace

const char* architecture_name(Architecture arch) {
  return arch == Architecture::Llama ? "LlamaForCausalLM" : "Qwen3ForCausalLM";
}

ModelConfig parse_config(std::string_view config_json, const std::string& source) {
  const json root = parse_json_text(config_json, source);
  const Fields f(root, source);
  ModelConfig c;
  c.architecture = parse_architecture(f);
  refuse_unsupported(f);
  c.vocab_size = f.integer("vocab_size", 1, kMaxSize);
  c.hidden_size = f.integer("hidden_size", 1, kMaxSize);
  c.intermediate_size = f.integer("intermediate_size", 1, kMaxSize);
  c.num_layers = f.integer("num_hidden_layers", 1, 4096);
  c.num_heads = f.integer("num_attention_heads", 1, 4096);
  c.num_kv_heads = f.integer_or("num_key_value_heads", c.num_heads, 1, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0) {
    f.fail("num_key_value_heads", "(" + std::to_string(c.num_kv_heads) + ") does not divide num_attention_heads (" +
                                      std::to_string(c.num_heads) + ")");
  }
  if (f.has("head_dim")) {
    c.head_dim = f.integer("head_dim", 2, 1024);
  } else {
    if (c.hidden_size % c.num_heads != 0) f.fail("head_dim", "is missing and hidden_size / num_attention_heads is not whole");
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) f.fail("head_dim", "is odd; rotate_half rope pairs channel i with i + head_dim / 2");
  c.rms_norm_eps = f.number("rms_norm_eps");
  if (!(c.rms_norm_eps >= 0)) f.fail("rms_norm_eps", "must be >= 0");
  parse_rope(f, c);
  c.tie_word_embeddings = f.boolean_or("tie_word_embeddings", false);
  c.max_position_embeddings = f.integer("max_position_embeddings", 1, kMaxSize);
  const std::vector<int32_t> bos = f.token_ids("bos_token_id");
  if (bos.size() > 1) f.fail("bos_token_id", "lists several ids");
  if (!bos.empty()) c.bos_token_id = bos[0];
  c.eos_token_ids = f.token_ids("eos_token_id");
  return c;
}

void apply_generation_config(ModelConfig& config, std::string_view generation_json, const std::string& source) {
  const json root = parse_json_text(generation_json, source);
  const Fields f(root, source);
  append_unique(config.eos_token_ids, f.token_ids("eos_token_id"));
  const std::vector<int32_t> bos = f.token_ids("bos_token_id");
  if (!config.bos_token_id && bos.size() == 1) config.bos_token_id = bos[0];
}

ModelConfig load_config(const std::filesystem::path& dir) {
  const auto path = dir / "config.json";
  if (!std::filesystem::exists(path)) throw ModelError(dir.string(), "", "has no config.json");
  ModelConfig c = parse_config(read_text(path), path.string());
  const auto gen = dir / "generation_config.json";
  if (std::filesystem::exists(gen)) apply_generation_config(c, read_text(gen), gen.string());
  return c;
}

}  // namespace wgx::models
