#include "bench/op_bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <utility>

#include "graph/storage.h"
#include "ops/quant/quantize.h"
#include "ops/sampling/sample_params.h"
#include "runtime/program.h"

namespace wgx::bench {

using graph::DType;
using graph::GraphBuilder;
using graph::Shape;

namespace {

std::vector<uint8_t> random_bytes_for(const graph::TensorType& t, const std::vector<int64_t>& shape,
                                      std::mt19937& rng) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint8_t> bytes(n * graph::element_bytes(t.dtype));
  for (uint64_t i = 0; i < n; ++i) {
    if (t.dtype == DType::f32) {
      const float f = dist(rng);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    } else if (t.dtype == DType::f16) {
      const uint16_t h = graph::f32_to_f16(dist(rng));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else if (t.dtype == DType::i32) {
      const int32_t v = static_cast<int32_t>(rng() % 1000);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  }
  return bytes;
}

std::vector<uint8_t> random_f32(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  std::vector<uint8_t> bytes(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float f = dist(rng);
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  }
  return bytes;
}

// A model geometry: hidden size, heads, KV heads, head dim, MLP size.
struct Geometry {
  const char* name;
  int64_t hidden, heads, kv_heads, head_dim, ffn, vocab;
};
constexpr Geometry kLlama1B{"llama-3.2-1b", 2048, 32, 8, 64, 8192, 128256};
constexpr Geometry kQwen06B{"qwen3-0.6b", 1024, 16, 8, 128, 3072, 151936};

OpCase linear_case(const Geometry& g, const char* what, int64_t k, int64_t n, int64_t m) {
  OpCase c;
  c.family = "linear";
  c.name = std::string("linear.f32 ") + g.name + " " + what + " M=" + std::to_string(m);
  c.build = [k, n, m](GraphBuilder& b) {
    auto x = b.input("x", DType::f32, {m, k});
    auto w = b.constant("w", DType::f32, {n, k}, random_f32(static_cast<size_t>(n * k), 1));
    b.output("y", b.op1("linear", {x, w}));
  };
  c.bytes = 4.0 * (static_cast<double>(n) * k + static_cast<double>(m) * k + static_cast<double>(m) * n);
  c.flops = 2.0 * static_cast<double>(m) * k * n;
  return c;
}

// A q4gsw weight (group 32, f32 scales) of [n, k] with random values.
graph::ValueId q4_weight(GraphBuilder& b, const char* name, int64_t n, int64_t k, uint32_t seed) {
  std::vector<uint8_t> f = random_f32(static_cast<size_t>(n * k), seed);
  std::vector<uint8_t> q = ops::quantize_q4gsw(reinterpret_cast<const float*>(f.data()), n, k, 32, DType::f32);
  graph::TensorType t{DType::q4gsw, {n, k}, {32, DType::f32}};
  return b.constant(name, t, std::move(q));
}

double q4_bytes(int64_t n, int64_t k) { return static_cast<double>(n * k) / 2 + 4.0 * static_cast<double>(n * k / 32); }

OpCase linear_q4_case(const Geometry& g, const char* what, int64_t k, int64_t n, int64_t m) {
  OpCase c;
  c.family = "linear";
  c.name = std::string("linear.q4 ") + g.name + " " + what + " M=" + std::to_string(m);
  c.build = [k, n, m](GraphBuilder& b) {
    auto x = b.input("x", DType::f32, {m, k});
    b.output("y", b.op1("linear", {x, q4_weight(b, "w", n, k, 1)}));
  };
  c.bytes = q4_bytes(n, k) + 4.0 * (static_cast<double>(m) * k + static_cast<double>(m) * n);
  c.flops = 2.0 * static_cast<double>(m) * k * n;
  return c;
}

// `op` (linear_qkv, linear_swiglu) of x and a q4 weight of n rows, or with `norm` its
// add_rms_norm_ form as a decoder layer runs it: x + residual (written out as "sum"),
// normalized with a norm weight, then the product, in one node.
OpCase fused_q4_case(const Geometry& g, const std::string& op, int64_t n, graph::Attrs attrs, int64_t out_cols,
                     int64_t m, bool norm, uint32_t seed) {
  OpCase c;
  c.family = "linear";
  c.name = (norm ? "add_rms_norm_" : "") + op + ".q4 " + g.name + " M=" + std::to_string(m);
  const int64_t k = g.hidden;
  c.build = [=](GraphBuilder& b) {
    std::vector<graph::ValueId> in{b.input("x", DType::f32, {m, k})};
    graph::Attrs a = attrs;
    if (norm) {
      in.push_back(b.input("r", DType::f32, {m, k}));
      in.push_back(b.constant("norm_w", DType::f32, {k}, random_f32(static_cast<size_t>(k), seed + 10)));
      a.insert_or_assign("eps", 1e-5);
    }
    in.push_back(q4_weight(b, "w", n, k, seed));
    const std::vector<graph::ValueId> outs = b.op(norm ? "add_rms_norm_" + op : op, in, a);
    for (size_t i = 0; i < outs.size(); ++i) b.output("y" + std::to_string(i), outs[i]);
  };
  const double mk = static_cast<double>(m) * k;
  c.bytes = q4_bytes(n, k) + 4.0 * (mk + static_cast<double>(m) * out_cols) + (norm ? 4.0 * (2 * mk + k) : 0.0);
  c.flops = 2.0 * static_cast<double>(m) * k * n;
  return c;
}

OpCase qkv_q4_case(const Geometry& g, int64_t m, bool norm) {
  const int64_t nq = g.heads * g.head_dim, nkv = g.kv_heads * g.head_dim, n = nq + 2 * nkv;
  return fused_q4_case(g, "linear_qkv", n, {{"splits", std::vector<int64_t>{nq, nkv, nkv}}}, n, m, norm, 2);
}

// The MLP's gate and up projections in one linear_swiglu node (interleaved rows, 2 * ffn of them).
OpCase swiglu_q4_case(const Geometry& g, int64_t m, bool norm) {
  return fused_q4_case(g, "linear_swiglu", 2 * g.ffn, {}, g.ffn, m, norm, 3);
}

// "mlp": the MLP as a decoder layer runs it with q4 weights, add_rms_norm_linear_swiglu_linear (the
// residual add and norm, gate/up with SwiGLU, then down_proj; at one row act goes from the first
// product to the second in int8).
OpCase mlp_q4_case(const Geometry& g, int64_t m) {
  OpCase c;
  c.family = "linear";
  c.name = std::string("mlp.q4 ") + g.name + " M=" + std::to_string(m);
  const int64_t k = g.hidden, f = g.ffn;
  c.build = [k, f, m](GraphBuilder& b) {
    const std::vector<graph::ValueId> outs = b.op(
        "add_rms_norm_linear_swiglu_linear",
        {b.input("x", DType::f32, {m, k}), b.input("r", DType::f32, {m, k}),
         b.constant("norm_w", DType::f32, {k}, random_f32(static_cast<size_t>(k), 13)), q4_weight(b, "wgu", 2 * f, k, 3),
         q4_weight(b, "wd", k, f, 4)},
        {{"eps", 1e-5}});
    for (size_t i = 0; i < outs.size(); ++i) b.output("y" + std::to_string(i), outs[i]);
  };
  const double mk = static_cast<double>(m) * k, mf = static_cast<double>(m) * f;
  c.bytes = q4_bytes(2 * f, k) + q4_bytes(k, f) + 4.0 * (4 * mk + k + mf);
  c.flops = 2.0 * static_cast<double>(m) * k * 3 * f;
  return c;
}

// Whisper's audio stem: conv1d(K 3, padding 1) from the mel bins, then conv1d(K 3, padding 1,
// stride 2) over the model's width, at 3,000 mel frames (30 s); with bias, in f32 or f16.
struct WhisperStem {
  const char* name;
  int64_t mels, width;
};
constexpr WhisperStem kWhisperTiny{"whisper-tiny", 80, 384};
constexpr WhisperStem kWhisperLargeV3{"whisper-large-v3", 128, 1280};

OpCase conv1d_case(const WhisperStem& w, bool second, DType dtype) {
  constexpr int64_t kFrames = 3000, kKernel = 3;
  const int64_t cin = second ? w.width : w.mels, cout = w.width, stride = second ? 2 : 1;
  const int64_t lout = (kFrames - 1) / stride + 1;
  OpCase c;
  c.family = "conv1d";
  c.name = std::string("conv1d.") + (dtype == DType::f16 ? "f16 " : "f32 ") + w.name + (second ? " conv2 " : " conv1 ") +
           std::to_string(cin) + "->" + std::to_string(cout) + " L=" + std::to_string(kFrames) +
           " K=3 stride=" + std::to_string(stride);
  c.build = [=](GraphBuilder& b) {
    std::mt19937 rng(1);
    const graph::TensorType wt{dtype, {cout, cin, kKernel}, {}}, bt{dtype, {cout}, {}};
    auto x = b.input("x", dtype, {1, cin, kFrames});
    auto weight = b.constant("w", wt, random_bytes_for(wt, {cout, cin, kKernel}, rng));
    auto bias = b.constant("b", bt, random_bytes_for(bt, {cout}, rng));
    b.output("y", b.op1("conv1d", {x, weight, bias}, {{"padding", 1}, {"stride", stride}}));
  };
  const double elem = static_cast<double>(graph::element_bytes(dtype));
  c.bytes = elem * static_cast<double>(cin * kFrames + cout * cin * kKernel + cout + cout * lout);
  c.flops = 2.0 * static_cast<double>(cout * lout * cin * kKernel);
  return c;
}

// Whisper's non-causal attention at 1,500 frames (30 s), f32 q, k and v: the encoder's
// self-attention (S = 1,500) and the decoder's cross-attention of one token (S = 1).
OpCase attention_case(const WhisperStem& w, int64_t s) {
  constexpr int64_t kPositions = 1500, kHeadDim = 64;
  const int64_t heads = w.width / kHeadDim;
  OpCase c;
  c.family = "attention";
  c.name = std::string("attention.f32 ") + w.name + (s == 1 ? " cross" : " encoder") + " S=" + std::to_string(s) +
           " T=" + std::to_string(kPositions) + " heads=" + std::to_string(heads);
  c.build = [=](GraphBuilder& b) {
    std::mt19937 rng(2);
    const graph::TensorType kv{DType::f32, {1, heads, kPositions, kHeadDim}, {}};
    auto q = b.input("q", DType::f32, {1, s, heads, kHeadDim});
    auto k = b.constant("k", kv, random_bytes_for(kv, {1, heads, kPositions, kHeadDim}, rng));
    auto v = b.constant("v", kv, random_bytes_for(kv, {1, heads, kPositions, kHeadDim}, rng));
    b.output("out", b.op1("attention", {q, k, v}));
  };
  c.bytes = 4.0 * static_cast<double>(2 * heads * kPositions * kHeadDim + 2 * s * heads * kHeadDim);
  c.flops = 4.0 * static_cast<double>(heads * kHeadDim) * static_cast<double>(s) * kPositions;
  return c;
}

// The encoder block's elementwise ops at 1,500 frames, f32: layer_norm with weight and bias over
// the model's width, and the MLP's exact gelu over four times the width.
OpCase encoder_elementwise_case(const WhisperStem& w, bool gelu) {
  constexpr int64_t kPositions = 1500;
  const int64_t n = gelu ? 4 * w.width : w.width;
  OpCase c;
  c.family = gelu ? "gelu" : "layer_norm";
  c.name = std::string(gelu ? "gelu.f32 " : "layer_norm.f32 ") + w.name + " [" + std::to_string(kPositions) + ", " +
           std::to_string(n) + "]";
  c.build = [=](GraphBuilder& b) {
    std::mt19937 rng(4);
    auto x = b.input("x", DType::f32, {1, kPositions, n});
    if (gelu) {
      b.output("y", b.op1("gelu", {x}));
      return;
    }
    const graph::TensorType t{DType::f32, {n}, {}};
    auto weight = b.constant("w", t, random_bytes_for(t, {n}, rng));
    auto bias = b.constant("b", t, random_bytes_for(t, {n}, rng));
    b.output("y", b.op1("layer_norm", {x, weight, bias}));
  };
  c.bytes = 4.0 * static_cast<double>(2 * kPositions * n + (gelu ? 0 : 2 * n));
  c.flops = (gelu ? 20.0 : 8.0) * static_cast<double>(kPositions * n);
  return c;
}

// Decoding's pick of the next token over the vocabulary: the argmax, or sample_token greedy or
// drawing (wgx run's default sampling; "penalized": sample_token_penalized with a repetition
// penalty of 1.1 too, its seen set starting empty), on logits uniform in [-1, 1] or, with
// `spread`, normal with that standard deviation (the synthetic models' logits spread ~45), and
// with `outlier` one of them at 14 times that (as the synthetic models' decode logits have the
// input token's own).
OpCase pick_case(const Geometry& g, const char* how, double spread = 0, bool outlier = false) {
  OpCase c;
  c.family = "sampling";
  c.name = std::string(how) + " " + g.name + " vocab=" + std::to_string(g.vocab) +
           (spread > 0 ? " logits N(0, " + std::to_string(static_cast<int>(spread)) + ")" : "") +
           (outlier ? " + one far above" : "");
  const int64_t v = g.vocab;
  const bool argmax = std::string(how) == "argmax";
  const bool penalized = std::string(how) == "sample_token.penalized";
  c.build = [v, argmax, penalized](GraphBuilder& b) {
    auto logits = b.input("logits", DType::f32, {1, v});
    if (argmax) {
      b.output("token", b.op1("argmax", {logits}, {{"dim", -1}, {"keepdim", true}}));
      return;
    }
    auto words = b.input("sampling", DType::i32, {8});
    auto pos = b.sym_value(b.sym("pos", 0, 1 << 20));
    if (!penalized) {
      b.output("token", b.op1("sample_token", {logits, words, pos}));
      return;
    }
    auto seen = b.mutable_buffer("seen", DType::i32, {ops::sampling::seen_words(v)});
    auto outs = b.op("sample_token_penalized", {logits, words, pos, seen});
    b.mutate(seen, outs[1]);
    b.output("token", outs[0]);
  };
  if (!argmax) {
    const float penalty = penalized ? 1.1f : 1.0f;
    const ops::sampling::Words w = std::string(how) == "sample_token.greedy"
                                       ? ops::sampling::greedy_words()
                                       : ops::sampling::sampling_words(40, 0.8f, 0.95f, 0.05f, 1, penalty);
    std::vector<uint8_t> bytes(sizeof w);
    std::memcpy(bytes.data(), w.data(), sizeof w);
    c.inputs = {{"sampling", bytes}};
    c.syms = {{"pos", 100}};
  }
  if (spread > 0) {
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.f, static_cast<float>(spread));
    std::vector<uint8_t> bytes(static_cast<size_t>(4 * v));
    for (int64_t i = 0; i < v; ++i) {
      const float x = dist(rng);
      std::memcpy(bytes.data() + 4 * i, &x, 4);
    }
    if (outlier) {
      const auto x = static_cast<float>(14 * spread);
      std::memcpy(bytes.data() + 4 * (v / 3), &x, 4);
    }
    c.inputs.emplace_back("logits", std::move(bytes));
  }
  c.bytes = 4.0 * static_cast<double>(v);
  return c;
}

OpCase add_case(const Geometry& g, int64_t m) {
  OpCase c;
  c.family = "elementwise";
  c.name = std::string("add.f32 ") + g.name + " residual M=" + std::to_string(m);
  const int64_t h = g.hidden;
  c.build = [h, m](GraphBuilder& b) {
    auto x = b.input("x", DType::f32, {m, h});
    auto r = b.input("r", DType::f32, {m, h});
    b.output("y", b.op1("add", {x, r}));
  };
  c.bytes = 12.0 * static_cast<double>(m * h);
  c.flops = static_cast<double>(m * h);
  return c;
}

// Half-size (f16) k and v caches [1, hkv, max_seq, d] with random contents (timing on zeros can
// flatter a kernel).
std::pair<graph::ValueId, graph::ValueId> random_caches(GraphBuilder& b, int64_t hkv, int64_t max_seq, int64_t d) {
  std::vector<uint8_t> init(static_cast<size_t>(hkv * max_seq * d) * 2);
  std::mt19937 rng(3);
  for (size_t i = 0; i < init.size(); i += 2) {
    const uint16_t h = graph::f32_to_f16(std::uniform_real_distribution<float>(-1.f, 1.f)(rng));
    std::memcpy(init.data() + i, &h, 2);
  }
  auto k0 = b.constant("k_init", DType::f16, {1, hkv, max_seq, d}, init);
  auto v0 = b.constant("v_init", DType::f16, {1, hkv, max_seq, d}, init);
  return {b.mutable_buffer("k_cache", k0), b.mutable_buffer("v_cache", v0)};
}

// Attention over a half-size (f16) cache holding `context` rows, S new queries at the end.
OpCase sdpa_case(const Geometry& g, int64_t s, int64_t context, const char* query_tile) {
  OpCase c;
  c.family = "sdpa";
  c.name = std::string("sdpa.f16cache ") + g.name + " S=" + std::to_string(s) + " ctx=" + std::to_string(context);
  if (query_tile) c.name += std::string(" q") + query_tile;
  const int64_t max_seq = 4096, hq = g.heads, hkv = g.kv_heads, d = g.head_dim;
  c.build = [=](GraphBuilder& b) {
    auto pos = b.sym("input_pos", 0, max_seq - s);
    auto q = b.input("q", DType::f32, {1, s, hq, d});
    const auto [kc, vc] = random_caches(b, hkv, max_seq, d);
    b.output("out", b.op1("sdpa_with_kv_cache", {q, kc, vc, b.sym_value(pos)}));
  };
  c.syms = {{"input_pos", context - s}};
  if (query_tile) c.options["sdpa_query_tile"] = query_tile;
  c.bytes = 2.0 * 2.0 * static_cast<double>(hkv * context * d) + 8.0 * static_cast<double>(s * hq * d);
  c.flops = 4.0 * static_cast<double>(hq * d) * static_cast<double>(s) * static_cast<double>(context);
  return c;
}

// A layer's attention prologue: rope on q and k (with the q/k norms, as Qwen3 has them, when
// `qk_norm`) and M new rows written into half-size (f16) caches of 4096 rows; as one
// rope_update_cache node, or (`chain`) as the rms_norm, rope and update_cache nodes it replaces.
OpCase rope_cache_case(const Geometry& g, int64_t m, bool qk_norm, bool chain) {
  OpCase c;
  c.family = "rope_update_cache";
  c.name = std::string(chain ? "rope_update_cache.chain" : "rope_update_cache") + ".f32.f16cache " + g.name +
           (qk_norm ? " qk_norm" : "") + " M=" + std::to_string(m);
  const int64_t max_seq = 4096, hq = g.heads, hkv = g.kv_heads, d = g.head_dim;
  c.build = [=](GraphBuilder& b) {
    const graph::ValueId pos = b.sym_value(b.sym("input_pos", 0, max_seq - m));
    graph::ValueId q = b.input("q", DType::f32, {1, m, hq, d}), k = b.input("k", DType::f32, {1, m, hkv, d});
    const graph::ValueId v = b.input("v", DType::f32, {1, m, hkv, d});
    const graph::ValueId kc = b.mutable_buffer("k_cache", DType::f16, {1, hkv, max_seq, d});
    const graph::ValueId vc = b.mutable_buffer("v_cache", DType::f16, {1, hkv, max_seq, d});
    graph::ValueId qn = graph::kNoValue, kn = graph::kNoValue;
    if (qk_norm) {
      qn = b.constant("q_norm", DType::f32, {d}, random_f32(static_cast<size_t>(d), 4));
      kn = b.constant("k_norm", DType::f32, {d}, random_f32(static_cast<size_t>(d), 5));
    }
    const graph::Attrs rope{{"theta", 500000.0}};
    if (chain) {
      if (qk_norm) {
        q = b.op1("rms_norm", {q, qn});
        k = b.op1("rms_norm", {k, kn});
      }
      b.output("q_rotated", b.op1("rope", {q, pos}, rope));
      b.mutate(kc, b.op1("update_cache", {kc, b.op1("rope", {k, pos}, rope), pos}));
      b.mutate(vc, b.op1("update_cache", {vc, v, pos}));
      return;
    }
    std::vector<graph::ValueId> in = {q, k, v, kc, vc, pos};
    if (qk_norm) in.insert(in.end(), {qn, kn});
    auto outs = b.op("rope_update_cache", in, rope);
    b.output("q_rotated", outs[0]);
    b.mutate(kc, outs[1]);
    b.mutate(vc, outs[2]);
  };
  c.syms = {{"input_pos", 100}};
  const double q_elems = static_cast<double>(m * hq * d), kv_elems = static_cast<double>(m * hkv * d);
  c.bytes = 4.0 * (q_elems + 2 * kv_elems) + 4.0 * q_elems + 2.0 * 2 * kv_elems;
  c.flops = 8.0 * (q_elems + kv_elems);
  return c;
}

// A decode step's attention with its prologue (the q/k norms as Qwen3 has them, when `qk_norm`,
// rope, the new k and v rows written into half-size caches holding `context` rows), as one
// rope_sdpa_with_kv_cache node, or (`separate`) as the rope_update_cache and sdpa_with_kv_cache
// nodes it replaces: one dispatch more. With `projection`, the output projection (q4) too: one
// rope_sdpa_linear node, or (`separate`) rope_sdpa_with_kv_cache and linear.
OpCase rope_sdpa_case(const Geometry& g, int64_t context, bool qk_norm, bool separate, bool projection = false) {
  OpCase c;
  c.family = projection ? "rope_sdpa_linear" : "rope_sdpa";
  c.name = c.family + (separate ? ".separate" : "") + ".f32.f16cache " + g.name + (qk_norm ? " qk_norm" : "") +
           " ctx=" + std::to_string(context);
  const int64_t max_seq = 4096, hq = g.heads, hkv = g.kv_heads, d = g.head_dim;
  c.build = [=](GraphBuilder& b) {
    const graph::ValueId pos = b.sym_value(b.sym("input_pos", 0, max_seq - 1));
    const auto [kc, vc] = random_caches(b, hkv, max_seq, d);
    std::vector<graph::ValueId> in = {b.input("q", DType::f32, {1, 1, hq, d}), b.input("k", DType::f32, {1, 1, hkv, d}),
                                      b.input("v", DType::f32, {1, 1, hkv, d}), kc, vc, pos};
    if (qk_norm) {
      in.push_back(b.constant("q_norm", DType::f32, {d}, random_f32(static_cast<size_t>(d), 4)));
      in.push_back(b.constant("k_norm", DType::f32, {d}, random_f32(static_cast<size_t>(d), 5)));
    }
    const graph::Attrs rope{{"theta", 500000.0}};
    std::vector<graph::ValueId> outs;
    if (projection) {
      const graph::ValueId w = q4_weight(b, "wo", g.hidden, hq * d, 6);
      if (separate) {
        outs = b.op("rope_sdpa_with_kv_cache", in, rope);
        const graph::ValueId merged = b.op1("reshape", {outs[0]}, {{"shape", graph::Shape{1, 1, hq * d}}});
        outs[0] = b.op1("linear", {merged, w});
      } else {
        in.insert(in.begin() + 6, w);
        outs = b.op("rope_sdpa_linear", in, rope);
        outs[0] = outs[3];
      }
    } else if (separate) {
      outs = b.op("rope_update_cache", in, rope);
      outs[0] = b.op1("sdpa_with_kv_cache", {outs[0], outs[1], outs[2], pos});
    } else {
      outs = b.op("rope_sdpa_with_kv_cache", in, rope);
    }
    b.output("out", outs[0]);
    b.mutate(kc, outs[1]);
    b.mutate(vc, outs[2]);
  };
  c.syms = {{"input_pos", context - 1}};
  c.bytes = 2.0 * 2.0 * static_cast<double>(hkv * context * d) + 8.0 * static_cast<double>((hq + 2 * hkv) * d);
  c.flops = 4.0 * static_cast<double>(hq * d) * static_cast<double>(context);
  if (projection) {  // the q4 weight and the output
    c.bytes += q4_bytes(g.hidden, hq * d) + 4.0 * static_cast<double>(g.hidden);
    c.flops += 2.0 * static_cast<double>(g.hidden * hq * d);
  }
  return c;
}

OpCase rows_case(const Geometry& g, const char* op, int64_t m) {
  OpCase c;
  c.family = op;
  c.name = std::string(op) + ".f32 " + g.name + " M=" + std::to_string(m);
  const int64_t h = g.hidden, f = g.ffn, heads = g.heads, d = g.head_dim;
  const std::string name = op;
  c.build = [=](GraphBuilder& b) {
    if (name == "swiglu") {
      auto gate = b.input("gate", DType::f32, {m, f});
      auto up = b.input("up", DType::f32, {m, f});
      b.output("y", b.op1("swiglu", {gate, up}));
    } else if (name == "add_rms_norm") {
      auto x = b.input("x", DType::f32, {m, h});
      auto r = b.input("r", DType::f32, {m, h});
      auto w = b.constant("w", DType::f32, {h}, random_f32(static_cast<size_t>(h), 2));
      auto outs = b.op("add_rms_norm", {x, r, w});
      b.output("y", outs[0]);
      b.output("sum", outs[1]);
    } else {  // rope
      auto pos = b.sym("input_pos", 0, 4096);
      auto x = b.input("x", DType::f32, {1, m, heads, d});
      b.output("y", b.op1("rope", {x, b.sym_value(pos)}, {{"theta", 500000.0}}));
    }
  };
  if (name == "rope") c.syms = {{"input_pos", 100}};
  const double elems = name == "swiglu" ? static_cast<double>(m * f) : name == "rope" ? static_cast<double>(m * heads * d)
                                                                                       : static_cast<double>(m * h);
  c.bytes = 4.0 * elems * (name == "swiglu" ? 3 : name == "rope" ? 2 : 4);
  c.flops = elems * 8;
  return c;
}

}  // namespace

std::vector<OpCase> model_cases() {
  std::vector<OpCase> cases;
  for (const Geometry& g : {kLlama1B, kQwen06B}) {
    for (int64_t m : {1, 128, 512}) {
      cases.push_back(add_case(g, m));
      cases.push_back(linear_case(g, "q_proj", g.hidden, g.heads * g.head_dim, m));
      cases.push_back(linear_case(g, "gate_proj", g.hidden, g.ffn, m));
      cases.push_back(linear_case(g, "down_proj", g.ffn, g.hidden, m));
      for (bool norm : {false, true}) cases.push_back(qkv_q4_case(g, m, norm));
      cases.push_back(linear_q4_case(g, "o_proj", g.heads * g.head_dim, g.hidden, m));
      cases.push_back(linear_q4_case(g, "gate_proj", g.hidden, g.ffn, m));
      for (bool norm : {false, true}) cases.push_back(swiglu_q4_case(g, m, norm));
      cases.push_back(linear_q4_case(g, "down_proj", g.ffn, g.hidden, m));
      cases.push_back(mlp_q4_case(g, m));
      if (m == 1) cases.push_back(linear_q4_case(g, "lm_head", g.hidden, g.vocab, m));  // last token only
      for (const char* op : {"rope", "swiglu", "add_rms_norm"}) cases.push_back(rows_case(g, op, m));
      const bool qk_norm = std::string(g.name) == kQwen06B.name;
      for (bool chain : {false, true}) cases.push_back(rope_cache_case(g, m, qk_norm, chain));
    }
    for (int64_t context : {128, 1024, 4096}) {
      cases.push_back(sdpa_case(g, 1, context, nullptr));
      const bool qk_norm = std::string(g.name) == kQwen06B.name;
      for (bool separate : {false, true}) cases.push_back(rope_sdpa_case(g, context, qk_norm, separate));
      for (bool separate : {false, true}) cases.push_back(rope_sdpa_case(g, context, qk_norm, separate, true));
    }
    for (int64_t s : {128, 512}) {
      cases.push_back(sdpa_case(g, s, s, nullptr));
      cases.push_back(sdpa_case(g, s, s, "32"));
    }
    for (const char* how : {"argmax", "sample_token.greedy", "sample_token.drawn"}) cases.push_back(pick_case(g, how));
    cases.push_back(pick_case(g, "sample_token.drawn", 45));
    cases.push_back(pick_case(g, "sample_token.drawn", 45, true));
    cases.push_back(pick_case(g, "sample_token.penalized", 45, true));
  }
  for (const WhisperStem& w : {kWhisperTiny, kWhisperLargeV3}) {
    for (DType dtype : {DType::f32, DType::f16}) {
      for (bool second : {false, true}) cases.push_back(conv1d_case(w, second, dtype));
    }
    for (int64_t s : {1500, 1}) cases.push_back(attention_case(w, s));
    for (bool gelu : {false, true}) cases.push_back(encoder_elementwise_case(w, gelu));
  }
  return cases;
}

constexpr int kStreamRepeats = 32;  // executions per stream
constexpr int kStreams = 5;

OpResult run_case(gpu::Context& ctx, const OpCase& c, int iterations, int warmup_ms) {
  GraphBuilder b;
  c.build(b);
  const graph::Graph g = b.build();
  runtime::Program prog(ctx, g, b.weights(), c.options);
  prog.set_timing(gpu::Timing::Dispatches);
  for (const auto& [name, value] : c.syms) prog.set_sym(name, value);
  std::mt19937 rng(7);
  for (const graph::NamedValue& in : g.inputs) {
    std::vector<int64_t> shape = graph::max_shape(g.type(in.value).shape, g.syms);
    const auto given = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const auto& i) { return i.first == in.name; });
    prog.set_input(in.name, given != c.inputs.end() ? given->second : random_bytes_for(g.type(in.value), shape, rng),
                   shape);
  }
  prog.execute();  // warm-up: first-use costs stay out of the numbers
  // and the clocks up: a GPU left idle while the case's weights upload (the H200 drops to a
  // sixth of its clock) needs a fraction of a second of load before it runs at full speed.
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(warmup_ms)) prog.execute(kStreamRepeats);
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    prog.execute();
    double us = 0;
    for (const gpu::DispatchTiming& t : prog.last_timings()) us += t.microseconds();
    times.push_back(us);
  }
  std::sort(times.begin(), times.end());
  // The same op in a stream: kStreamRepeats executions recorded back to back, timed per pass.
  prog.set_timing(gpu::Timing::Passes);
  std::vector<double> streams;
  for (int i = 0; i < kStreams; ++i) {
    prog.execute(kStreamRepeats);
    const std::vector<gpu::DispatchTiming>& t = prog.last_timings();
    if (!t.empty()) streams.push_back(static_cast<double>(t.back().end_ns - t.front().begin_ns) * 1e-3 / kStreamRepeats);
  }
  std::sort(streams.begin(), streams.end());
  OpResult r;
  if (!streams.empty()) r.stream_microseconds = streams[streams.size() / 2];
  r.name = c.name;
  for (const runtime::RouteChoice& rc : prog.routes()) {
    if (rc.route != "view") r.routes += (r.routes.empty() ? "" : "+") + rc.route;
  }
  r.microseconds = times[times.size() / 2];
  r.dispatches = prog.dispatches_per_execute();
  // Rates from the stream's time: the op's cost where it runs among other dispatches.
  const double us = r.stream_microseconds > 0 ? r.stream_microseconds : r.microseconds;
  if (us > 0) {
    r.gbps = c.bytes / (us * 1e3);
    r.gflops = c.flops / (us * 1e3);
  }
  return r;
}

}  // namespace wgx::bench
