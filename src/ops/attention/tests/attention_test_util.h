// Helpers shared by the attention tests: the replay graph (KV caches as mutable buffers, updated
// in place, then sdpa_with_kv_cache over them), random steps, and a CPU reference in double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "numeric_test_util.h"
#include "runtime/program.h"

namespace wgx::runtime::testing {

struct AttnConfig {
  int64_t batch = 1, hq = 8, hkv = 2, dim = 64, max_seq = 64;
  int64_t max_new = 16;                    // S's range is 1 .. max_new; 1: a decode-only graph
  graph::DType kv = graph::DType::f32;     // cache dtype
  graph::DType io = graph::DType::f32;     // q, k, v and output dtype
  RuntimeOptions options;
  double scale = 0;                        // 0: 1/sqrt(dim)
};

// The graph every replay runs: k' = update_cache(k_cache, k, pos), mutated back; the same for v;
// out = sdpa_with_kv_cache(q, k', v', pos). `pinned`: input_pos is the constant 0 instead of a
// SymInt (a negative control). `fill` > 0: k and v have their own row count, a SymInt "fill" in
// [1, fill] (many cache rows written, the query's rows as q has them).
inline graph::Graph attention_graph(graph::GraphBuilder& b, const AttnConfig& c, bool pinned = false,
                                    int64_t fill = 0) {
  const graph::Dim seq = c.max_new == 1 ? graph::Dim(1) : graph::Dim(b.sym("seq", 1, c.max_new));
  const graph::Dim rows = fill > 0 ? graph::Dim(b.sym("fill", 1, fill)) : seq;
  const graph::ValueId pos = pinned ? b.scalar_int(0) : b.sym_value(b.sym("pos", 0, c.max_seq - 1));
  auto q = b.input("q", c.io, {c.batch, seq, c.hq, c.dim});
  auto k = b.input("k", c.io, {c.batch, rows, c.hkv, c.dim});
  auto v = b.input("v", c.io, {c.batch, rows, c.hkv, c.dim});
  auto kc = b.mutable_buffer("k_cache", c.kv, {c.batch, c.hkv, c.max_seq, c.dim});
  auto vc = b.mutable_buffer("v_cache", c.kv, {c.batch, c.hkv, c.max_seq, c.dim});
  auto k2 = b.op1("update_cache", {kc, k, pos}, {}, "k_update");
  auto v2 = b.op1("update_cache", {vc, v, pos}, {}, "v_update");
  b.mutate(kc, k2);
  b.mutate(vc, v2);
  b.output("out", b.op1("sdpa_with_kv_cache", {q, k2, v2, pos}, {{"scale", c.scale}}, "sdpa"));
  return b.build();
}

// One step's new tokens: q [B, S, Hq, D], k and v [B, S, Hkv, D], exact in the io dtype.
struct Step {
  int64_t pos = 0, seq = 0;
  std::vector<float> q, k, v;
};

inline std::vector<Step> make_steps(const AttnConfig& c, const std::vector<int64_t>& lengths, uint32_t seed) {
  std::vector<Step> steps;
  int64_t pos = 0;
  for (int64_t s : lengths) {
    Step st{pos, s, random_floats(static_cast<size_t>(c.batch * s * c.hq * c.dim), seed++),
            random_floats(static_cast<size_t>(c.batch * s * c.hkv * c.dim), seed++),
            random_floats(static_cast<size_t>(c.batch * s * c.hkv * c.dim), seed++)};
    if (c.io == graph::DType::f16) {
      for (auto* x : {&st.q, &st.k, &st.v}) {
        for (float& e : *x) e = round_f16(e);
      }
    }
    steps.push_back(std::move(st));
    pos += s;
  }
  return steps;
}

inline void set_values(Program& prog, const AttnConfig& c, std::string_view name, const std::vector<float>& x,
                       std::vector<int64_t> shape) {
  if (c.io == graph::DType::f16) {
    prog.set_input<uint16_t>(name, to_f16(x), std::move(shape));
  } else {
    prog.set_input<float>(name, x, std::move(shape));
  }
}

// Feeds a step's tokens and input_pos (when the graph has it as a SymInt) and runs it.
inline std::vector<float> run_step(Program& prog, const AttnConfig& c, const Step& st, bool has_pos = true) {
  if (has_pos) prog.set_sym("pos", st.pos);
  set_values(prog, c, "q", st.q, {c.batch, st.seq, c.hq, c.dim});
  set_values(prog, c, "k", st.k, {c.batch, st.seq, c.hkv, c.dim});
  set_values(prog, c, "v", st.v, {c.batch, st.seq, c.hkv, c.dim});
  prog.execute();
  return prog.read_f32("out");
}

// One query row's attention over cache rows 0 .. len - 1 in double: q [dim] (floats), row j's
// key and value elements k(j, d) and v(j, d); the output [dim] goes to `out`.
template <typename KeyAt, typename ValueAt>
void attend_row(const float* q, int64_t dim, int64_t len, double scale, KeyAt k, ValueAt v, float* out) {
  std::vector<double> p(static_cast<size_t>(len));
  double m = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t j = 0; j < len; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < dim; ++d) dot += double{q[d]} * k(j, d);
    p[j] = dot * scale;
    m = std::max(m, p[j]);
  }
  for (double& x : p) sum += (x = std::exp(x - m));
  for (int64_t d = 0; d < dim; ++d) {
    double acc = 0;
    for (int64_t j = 0; j < len; ++j) acc += p[j] * v(j, d);
    out[d] = static_cast<float>(acc / sum);
  }
}

