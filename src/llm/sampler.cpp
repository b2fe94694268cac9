#include "llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace wgx::llm {

namespace {

constexpr float kRemoved = -std::numeric_limits<float>::infinity();

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

struct Candidate {
  int32_t id;
  float logit;
};

// Descending by logit, then ascending by id, so that ties are cut the same way every time.
bool more_likely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

float max_logit(const std::vector<Candidate>& c) {
  float m = kRemoved;
  for (const Candidate& x : c) m = std::max(m, x.logit);
  return m;
}

// The tokens whose logits are finite and at least `floor`, in id order. NaN and -inf cannot be
// drawn; +inf would make every probability NaN.
std::vector<Candidate> finite_candidates(std::span<const float> logits, float floor = kRemoved) {
  std::vector<Candidate> c;
  if (floor == kRemoved) c.reserve(logits.size());  // every token may stay
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isfinite(logits[i]) && logits[i] >= floor) c.push_back({static_cast<int32_t>(i), logits[i]});
  }
  return c;
}

// Where k is at most this, the k-th largest logit comes from one pass with a heap of the k
// largest so far (most logits fail the first comparison); above it, from nth_element on a copy.
constexpr int32_t kHeapTopK = 1024;

// The k-th largest finite logit (k >= 1), counting equal values apiece; -inf where fewer than k
// are finite. On a 128k vocabulary at k = 40 this is ~0.1 ms where nth_element over every
// candidate took ~3 ms: the most of a sampled decode step's host time.
float kth_largest(std::span<const float> logits, int32_t k) {
  const auto want = static_cast<size_t>(k);
  if (k <= kHeapTopK) {
    std::vector<float> heap;  // a min-heap of the largest so far
    heap.reserve(want);
    for (float x : logits) {
      if (!std::isfinite(x)) continue;
      if (heap.size() < want) {
        heap.push_back(x);
        std::push_heap(heap.begin(), heap.end(), std::greater<float>());
      } else if (x > heap.front()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<float>());
        heap.back() = x;
        std::push_heap(heap.begin(), heap.end(), std::greater<float>());
      }
    }
    return heap.size() < want ? kRemoved : heap.front();
  }
  std::vector<float> finite;
  for (float x : logits) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  if (finite.size() < want) return kRemoved;
  std::nth_element(finite.begin(), finite.begin() + (k - 1), finite.end(), std::greater<float>());
  return finite[want - 1];
}

// The candidates top-k leaves (all finite ones where k is 0): ties with the k-th largest stay.
std::vector<Candidate> top_k_candidates(std::span<const float> logits, int32_t k) {
  return finite_candidates(logits, k > 0 ? kth_largest(logits, k) : kRemoved);
}

void keep_top_p(std::vector<Candidate>& c, float p) {
  if (p >= 1.0f || c.size() <= 1) return;
  const double top = max_logit(c);
  double total = 0;
  for (const Candidate& x : c) total += std::exp(x.logit - top);
  // Sorting a 150k vocabulary every step is the slow part; the nucleus is usually small, so
  // sort a growing prefix until it holds p.
  for (size_t sorted = std::min<size_t>(c.size(), 64);; sorted = std::min(c.size(), sorted * 8)) {
    std::partial_sort(c.begin(), c.begin() + static_cast<ptrdiff_t>(sorted), c.end(), more_likely);
    double before = 0;  // probability of the tokens more likely than c[i]
    for (size_t i = 0; i < sorted; ++i) {
      if (i > 0 && before >= p) {
        c.resize(i);
        return;
      }
      before += std::exp(c[i].logit - top) / total;
    }
    if (sorted == c.size()) return;
  }
}

void keep_min_p(std::vector<Candidate>& c, float min_p) {
  if (min_p <= 0.0f || c.empty()) return;
  // prob / top_prob = exp(logit - top_logit).
  const double top = max_logit(c);
  std::erase_if(c, [&](const Candidate& x) { return std::exp(x.logit - top) < min_p; });
}

// Writes the kept candidates back: every other entry becomes -inf.
void restrict_to(std::span<float> logits, const std::vector<Candidate>& kept) {
  std::vector<float> out(logits.size(), kRemoved);
  for (const Candidate& x : kept) out[static_cast<size_t>(x.id)] = x.logit;
  std::copy(out.begin(), out.end(), logits.begin());
}

[[noreturn]] void no_finite_logit() {
  throw std::runtime_error("the logits hold no finite value (the model produced NaN or -inf everywhere)");
}

// top_k_candidates of the logits divided by `temperature` (> 0), without dividing every logit:
// a correctly rounded x / t is monotone in x, so the k-th largest scaled logit is the k-th
// largest logit scaled, and a token's scaled logit reaches it only where its logit is that one's
// or within a few ulps below. So one pass finds the k-th largest as the logits are, and a second
// scales only the tokens from a little below it up, keeping those the scaled comparison keeps:
// the same candidates, with the same scaled logits, as scaling the whole vocabulary first (a
// copy and a pass fewer). A logit whose scaled value overflows to -inf is dropped either way (it
// is below every finite one); one that overflows to +inf would be dropped by scaling first but
// counted among the k largest here, so it sends the caller the plain way (nullopt), as do k off
// and k above the heap's bound.
std::optional<std::vector<Candidate>> scaled_top_k(std::span<const float> logits, int32_t k, float temperature) {
  if (k <= 0 || k > kHeapTopK) return std::nullopt;
  const float kth = kth_largest(logits, k);
  const float kth_scaled = kth / temperature;  // -inf where fewer than k are finite
  // Below kth by a relative 2^-20 (and an absolute 2^-126 for values near zero): well past where
  // x / t can round to kth / t.
  const float lower = kth == kRemoved ? kRemoved : kth - (std::abs(kth) * 0x1p-20f + 0x1p-126f);
  std::vector<Candidate> c;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float x = logits[i];
    if (!std::isfinite(x) || x < lower) continue;
    const float scaled = x / temperature;
    if (scaled == std::numeric_limits<float>::infinity()) return std::nullopt;  // the largest are all here
    if (std::isfinite(scaled) && scaled >= kth_scaled) c.push_back({static_cast<int32_t>(i), scaled});
  }
  return c;
}

