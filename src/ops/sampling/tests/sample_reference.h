// The host's reference of sample_token (graph/schemas/sampling.cpp, sample_token.wgsl): the same
// candidates, cuts and draw, in double, and how close the draw came to a boundary where the
// device's f32 sums could decide the other way; and of sample_token_penalized's penalty.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "ops/sampling/sample_params.h"

namespace wgx::ops::sampling::testing {

struct Draw {
  int32_t token = -1;
  // The smallest distance, relative to the kept weight, between a quantity the device compares
  // and what it is compared with (a cumulative weight and the draw's target, the weight before a
  // token and top_p's share, a weight and min_p): below ~1e-5 the device's rounding may go
  // either way.
  double margin = std::numeric_limits<double>::infinity();
  std::vector<int32_t> kept;  // the tokens left after top-k and the ties' bound, by value
};

// The k-th largest of `v` (k >= 1) counting equal values apiece; -inf where v has fewer.
inline float kth_largest(std::vector<float> v, int32_t k) {
  if (static_cast<int64_t>(v.size()) < k) return -std::numeric_limits<float>::infinity();
  std::nth_element(v.begin(), v.begin() + (k - 1), v.end(), std::greater<float>());
  return v[static_cast<size_t>(k - 1)];
}

struct Cand {
  float s;
  int32_t id;
};

// Candidates above `t`, then those equal to it, the lowest ids first, up to `cap` in all.
inline std::vector<Cand> cut(const std::vector<Cand>& c, float t, int64_t cap) {
  std::vector<Cand> out, ties;
  for (const Cand& x : c) {
    if (x.s > t) out.push_back(x);
    if (x.s == t) ties.push_back(x);
  }
  std::sort(ties.begin(), ties.end(), [](const Cand& a, const Cand& b) { return a.id < b.id; });
  for (const Cand& x : ties) {
    if (static_cast<int64_t>(out.size()) >= cap) break;
    out.push_back(x);
  }
  return out;
}

// The logits as sample_token_penalized's penalty leaves them: each token of `seen` (repeats
// allowed) penalized once, by the words' penalty (nothing changes where it is off).
inline std::vector<float> penalize(std::span<const float> logits, std::span<const int32_t> seen, const Words& w) {
  std::vector<float> out(logits.begin(), logits.end());
  if (w[6] == 0) return out;
  std::vector<bool> in(out.size(), false);
  for (int32_t t : seen) in.at(static_cast<size_t>(t)) = true;
  for (size_t i = 0; i < out.size(); ++i) {
    if (in[i]) out[i] = penalized(out[i], w);
  }
  return out;
}

inline Draw reference_draw(std::span<const float> logits, const Words& w, uint32_t counter) {
  Draw d;
  const int32_t k = std::clamp(w[0], 0, kMaxTopK);
  if (k == 0) {  // greedy: NaN skipped, infinities allowed
    for (size_t i = 0; i < logits.size(); ++i) {
      if (std::isnan(logits[i])) continue;
      if (d.token < 0 || logits[i] > logits[static_cast<size_t>(d.token)]) d.token = static_cast<int32_t>(i);
    }
    return d;
  }
  const float inv_t = std::bit_cast<float>(w[1]);
  const float top_p = std::bit_cast<float>(w[2]), min_p = std::bit_cast<float>(w[3]);
  const uint64_t seed = static_cast<uint32_t>(w[4]) | (static_cast<uint64_t>(static_cast<uint32_t>(w[5])) << 32);
  // Each chunk's candidates, then the merge's.
  std::vector<Cand> cands;
  for (size_t first = 0; first < logits.size(); first += kChunk) {
    std::vector<Cand> c;
    std::vector<float> v;
    for (size_t i = first; i < std::min<size_t>(logits.size(), first + kChunk); ++i) {
      const float s = logits[i] * inv_t;
      if (!std::isfinite(s)) continue;
      c.push_back({s, static_cast<int32_t>(i)});
      v.push_back(s);
    }
    const std::vector<Cand> kept = cut(c, kth_largest(v, k), kMaxTopK);
    cands.insert(cands.end(), kept.begin(), kept.end());
  }
  std::vector<float> v;
  for (const Cand& x : cands) v.push_back(x.s);
  std::vector<Cand> kept = cut(cands, kth_largest(v, k), kMaxKept);
  if (kept.empty()) return d;
  std::sort(kept.begin(), kept.end(), [](const Cand& a, const Cand& b) { return a.s > b.s || (a.s == b.s && a.id < b.id); });
  for (const Cand& x : kept) d.kept.push_back(x.id);
  const size_t n = kept.size();
  std::vector<double> weight(n), before(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    weight[i] = std::exp(static_cast<double>(kept[i].s) - static_cast<double>(kept[0].s));
    before[i + 1] = before[i] + weight[i];
  }
  const double total = before[n];
  auto near = [&](double a, double b) { d.margin = std::min(d.margin, std::abs(a - b) / total); };
  size_t m = 1;  // tokens left after top-p and min-p: a prefix
  while (m < n && before[m] < static_cast<double>(top_p) * total && weight[m] >= min_p) ++m;
  if (m < n) {  // the comparison that stopped the prefix, and the one before it passed
    near(before[m], static_cast<double>(top_p) * total);
    if (min_p > 0) near(weight[m] * total, static_cast<double>(min_p) * total);
  }
  if (m > 1) {
    near(before[m - 1], static_cast<double>(top_p) * total);
    if (min_p > 0) near(weight[m - 1] * total, static_cast<double>(min_p) * total);
  }
  const double target = static_cast<double>(uniform01(seed, counter)) * before[m];
  size_t pick = m - 1;
  for (size_t i = 0; i < m; ++i) {
    if (before[i + 1] > target) {
      pick = i;
      break;
    }
  }
  for (size_t i = 1; i <= m; ++i) near(before[i], target);
  d.token = kept[pick].id;
  return d;
}

}  // namespace wgx::ops::sampling::testing