// The token history and causal grouped-query attention over it, in double. `round_kv`: the
// history holds k and v as an f16 cache does (each rounded once to the nearest f16).
class AttnReference {
 public:
  AttnReference(const AttnConfig& c, bool round_kv)
      : c_(c), round_(round_kv), k_(static_cast<size_t>(c.batch * c.hkv * c.max_seq * c.dim)), v_(k_.size()) {}

  void append(const Step& st) {
    for (int64_t b = 0; b < c_.batch; ++b)
      for (int64_t s = 0; s < st.seq; ++s)
        for (int64_t h = 0; h < c_.hkv; ++h)
          for (int64_t d = 0; d < c_.dim; ++d) {
            const size_t src = static_cast<size_t>(((b * st.seq + s) * c_.hkv + h) * c_.dim + d);
            const size_t dst = cache_index(b, h, st.pos + s, d);
            k_[dst] = round_ ? round_f16(st.k[src]) : st.k[src];
            v_[dst] = round_ ? round_f16(st.v[src]) : st.v[src];
          }
  }

  // out [B, S, Hq, D] of the step's queries over the history (append the step first).
  std::vector<float> attend(const Step& st) const {
    std::vector<float> out(st.q.size());
    const int64_t group = c_.hq / c_.hkv;
    const double scale = c_.scale != 0 ? c_.scale : 1.0 / std::sqrt(static_cast<double>(c_.dim));
    for (int64_t b = 0; b < c_.batch; ++b)
      for (int64_t s = 0; s < st.seq; ++s)
        for (int64_t h = 0; h < c_.hq; ++h) {
          const size_t qb = static_cast<size_t>(((b * st.seq + s) * c_.hq + h) * c_.dim);
          attend_row(
              &st.q[qb], c_.dim, st.pos + s + 1, scale,
              [&](int64_t j, int64_t d) { return k_[cache_index(b, h / group, j, d)]; },
              [&](int64_t j, int64_t d) { return v_[cache_index(b, h / group, j, d)]; }, &out[qb]);
        }
    return out;
  }

  // The cache contents as read_state_f32 gives them: the history, zeros elsewhere.
  std::vector<float> cache(bool values) const {
    const std::vector<double>& x = values ? v_ : k_;
    return std::vector<float>(x.begin(), x.end());
  }
  double k(int64_t b, int64_t h, int64_t j, int64_t d) const { return k_[cache_index(b, h, j, d)]; }
  double v(int64_t b, int64_t h, int64_t j, int64_t d) const { return v_[cache_index(b, h, j, d)]; }

