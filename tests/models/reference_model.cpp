#include "reference_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "graph/storage.h"
#include "ops/quant/quantize.h"

namespace wgx::models::testing {

namespace {

std::string layer(int64_t i, const char* suffix) { return "model.layers." + std::to_string(i) + "." + suffix; }

// y = W x for W [rows, cols].
std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x) {
  const size_t cols = x.size();
  const size_t rows = w.size() / cols;
  std::vector<double> y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (size_t k = 0; k < cols; ++k) s += double{w[r * cols + k]} * x[k];
    y[r] = s;
  }
  return y;
}

// RMSNorm of each `n`-element row of x, times weight.
void rms_norm(std::vector<double>& x, const std::vector<float>& weight, double eps) {
  const size_t n = weight.size();
  for (size_t row = 0; row < x.size() / n; ++row) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += x[row * n + i] * x[row * n + i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (size_t i = 0; i < n; ++i) x[row * n + i] = x[row * n + i] * inv * weight[i];
  }
}

}  // namespace

ReferenceModel::ReferenceModel(ModelConfig config, WeightMap weights) : c_(std::move(config)), w_(std::move(weights)) {
  const int64_t d = c_.head_dim;
  for (int64_t i = 0; i < d / 2; ++i) {
    double f = 1.0 / std::pow(c_.rope_theta, static_cast<double>(2 * i) / static_cast<double>(d));
    if (c_.rope_scaling) {
      // transformers' _compute_llama3_parameters, element by element.
      const RopeScaling& s = *c_.rope_scaling;
      const double old_ctx = static_cast<double>(s.original_max_position);
      const double low_wavelen = old_ctx / s.low_freq_factor;
      const double high_wavelen = old_ctx / s.high_freq_factor;
      const double wavelen = 2 * std::numbers::pi / f;
      double scaled = wavelen > low_wavelen ? f / s.factor : f;
      const double smooth = (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
      if (medium) scaled = (1 - smooth) * scaled / s.factor + smooth * scaled;
      f = scaled;
    }
    inv_freq_.push_back(f);
  }
  keys_.resize(static_cast<size_t>(c_.num_layers));
  values_.resize(static_cast<size_t>(c_.num_layers));
}

const std::vector<float>& ReferenceModel::w(const std::string& name) const {
  auto it = w_.find(name);
  if (it == w_.end()) throw std::runtime_error("reference: no weight " + name);
  return it->second;
}

std::vector<std::vector<double>> ReferenceModel::step(const std::vector<int32_t>& tokens) {
  std::vector<std::vector<double>> out;
  for (int32_t t : tokens) {
    out.push_back(token(t));
    ++pos_;
  }
  return out;
}

// x [heads * head_dim] rotated at pos_: channel i pairs with i + D/2 (rotate_half).
void ReferenceModel::rope(std::vector<double>& x, int64_t heads) const {
  const auto d = static_cast<size_t>(c_.head_dim);
  const size_t half = d / 2;
  for (size_t h = 0; h < static_cast<size_t>(heads); ++h) {
    double* v = x.data() + h * d;
    for (size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pos_) * inv_freq_[i];
      const double cs = std::cos(angle), sn = std::sin(angle);
      const double a = v[i], b = v[i + half];
      v[i] = a * cs - b * sn;
      v[i + half] = b * cs + a * sn;
    }
  }
}

