#include "tiny_checkpoint.h"

#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "graph/storage.h"

namespace wgx::models::testing {

namespace {

using nlohmann::json;

uint16_t to_bf16(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even (no NaNs are generated)
  return static_cast<uint16_t>(bits >> 16);
}

// Stores `values` as the spec says and returns what the file then holds, as f32.
RawTensor store(const std::string& name, std::vector<int64_t> shape, std::vector<float>& values, StoreAs as) {
  RawTensor t{name, "F32", std::move(shape), {}};
  if (as == StoreAs::F32) {
    t.bytes.resize(values.size() * 4);
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  t.dtype = as == StoreAs::BF16 ? "BF16" : "F16";
  t.bytes.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = as == StoreAs::BF16 ? to_bf16(values[i]) : graph::f32_to_f16(values[i]);
    values[i] = as == StoreAs::BF16 ? graph::bf16_to_f32(h) : graph::f16_to_f32(h);
    t.bytes[2 * i] = static_cast<uint8_t>(h & 0xff);
    t.bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return t;
}

}  // namespace

TinyModel make_tiny(const TinySpec& s) {
  TinyModel m;
  ModelConfig& c = m.config;
  c.architecture = s.arch;
  c.vocab_size = s.vocab;
  c.hidden_size = s.hidden;
  c.intermediate_size = s.intermediate;
  c.num_layers = s.layers;
  c.num_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.head_dim = s.head_dim;
  c.rms_norm_eps = s.rms_norm_eps;
  c.rope_theta = s.rope_theta;
  if (s.llama3_scaling) {
    // A short original context, so that head_dim 16..128 frequencies fall in all three bands
    // (kept, blended, divided by the factor).
    c.rope_scaling = RopeScaling{.factor = 8.0, .low_freq_factor = 1.0, .high_freq_factor = 4.0,
                                 .original_max_position = 256};
  }
  c.tie_word_embeddings = s.tied;
  c.max_position_embeddings = s.max_position;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};

  std::mt19937 rng(s.seed);
  // Weights scaled by 1/sqrt(fan_in) keep activations near 1, so attention is neither uniform
  // nor one-hot and logits are O(1): every part of the model shows in them.
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float lo, float hi) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    m.tensors.push_back(store(name, std::move(shape), v, s.store));
    m.weights[name] = std::move(v);
  };
  auto linear = [&](const std::string& name, int64_t rows, int64_t cols) {
    const float a = 1.7f / std::sqrt(static_cast<float>(cols));
    add(name, {rows, cols}, -a, a);
  };
  auto norm = [&](const std::string& name, int64_t n) { add(name, {n}, 0.7f, 1.3f); };

  add("model.embed_tokens.weight", {s.vocab, s.hidden}, -1.f, 1.f);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    norm(p + "input_layernorm.weight", s.hidden);
    linear(p + "self_attn.q_proj.weight", s.heads * s.head_dim, s.hidden);
    linear(p + "self_attn.k_proj.weight", s.kv_heads * s.head_dim, s.hidden);
    linear(p + "self_attn.v_proj.weight", s.kv_heads * s.head_dim, s.hidden);
    linear(p + "self_attn.o_proj.weight", s.hidden, s.heads * s.head_dim);
    if (s.arch == Architecture::Qwen3) {
      norm(p + "self_attn.q_norm.weight", s.head_dim);
      norm(p + "self_attn.k_norm.weight", s.head_dim);
    }
    norm(p + "post_attention_layernorm.weight", s.hidden);
    linear(p + "mlp.gate_proj.weight", s.intermediate, s.hidden);
    linear(p + "mlp.up_proj.weight", s.intermediate, s.hidden);
    linear(p + "mlp.down_proj.weight", s.hidden, s.intermediate);
  }
  norm("model.norm.weight", s.hidden);
  if (!s.tied) linear("lm_head.weight", s.vocab, s.hidden);
  return m;
}

std::string config_json(const ModelConfig& c, bool rope_parameters) {
  const bool qwen = c.architecture == Architecture::Qwen3;
  json j = {
      {"architectures", {qwen ? "Qwen3ForCausalLM" : "LlamaForCausalLM"}},
      {"model_type", qwen ? "qwen3" : "llama"},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"intermediate_size", c.intermediate_size},
      {"num_hidden_layers", c.num_layers},
      {"num_attention_heads", c.num_heads},
      {"num_key_value_heads", c.num_kv_heads},
      {"head_dim", c.head_dim},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"rms_norm_eps", c.rms_norm_eps},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"max_position_embeddings", c.max_position_embeddings},
      {"torch_dtype", "bfloat16"},
  };
  if (c.bos_token_id) j["bos_token_id"] = *c.bos_token_id;
  if (c.eos_token_ids.size() == 1) j["eos_token_id"] = c.eos_token_ids[0];
  if (c.eos_token_ids.size() > 1) j["eos_token_id"] = c.eos_token_ids;
  json scaling = nullptr;
  if (c.rope_scaling) {
    scaling = {{"rope_type", "llama3"},
               {"factor", c.rope_scaling->factor},
               {"low_freq_factor", c.rope_scaling->low_freq_factor},
               {"high_freq_factor", c.rope_scaling->high_freq_factor},
               {"original_max_position_embeddings", c.rope_scaling->original_max_position}};
  }
  if (rope_parameters) {
    json p = scaling.is_null() ? json{{"rope_type", "default"}} : scaling;
    p["rope_theta"] = c.rope_theta;
    j["rope_parameters"] = p;
  } else {
    j["rope_theta"] = c.rope_theta;
    j["rope_scaling"] = scaling;
  }
  return j.dump(2);
}

std::string safetensors_header(const std::vector<RawTensor>& tensors) {
  json h = json::object();
  uint64_t offset = 0;
  for (const RawTensor& t : tensors) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  h["__metadata__"] = {{"format", "pt"}};
  return h.dump();
}

void write_raw_safetensors(const std::filesystem::path& path, const std::string& header,
                           const std::vector<uint8_t>& data) {
  std::string padded = header;
  while (padded.size() % 8 != 0) padded += ' ';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  uint64_t n = padded.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out.write(padded.data(), static_cast<std::streamsize>(padded.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

void write_safetensors(const std::filesystem::path& path, const std::vector<RawTensor>& tensors) {
  std::vector<uint8_t> data;
  for (const RawTensor& t : tensors) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  write_raw_safetensors(path, safetensors_header(tensors), data);
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << text;
}

void write_checkpoint(const TinyModel& model, const std::filesystem::path& dir, int shards) {
  write_text(dir / "config.json", config_json(model.config));
  if (shards <= 1) {
    write_safetensors(dir / "model.safetensors", model.tensors);
    return;
  }
  // Hugging Face's shard names; tensors dealt out in contiguous runs.
  json map = json::object();
  const size_t per = (model.tensors.size() + static_cast<size_t>(shards) - 1) / static_cast<size_t>(shards);
  for (int k = 0; k < shards; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", k + 1, shards);
    const size_t begin = std::min(model.tensors.size(), per * static_cast<size_t>(k));
    const size_t end = std::min(model.tensors.size(), begin + per);
    std::vector<RawTensor> part(model.tensors.begin() + static_cast<ptrdiff_t>(begin),
                                model.tensors.begin() + static_cast<ptrdiff_t>(end));
    for (const RawTensor& t : part) map[t.name] = name;
    write_safetensors(dir / name, part);
  }
  write_text(dir / "model.safetensors.index.json", json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(2));
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wgx_models_XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace wgx::models::testing