 private:
  size_t cache_index(int64_t b, int64_t h, int64_t j, int64_t d) const {
    return static_cast<size_t>(((b * c_.hkv + h) * c_.max_seq + j) * c_.dim + d);
  }
  AttnConfig c_;
  bool round_;
  std::vector<double> k_, v_;
};

// The route of the node labelled `label`, and why the routes before it were refused.
inline const RouteChoice& route_of(const Program& prog, const std::string& label) {
  for (const RouteChoice& r : prog.routes()) {
    if (r.label == label) return r;
  }
  throw std::invalid_argument("no node labelled " + label);
}

inline std::string rejected_text(const RouteChoice& r) {
  std::string s;
  for (const std::string& why : r.rejected) s += "\n  " + why;
  return s;
}

// The rope tests' settings: Llama 3's (theta 5e5 and its frequency scaling), Qwen3's, and the
// interleaved (GPT-J) layout.
inline constexpr RopeReference kLlamaRope{.theta = 5e5, .llama3 = true};
inline constexpr RopeReference kQwenRope{.theta = 1e6};
inline constexpr RopeReference kInterleavedRope{.theta = 1e4, .interleaved = true};

// The q or k rows of a step ([1, S, H, D], token s at position pos + s) as rope_update_cache
// gives them, in double: normalized (with `weight` and `eps`; not when `weight` is empty) and
// rotated by `rope`. With f16 activations (`f16`) the normalized values are rounded to f16 as the
// ops round them; a value at a rounding boundary may round the other way in f32, which moves an
// output by up to an f16 ulp of each of its pair's inputs: `spread` is that sum |a| + |b| per
// element (0 otherwise).
struct RopeRows {
  std::vector<double> values, spread;
};
inline RopeRows rope_rows(const RopeReference& rope, int64_t dim, bool f16, double eps, const std::vector<float>& x,
                          int64_t seq, int64_t heads, const std::vector<float>& weight, int64_t pos) {
  std::vector<double> in(x.begin(), x.end());
  std::vector<double> spread(x.size(), 0.0);
  if (!weight.empty()) {
    in = norm_ref(x, static_cast<size_t>(dim), false, eps, weight, {});
    if (f16) {
      const size_t d = static_cast<size_t>(dim);
      for (double& e : in) e = round_f16(e);
      for (size_t row = 0; row < x.size() / d; ++row) {
        for (size_t i = 0; i < d / 2; ++i) {
          const auto [a, b] = rope.channels(i, dim);
          spread[row * d + a] = spread[row * d + b] = std::abs(in[row * d + a]) + std::abs(in[row * d + b]);
        }
      }
    }
  }
  return {rope.rotate(in, seq, heads, dim, pos), spread};
}

// rope_rows' tolerance. f32 results: the project's (abs 1e-4 or rel 1e-3). f16 results: one f16
// ulp of the value plus one of each input it came from (RopeRows::spread), or 1e-4 where f16 is
// subnormal.
template <typename T>
::testing::AssertionResult rope_matches(const std::vector<float>& got, const std::vector<T>& want,
                                        const std::vector<T>& spread, bool f16) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i], err = std::abs(g - w);
    const bool ok = f16 ? err <= kF16Abs + kF16Rel * (std::abs(w) + spread[i])
                        : err <= 1e-4 || err <= 1e-3 * std::abs(w);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

// Values as an activation tensor holds them: f16 (`f16`, values already exact in f16) or f32.
inline std::vector<uint8_t> activation_bytes(bool f16, const std::vector<float>& x) {
  return f16 ? bytes_of(to_f16(x)) : bytes_of(x);
}

// A q/k norm weight [dim] around 1 (in [0.5, 1.5]), exact in f16 when `f16`.
inline std::vector<float> norm_weight(int64_t dim, bool f16, uint32_t seed) {
  const std::vector<float> w = random_floats(static_cast<size_t>(dim), seed, 0.5f, 1.5f);
  return f16 ? round_f16(w) : w;
}

}  // namespace wgx::runtime::testing