std::vector<double> ReferenceModel::attention(int64_t li, const std::vector<double>& h) {
  const int64_t d = c_.head_dim;
  std::vector<double> q = matvec(w(layer(li, "self_attn.q_proj.weight")), h);
  std::vector<double> k = matvec(w(layer(li, "self_attn.k_proj.weight")), h);
  std::vector<double> v = matvec(w(layer(li, "self_attn.v_proj.weight")), h);
  if (c_.architecture == Architecture::Qwen3) {
    rms_norm(q, w(layer(li, "self_attn.q_norm.weight")), c_.rms_norm_eps);
    rms_norm(k, w(layer(li, "self_attn.k_norm.weight")), c_.rms_norm_eps);
  }
  rope(q, c_.num_heads);
  rope(k, c_.num_kv_heads);
  auto& keys = keys_[static_cast<size_t>(li)];
  auto& values = values_[static_cast<size_t>(li)];
  keys.push_back(k);
  values.push_back(v);

  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int64_t group = c_.num_heads / c_.num_kv_heads;
  std::vector<double> out(q.size(), 0.0);
  for (int64_t hq = 0; hq < c_.num_heads; ++hq) {
    const int64_t hk = hq / group;  // repeat_kv: query head hq reads kv head hq / group
    std::vector<double> scores(keys.size());
    double top = -INFINITY;
    for (size_t p = 0; p < keys.size(); ++p) {
      double s = 0;
      for (int64_t i = 0; i < d; ++i) s += q[static_cast<size_t>(hq * d + i)] * keys[p][static_cast<size_t>(hk * d + i)];
      scores[p] = s * scale;
      top = std::max(top, scores[p]);
    }
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - top));
    for (size_t p = 0; p < keys.size(); ++p) {
      for (int64_t i = 0; i < d; ++i) {
        out[static_cast<size_t>(hq * d + i)] += scores[p] / sum * values[p][static_cast<size_t>(hk * d + i)];
      }
    }
  }
  return matvec(w(layer(li, "self_attn.o_proj.weight")), out);
}

std::vector<double> ReferenceModel::token(int32_t id) {
  const auto hidden = static_cast<size_t>(c_.hidden_size);
  const std::vector<float>& table = w("model.embed_tokens.weight");
  std::vector<double> x(table.begin() + static_cast<ptrdiff_t>(id * hidden),
                        table.begin() + static_cast<ptrdiff_t>((id + 1) * hidden));
  for (int64_t li = 0; li < c_.num_layers; ++li) {
    std::vector<double> h = x;
    rms_norm(h, w(layer(li, "input_layernorm.weight")), c_.rms_norm_eps);
    const std::vector<double> a = attention(li, h);
    for (size_t i = 0; i < hidden; ++i) x[i] += a[i];
    h = x;
    rms_norm(h, w(layer(li, "post_attention_layernorm.weight")), c_.rms_norm_eps);
    std::vector<double> gate = matvec(w(layer(li, "mlp.gate_proj.weight")), h);
    const std::vector<double> up = matvec(w(layer(li, "mlp.up_proj.weight")), h);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
    const std::vector<double> down = matvec(w(layer(li, "mlp.down_proj.weight")), gate);
    for (size_t i = 0; i < hidden; ++i) x[i] += down[i];
  }
  rms_norm(x, w("model.norm.weight"), c_.rms_norm_eps);
  return matvec(w(c_.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"), x);
}

Greedy greedy(const std::vector<double>& logits) {
  Greedy g;
  double best = -INFINITY, second = -INFINITY;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best) {
      second = best;
      best = logits[i];
      g.token = static_cast<int32_t>(i);
    } else if (logits[i] > second) {
      second = logits[i];
    }
  }
  g.margin = best - second;
  return g;
}

Greedy greedy(const std::vector<float>& logits) { return greedy(std::vector<double>(logits.begin(), logits.end())); }

bool is_quantized_weight(const std::string& name) {
  return name.ends_with("_proj.weight") || name == "model.embed_tokens.weight" || name == "lm_head.weight";
}

WeightMap dequantized(const ModelConfig& c, const WeightMap& weights, uint32_t group_size,
                      graph::DType scale_dtype) {
  WeightMap out = weights;
  for (auto& [name, v] : out) {
    if (!is_quantized_weight(name)) continue;
    // Rows are quantized independently, so stacking q, k and v into one matrix (as the loader
    // does) leaves each row's values as they are here.
    int64_t cols = c.hidden_size;
    if (name.ends_with("o_proj.weight")) cols = c.num_heads * c.head_dim;
    if (name.ends_with("down_proj.weight")) cols = c.intermediate_size;
    const int64_t rows = static_cast<int64_t>(v.size()) / cols;
    v = ops::dequantize_q4gsw(ops::quantize_q4gsw(v.data(), rows, cols, group_size, scale_dtype), rows, cols,
                              group_size, scale_dtype);
  }
  return out;
}

WeightMap rounded_f16(const WeightMap& weights) {
  WeightMap out = weights;
  for (auto& [name, v] : out) {
    for (float& x : v) x = graph::f16_to_f32(graph::f32_to_f16(x));
  }
  return out;
}

}  // namespace wgx::models::testing