// The tokens left after every step, with their logits (temperature applied).
std::vector<Candidate> candidates(const SamplingOptions& o, std::span<const float> logits,
                                  std::span<const int32_t> context) {
  std::optional<std::vector<Candidate>> top;
  if (o.repetition_penalty == 1.0f && o.temperature > 0.0f && o.fast_top_k) {
    top = scaled_top_k(logits, o.top_k, o.temperature);
  }
  if (!top) {
    std::vector<float> work(logits.begin(), logits.end());
    apply_repetition_penalty(work, context, o.repetition_penalty);
    apply_temperature(work, o.temperature);
    top = top_k_candidates(work, o.top_k);
  }
  std::vector<Candidate>& c = *top;
  keep_top_p(c, o.top_p);
  keep_min_p(c, o.min_p);
  if (c.empty()) no_finite_logit();
  return std::move(c);
}

}  // namespace

void validate(const SamplingOptions& o) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!(o.temperature >= 0.0f && o.temperature <= 100.0f)) {
    fail("temperature " + std::to_string(o.temperature) + " must be in [0, 100] (0: greedy)");
  }
  if (o.top_k < 0) fail("top_k " + std::to_string(o.top_k) + " must be >= 0 (0 turns it off)");
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) fail("top_p " + std::to_string(o.top_p) + " must be in (0, 1] (1 turns it off)");
  if (!(o.min_p >= 0.0f && o.min_p <= 1.0f))
    fail("min_p " + std::to_string(o.min_p) + " must be in [0, 1] (0 turns it off)");
  if (!(o.repetition_penalty > 0.0f)) {
    fail("repetition penalty " + std::to_string(o.repetition_penalty) + " must be > 0 (1 turns it off)");
  }
}

Rng::Rng(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

void apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> context, float penalty) {
  if (penalty == 1.0f) return;
  // Each distinct token once: mark what was done so repeats in the context do not compound.
  std::vector<bool> done(logits.size(), false);
  for (int32_t id : context) {
    if (id < 0 || static_cast<size_t>(id) >= logits.size() || done[static_cast<size_t>(id)]) continue;
    done[static_cast<size_t>(id)] = true;
    float& x = logits[static_cast<size_t>(id)];
    x = x < 0 ? x * penalty : x / penalty;
  }
}

void apply_temperature(std::span<float> logits, float temperature) {
  if (temperature <= 0.0f || temperature == 1.0f) return;
  for (float& x : logits) x /= temperature;
}

void apply_top_k(std::span<float> logits, int32_t k) { restrict_to(logits, top_k_candidates(logits, k)); }

void apply_top_p(std::span<float> logits, float p) {
  auto c = finite_candidates(logits);
  keep_top_p(c, p);
  restrict_to(logits, c);
}

void apply_min_p(std::span<float> logits, float min_p) {
  auto c = finite_candidates(logits);
  keep_min_p(c, min_p);
  restrict_to(logits, c);
}

int32_t argmax(std::span<const float> logits) {
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (best < 0 || logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  if (best < 0) no_finite_logit();
  return best;
}

Sampler::Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) { validate(options); }

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> context) {
  if (options_.greedy()) {
    std::vector<float> work(logits.begin(), logits.end());
    apply_repetition_penalty(work, context, options_.repetition_penalty);
    return argmax(work);
  }
  const std::vector<Candidate> c = candidates(options_, logits, context);
  float top = c[0].logit;
  for (const Candidate& x : c) top = std::max(top, x.logit);
  std::vector<double> weight(c.size());
  double total = 0;
  for (size_t i = 0; i < c.size(); ++i) total += weight[i] = std::exp(static_cast<double>(c[i].logit) - top);
  const double u = rng_.uniform() * total;
  double cumulative = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    cumulative += weight[i];
    if (u < cumulative) return c[i].id;
  }
  return c.back().id;  // u rounded up to the total
}

std::vector<double> Sampler::distribution(std::span<const float> logits, std::span<const int32_t> context) const {
  std::vector<double> p(logits.size(), 0.0);
  if (options_.greedy()) {
    std::vector<float> work(logits.begin(), logits.end());
    apply_repetition_penalty(work, context, options_.repetition_penalty);
    p[static_cast<size_t>(argmax(work))] = 1.0;
    return p;
  }
  const std::vector<Candidate> c = candidates(options_, logits, context);
  float top = c[0].logit;
  for (const Candidate& x : c) top = std::max(top, x.logit);
  double total = 0;
  for (const Candidate& x : c) total += p[static_cast<size_t>(x.id)] = std::exp(static_cast<double>(x.logit) - top);
  for (double& x : p) x /= total;
  return p;
}

}  // namespace wgx::llm
