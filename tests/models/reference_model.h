// A CPU forward pass of Llama 3.x / Qwen3 in double precision, written from Hugging Face's
// modeling code with plain loops, one token at a time (which is causal attention over the whole
// history): embedding, RMSNorm, q/k/v, Qwen3's q_norm/k_norm over head_dim, rotate_half rope
// with llama3 frequency scaling, grouped-query attention with scale 1/sqrt(head_dim), SwiGLU,
// the final norm and lm_head (the embedding when tied). The tests' ground truth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {

class ReferenceModel {
 public:
  // `weights` in Hugging Face's names and shapes, row-major.
  ReferenceModel(ModelConfig config, WeightMap weights);

  // Feeds `tokens` at the next positions; returns each one's logits.
  std::vector<std::vector<double>> step(const std::vector<int32_t>& tokens);
  int64_t position() const { return pos_; }

 private:
  const std::vector<float>& w(const std::string& name) const;
  std::vector<double> token(int32_t id);
  std::vector<double> attention(int64_t layer, const std::vector<double>& h);
  void rope(std::vector<double>& x, int64_t heads) const;

  ModelConfig c_;
  WeightMap w_;
  std::vector<double> inv_freq_;
  // Per layer, per position: kv_heads * head_dim keys and values.
  std::vector<std::vector<std::vector<double>>> keys_, values_;
  int64_t pos_ = 0;
};

// The index of the largest logit, and how far it is ahead of the runner-up.
struct Greedy {
  int32_t token = 0;
  double margin = 0;
};
Greedy greedy(const std::vector<double>& logits);
Greedy greedy(const std::vector<float>& logits);

// The names of the weights load_hf quantizes with WeightFormat::Q4 (every product weight and the
// embedding table; lm_head when untied).
bool is_quantized_weight(const std::string& name);
// The weights as the loader's q4gsw path holds them: quantized and dequantized again.
WeightMap dequantized(const ModelConfig& config, const WeightMap& weights, uint32_t group_size,
                      graph::DType scale_dtype);
// Every weight rounded to f16 (WeightFormat::F16 stores norms as f16 too).
WeightMap rounded_f16(const WeightMap& weights);

}  // namespace wgx::models::testing
