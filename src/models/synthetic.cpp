#include "models/synthetic.h"

#include <algorithm>
#include <cmath>

#include "models/error.h"

namespace wgx::models {

namespace {

struct Named {
  const char* name;
  ModelConfig (*make)();
};

ModelConfig llama_3_2_1b() {
  ModelConfig c;
  c.architecture = Architecture::Llama;
  c.vocab_size = 128256;
  c.hidden_size = 2048;
  c.intermediate_size = 8192;
  c.num_layers = 16;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 64;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 500000;
  c.rope_scaling = RopeScaling{32.0, 1.0, 4.0, 8192};
  c.tie_word_embeddings = true;
  c.max_position_embeddings = 131072;
  c.bos_token_id = 128000;
  c.eos_token_ids = {128001, 128008, 128009};
  return c;
}

ModelConfig qwen3_0_6b() {
  ModelConfig c;
  c.architecture = Architecture::Qwen3;
  c.vocab_size = 151936;
  c.hidden_size = 1024;
  c.intermediate_size = 3072;
  c.num_layers = 28;
  c.num_heads = 16;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000;
  c.tie_word_embeddings = true;
  c.max_position_embeddings = 40960;
  c.bos_token_id = 151643;
  c.eos_token_ids = {151645, 151643};
  return c;
}

// Llama-3.1-8B's config.json: untied lm_head, rope scaling factor 8.
ModelConfig llama_3_1_8b() {
  ModelConfig c = llama_3_2_1b();
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_layers = 32;
  c.head_dim = 128;
  c.rope_scaling = RopeScaling{8.0, 1.0, 4.0, 8192};
  c.tie_word_embeddings = false;
  return c;
}

// Qwen3-8B's config.json: untied lm_head.
ModelConfig qwen3_8b() {
  ModelConfig c = qwen3_0_6b();
  c.hidden_size = 4096;
  c.intermediate_size = 12288;
  c.num_layers = 36;
  c.num_heads = 32;
  c.tie_word_embeddings = false;
  return c;
}

ModelConfig demo_tiny() {
  ModelConfig c;
  c.architecture = Architecture::Llama;
  c.vocab_size = 512;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 10000;
  c.tie_word_embeddings = true;
  c.max_position_embeddings = 4096;
  c.bos_token_id = 0;
  c.eos_token_ids = {1};
  return c;
}

constexpr Named kModels[] = {{"llama-3.2-1b", llama_3_2_1b}, {"qwen3-0.6b", qwen3_0_6b},
                             {"llama-3.1-8b", llama_3_1_8b}, {"qwen3-8b", qwen3_8b},
                             {"demo-tiny", demo_tiny}};

// FNV-1a: a tensor name's hash, the same on every platform (std::hash is not).
uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

// splitmix64: one 64-bit draw per weight, as good as the weights need and fast.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

std::vector<std::string> synthetic_names() {
  std::vector<std::string> names;
  for (const Named& m : kModels) names.emplace_back(m.name);
  return names;
}

std::optional<ModelConfig> synthetic_config(const std::string& name) {
  for (const Named& m : kModels) {
    if (name == m.name) return m.make();
  }
  return std::nullopt;
}

WeightSource synthetic_weights(uint64_t seed) {
  WeightSource source;
  source.origin = "random weights (seed " + std::to_string(seed) + ")";
  source.tensor = [seed, origin = source.origin](const std::string& name, const std::vector<int64_t>& shape,
                                                 const std::string&) {
    if (shape.empty() || shape.size() > 2) {
      throw ModelError(origin, "tensor " + name, "has rank " + std::to_string(shape.size()) + ", not 1 or 2");
    }
    // Uniform in [lo, hi): a spread of s is +-sqrt(3) s.
    double lo = 0.7, hi = 1.3;
    if (!ends_with(name, "norm.weight")) {
      if (shape.size() != 2) throw ModelError(origin, "tensor " + name, "is neither a norm nor a matrix");
      const double fan_in = static_cast<double>(shape[1]);
      const double spread = ends_with(name, "embed_tokens.weight") ? 1.0 : 1.0 / std::sqrt(fan_in);
      hi = std::sqrt(3.0) * spread;
      lo = -hi;
    }
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    const int64_t cols = shape.back();
    uint64_t mixed = seed;
    const uint64_t stream = next(mixed) ^ name_hash(name);
    // Row r's values come from a state of its own, so rows can be made in any order.
    auto read = [stream, lo, hi, cols](int64_t first, int64_t count, float* out) {
      for (int64_t r = first; r < first + count; ++r) {
        uint64_t state = stream ^ (static_cast<uint64_t>(r) * 0xd1b54a32d192ed03ull);
        float* row = out + (r - first) * cols;
        for (int64_t k = 0; k < cols; ++k) {
          const double u = static_cast<double>(next(state) >> 40) * 0x1p-24;  // [0, 1), 24 bits
          row[k] = static_cast<float>(lo + (hi - lo) * u);
        }
      }
    };
    return SourceTensor{rows, cols, read, origin};
  };
  return source;
}

}  // namespace wgx::models
