// The sampler: each step on small vectors with the result worked out by hand, the whole chain in
// HF's order, sampled frequencies against the probabilities, and determinism under a seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "llm/sampler.h"

namespace wgx::llm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> logs(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

// Which entries survived (are finite).
std::vector<bool> kept(const std::vector<float>& logits) {
  std::vector<bool> out;
  for (float x : logits) out.push_back(std::isfinite(x));
  return out;
}

TEST(Rng, KnownOutputsAndRange) {
  // xoshiro256** whose state is four splitmix64 outputs of the seed (values from a separate
  // Python transcription of the two algorithms).
  Rng a(0);
  EXPECT_EQ(a.next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(a.next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(a.next(), 0x1a5f849d4933e6e0ull);
  Rng b(42);
  EXPECT_EQ(b.next(), 0x15780b2e0c2ec716ull);
  for (int i = 0; i < 10000; ++i) {
    const double u = b.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Sampling, RepetitionPenaltyDividesPositiveAndMultipliesNegativeOncePerToken) {
  std::vector<float> l = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f};
  // Token 1 appears twice: penalised once. Ids outside the logits are ignored.
  apply_repetition_penalty(l, std::vector<int32_t>{0, 1, 1, 4, 9, -3}, 2.0f);
  EXPECT_EQ(l, (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f, 0.0f}));
  apply_repetition_penalty(l, std::vector<int32_t>{0, 1, 2, 3}, 1.0f);
  EXPECT_EQ(l, (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f, 0.0f}));
}

TEST(Sampling, Temperature) {
  std::vector<float> l = {1.0f, -2.0f, 4.0f};
  apply_temperature(l, 2.0f);
  EXPECT_EQ(l, (std::vector<float>{0.5f, -1.0f, 2.0f}));
}

TEST(Sampling, TopKKeepsTiesWithTheKthLargest) {
  std::vector<float> l = {1, 3, 2, 3, 0};
  apply_top_k(l, 2);
  EXPECT_EQ(l, (std::vector<float>{-kInf, 3, -kInf, 3, -kInf}));
  l = {1, 3, 2, 2, 0};
  apply_top_k(l, 2);  // the 2nd largest is 2, held by two tokens
  EXPECT_EQ(l, (std::vector<float>{-kInf, 3, 2, 2, -kInf}));
  l = {1, 3, 2};
  apply_top_k(l, 0);
  EXPECT_EQ(l, (std::vector<float>{1, 3, 2}));
  apply_top_k(l, 7);
  EXPECT_EQ(l, (std::vector<float>{1, 3, 2}));
}

TEST(Sampling, TopKOnALargeVocabularyMatchesThePlainDefinition) {
  // 50,000 logits on a grid of 1/8 (many ties), a few NaN and infinities; k below and above the
  // heap's bound, and past the finite count. Reference: sort the finite values, keep those at
  // least the k-th.
  Rng rng(7);
  std::vector<float> l(50000);
  for (float& x : l) x = std::round(static_cast<float>(rng.uniform() * 40) * 8) / 8;
  for (size_t i : {3u, 999u, 4242u}) l[i] = std::numeric_limits<float>::quiet_NaN();
  for (size_t i : {17u, 20000u}) l[i] = -kInf;
  l[31337] = kInf;
  std::vector<float> finite;
  for (float x : l) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  std::sort(finite.begin(), finite.end(), std::greater<float>());
  for (int32_t k : {1, 2, 40, 1024, 1025, 5000, 49993, 49994, 60000}) {
    std::vector<float> got = l;
    apply_top_k(got, k);
    const float kth = static_cast<size_t>(k) <= finite.size() ? finite[static_cast<size_t>(k) - 1] : -kInf;
    for (size_t i = 0; i < l.size(); ++i) {
      const bool keep = std::isfinite(l[i]) && l[i] >= kth;
      ASSERT_EQ(std::isfinite(got[i]), keep) << "k " << k << ", token " << i << ", logit " << l[i];
      if (keep) {
        ASSERT_EQ(got[i], l[i]);
      }
    }
  }
}

TEST(Sampling, TopKBeforeTheTemperatureGivesTheSameDistributionsAndDraws) {
  // Sampler's default finds top-k on the logits as they are and scales only the tokens near or
  // above the k-th (fast_top_k); the plain way scales every logit first. 30,000 logits at several
  // temperatures and k (with top-p and min-p, as wgx run's defaults), a NaN and infinities: the
  // same distribution bit for bit and the same 200 draws. Tokens 8 and 9 are the largest logit v
  // and its float neighbour below, which scale to the same value at t = 0.3 (near 10 the scaled
  // values' ulp is 4 of the logits', their spacing 3.3): at top-k 1 token 9 ties with v once
  // scaled and stays, where a cut at the k-th largest logit as it is would drop it (the control:
  // it is below v and has a probability).
  constexpr float kTieT = 0.3f;
  float v = 9.999f;
  while (std::nextafter(v, -kInf) / kTieT != v / kTieT) v = std::nextafter(v, -kInf);
  Rng rng(11);
  std::vector<float> base(30000);
  for (float& x : base) x = static_cast<float>(rng.uniform() * 19.9 - 10);  // below v
  base[5] = std::numeric_limits<float>::quiet_NaN();
  base[6] = -kInf;
  base[7] = kInf;
  base[8] = v;
  base[9] = std::nextafter(v, -kInf);
  for (const float t : {0.05f, kTieT, 0.8f, 1.0f, 1.7f}) {
    for (const int32_t k : {1, 40, 1024}) {
      SCOPED_TRACE("temperature " + std::to_string(t) + ", top-k " + std::to_string(k));
      SamplingOptions o;
      o.temperature = t;
      o.top_k = k;
      o.top_p = 0.95f;
      o.min_p = k == 1 ? 0.0f : 1e-6f;
      o.seed = 3;
      SamplingOptions plain = o;
      plain.fast_top_k = false;
      Sampler fast_sampler(o), plain_sampler(plain);
      const std::vector<double> want = plain_sampler.distribution(base, {});
      ASSERT_EQ(fast_sampler.distribution(base, {}), want);
      if (k == 1 && t == kTieT) {
        EXPECT_LT(base[9], base[8]);
        EXPECT_GT(want[9], 0.0) << "the neighbour that ties once scaled is kept";
      }
      for (int d = 0; d < 200; ++d) {
        ASSERT_EQ(fast_sampler.sample(base, {}), plain_sampler.sample(base, {})) << "draw " << d;
      }
    }
  }
}

TEST(Sampling, TopPKeepsTheTokenThatCrossesP) {
  // Probabilities 0.15, 0.5, 0.05, 0.3. In order: 0.5 (before it 0), 0.3 (0.5), 0.15 (0.8),
  // 0.05 (0.95). A token stays while the ones before it hold less than p.
  const std::vector<float> base = logs({0.15, 0.5, 0.05, 0.3});
  auto run = [&](float p) {
    std::vector<float> l = base;
    apply_top_p(l, p);
    return kept(l);
  };
  EXPECT_EQ(run(0.4f), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(run(0.7f), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(run(0.85f), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(run(0.97f), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(run(1.0f), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(run(1e-6f), (std::vector<bool>{false, true, false, false}));  // at least one stays
  // Kept logits are unchanged (renormalising is the draw's business).
  std::vector<float> l = base;
  apply_top_p(l, 0.7f);
  EXPECT_EQ(l[1], base[1]);
  EXPECT_EQ(l[3], base[3]);
}

TEST(Sampling, TopPOnALargeVocabularySortsOnlyWhatItNeeds) {
  // 50,000 tokens where the nucleus is a few hundred: the result must equal the plain definition.
  Rng rng(5);
  std::vector<float> l(50000);
  for (float& x : l) x = static_cast<float>(rng.uniform() * 12);
  for (float p : {0.5f, 0.9f, 0.999f}) {
    std::vector<float> got = l;
    apply_top_p(got, p);
    // Reference: sort everything, same rule.
    std::vector<int32_t> order(l.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    double total = 0;
    for (float x : l) total += std::exp(static_cast<double>(x) - l[order[0]]);
    std::vector<bool> want(l.size(), false);
    double before = 0;
    for (size_t i = 0; i < order.size() && (i == 0 || before < p); ++i) {
      want[order[i]] = true;
      before += std::exp(static_cast<double>(l[order[i]]) - l[order[0]]) / total;
    }
    EXPECT_EQ(kept(got), want) << "p " << p;
  }
}

TEST(Sampling, MinPIsRelativeToTheMostLikelyToken) {
  const std::vector<float> base = logs({0.5, 0.3, 0.15, 0.05});
  auto run = [&](float m) {
    std::vector<float> l = base;
    apply_min_p(l, m);
    return kept(l);
  };
  EXPECT_EQ(run(0.2f), (std::vector<bool>{true, true, true, false}));   // below 0.1 goes
  EXPECT_EQ(run(0.5f), (std::vector<bool>{true, true, false, false}));  // below 0.25 goes
  EXPECT_EQ(run(1.0f), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(run(0.0f), (std::vector<bool>{true, true, true, true}));
}

TEST(Sampling, ArgmaxTakesTheFirstOfTies) {
  EXPECT_EQ(argmax(std::vector<float>{1, 5, 5, 2}), 1);
  EXPECT_EQ(argmax(std::vector<float>{-kInf, std::nanf(""), -3}), 2);
  EXPECT_THROW(argmax(std::vector<float>{std::nanf("")}), std::runtime_error);
}

TEST(Sampler, GreedyAppliesOnlyTheRepetitionPenalty) {
  SamplingOptions o;
  o.temperature = 0;
  o.top_k = 1;  // ignored for greedy, as HF ignores warpers without do_sample
  o.repetition_penalty = 2.0f;
  Sampler s(o);
  // 3 -> 1.5 after the penalty: token 1 (2.0) wins.
  EXPECT_EQ(s.sample(std::vector<float>{3, 2, 1}, std::vector<int32_t>{0}), 1);
  EXPECT_EQ(s.sample(std::vector<float>{3, 2, 1}, std::vector<int32_t>{}), 0);
  EXPECT_EQ(s.distribution(std::vector<float>{3, 2, 1}, std::vector<int32_t>{0}), (std::vector<double>{0, 1, 0}));
}

TEST(Sampler, TheChainRunsInHfOrder) {
  // logits 2, 1, 0, -1, 3; token 4 in the context.
  //   penalty 1.5:      2, 1, 0, -1, 2
  //   temperature 0.5:  4, 2, 0, -2, 4
  //   top-k 3:          tokens 0, 4, 1        probabilities e^0, e^0, e^-2 -> .4683 .4683 .0634
  //   top-p 0.95:       before token 1: .9366 < .95, all three stay
  //   min-p 0.2:        token 1: e^-2 = .135 of the top < .2, goes
  // -> 0.5 for tokens 0 and 4.
  SamplingOptions o;
  o.repetition_penalty = 1.5f;
  o.temperature = 0.5f;
  o.top_k = 3;
  o.top_p = 0.95f;
  o.min_p = 0.2f;
  const std::vector<float> logits = {2, 1, 0, -1, 3};
  const std::vector<int32_t> context = {4};
  auto p = Sampler(o).distribution(logits, context);
  EXPECT_NEAR(p[0], 0.5, 1e-12);
  EXPECT_NEAR(p[4], 0.5, 1e-12);
  EXPECT_EQ(p[1] + p[2] + p[3], 0.0);
  // Without min-p, token 1 stays with e^-2 / (2 + e^-2).
  o.min_p = 0;
  p = Sampler(o).distribution(logits, context);
  const double e2 = std::exp(-2.0);
  EXPECT_NEAR(p[1], e2 / (2 + e2), 1e-7);
  EXPECT_NEAR(p[0], 1 / (2 + e2), 1e-7);
  // top-p 0.9 (after top-k): token 1 has .9366 before it and goes.
  o.top_p = 0.9f;
  p = Sampler(o).distribution(logits, context);
  EXPECT_EQ(p[1], 0.0);
}

TEST(Sampler, DistributionIsTheSoftmaxOfTheTemperedLogits) {
  SamplingOptions o;
  o.temperature = 0.7f;
  const std::vector<float> logits = {0.3f, -1.2f, 2.0f, 0.9f};
  const auto p = Sampler(o).distribution(logits, {});
  double total = 0;
  std::vector<double> want;
  for (float x : logits) total += std::exp(static_cast<double>(x / 0.7f));
  for (size_t i = 0; i < logits.size(); ++i)
    EXPECT_NEAR(p[i], std::exp(static_cast<double>(logits[i] / 0.7f)) / total, 1e-9);
}

// Frequencies of many seeded draws against distribution(): within 5 standard deviations, and
// never a removed token.
void expect_frequencies(const SamplingOptions& o, const std::vector<float>& logits,
                        const std::vector<int32_t>& context) {
  constexpr int kDraws = 40000;
  Sampler s(o);
  const auto p = s.distribution(logits, context);
  std::vector<int> count(logits.size(), 0);
  for (int i = 0; i < kDraws; ++i) ++count[static_cast<size_t>(s.sample(logits, context))];
  for (size_t i = 0; i < p.size(); ++i) {
    const double f = static_cast<double>(count[i]) / kDraws;
    if (p[i] == 0) {
      EXPECT_EQ(count[i], 0) << "token " << i << " was removed but drawn";
    } else {
      EXPECT_NEAR(f, p[i], 5 * std::sqrt(p[i] * (1 - p[i]) / kDraws) + 1e-9) << "token " << i;
    }
  }
}

TEST(Sampler, SampledFrequenciesFollowTheProbabilities) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f, 0.0f, -3.0f, 1.9f};
  SamplingOptions o;
  o.seed = 1;
  expect_frequencies(o, logits, {});
  o.temperature = 0.6f;
  o.seed = 2;
  expect_frequencies(o, logits, {});
  o.temperature = 1.3f;
  o.top_k = 5;
  o.top_p = 0.8f;
  o.seed = 3;
  expect_frequencies(o, logits, {});
  o.top_k = 0;
  o.top_p = 1;
  o.min_p = 0.3f;
  o.repetition_penalty = 1.3f;
  o.seed = 4;
  expect_frequencies(o, logits, {1, 7});
}

TEST(Sampler, TheSameSeedGivesTheSameSequence) {
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_p = 0.95f;
  o.seed = 1234;
  const std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.0f, -0.1f};
  auto draws = [&](uint64_t seed) {
    o.seed = seed;
    Sampler s(o);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(s.sample(logits, {}));
    return out;
  };
  EXPECT_EQ(draws(1234), draws(1234));
  EXPECT_NE(draws(1234), draws(1235));
}

TEST(Sampler, RejectsOptionsOutOfRange) {
  auto bad = [](auto change) {
    SamplingOptions o;
    change(o);
    EXPECT_THROW(Sampler{o}, std::invalid_argument);
  };
  bad([](SamplingOptions& o) { o.top_k = -1; });
  bad([](SamplingOptions& o) { o.top_p = 0; });
  bad([](SamplingOptions& o) { o.min_p = 1.5f; });
  bad([](SamplingOptions& o) { o.repetition_penalty = 0; });
  bad([](SamplingOptions& o) { o.temperature = std::nanf(""); });
  bad([](SamplingOptions& o) { o.temperature = -0.5f; });
  bad([](SamplingOptions& o) { o.temperature = 1e30f; });
  bad([](SamplingOptions& o) { o.top_p = 1.5f; });
  // Positive control: the edges of each range are taken.
  for (float t : {0.0f, 100.0f}) {
    SamplingOptions o;
    o.temperature = t;
    o.top_p = 1.0f;
    o.min_p = 1.0f;
    EXPECT_NO_THROW(Sampler{o});
  }
}

TEST(Sampler, AllLogitsRemovedIsAnError) {
  SamplingOptions o;
  EXPECT_THROW(Sampler(o).sample(std::vector<float>{-kInf, std::nanf("")}, {}), std::runtime_error);
}

}  // namespace
}  // namespace wgx::llm
