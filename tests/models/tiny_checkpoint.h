// Seeded random tiny Llama and Qwen3 checkpoints, written the way Hugging Face lays them out
// (config.json + model.safetensors, or shards + model.safetensors.index.json), plus the pieces
// the malformed-file tests need to write broken ones: raw safetensors headers and data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "models/model.h"

namespace wgx::models::testing {

using WeightMap = std::map<std::string, std::vector<float>>;

enum class StoreAs { F32, F16, BF16 };

struct TinySpec {
  Architecture arch = Architecture::Llama;
  int64_t vocab = 96;
  int64_t hidden = 64;
  int64_t intermediate = 128;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t head_dim = 16;
  bool tied = false;
  bool llama3_scaling = false;
  double rope_theta = 10000;
  double rms_norm_eps = 1e-5;
  int64_t max_position = 64;
  StoreAs store = StoreAs::F32;
  uint32_t seed = 1;
};

// Llama 3 in small: grouped-query attention (2 heads over 1), head_dim 64, llama3 rope scaling,
// bf16, untied.
inline TinySpec tiny_llama_gqa(uint32_t seed) {
  TinySpec s;
  s.hidden = 128;
  s.intermediate = 192;
  s.heads = 2;
  s.kv_heads = 1;
  s.head_dim = 64;
  s.llama3_scaling = true;
  s.rope_theta = 500000;
  s.store = StoreAs::BF16;
  s.seed = seed;
  return s;
}

// Qwen3 in small: q/k norms, head_dim 128, tied, bf16.
inline TinySpec tiny_qwen3(uint32_t seed) {
  TinySpec s;
  s.arch = Architecture::Qwen3;
  s.head_dim = 128;
  s.tied = true;
  s.rope_theta = 1000000;
  s.rms_norm_eps = 1e-6;
  s.store = StoreAs::BF16;
  s.seed = seed;
  return s;
}

// One tensor as a safetensors file holds it.
struct RawTensor {
  std::string name;
  std::string dtype;  // "F32", "BF16", "I8", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct TinyModel {
  ModelConfig config;
  std::vector<RawTensor> tensors;  // in Hugging Face's names
  WeightMap weights;               // the same values as f32 (after rounding to the stored dtype)
};

TinyModel make_tiny(const TinySpec& spec);

// config.json for `config`. `rope_parameters`: transformers 5's layout (theta and scaling in
// "rope_parameters") instead of "rope_theta" + "rope_scaling".
std::string config_json(const ModelConfig& config, bool rope_parameters = false);

// config.json + the tensors, in `shards` files (2+: with model.safetensors.index.json).
void write_checkpoint(const TinyModel& model, const std::filesystem::path& dir, int shards = 1);

// The JSON header of a safetensors file holding `tensors` back to back, in order.
std::string safetensors_header(const std::vector<RawTensor>& tensors);
// 8-byte length + header (space-padded to 8 bytes, as Hugging Face writes it) + data.
void write_raw_safetensors(const std::filesystem::path& path, const std::string& header,
                           const std::vector<uint8_t>& data);
void write_safetensors(const std::filesystem::path& path, const std::vector<RawTensor>& tensors);
void write_text(const std::filesystem::path& path, const std::string& text);

// A fresh folder under the system temp folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace wgx::models::testing
