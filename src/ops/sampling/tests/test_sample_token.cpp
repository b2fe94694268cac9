// sample_token against the host's reference of the same algorithm (sample_reference.h): greedy
// picks, draws over a grid of settings and positions (each the reference's token unless the draw
// lies within rounding of a boundary, which skips it), ties at the top-k cut beyond the bounds,
// fewer finite logits than k, nothing to pick, the draws' frequencies over many positions, and
// what the route refuses. sample_token_penalized: picks from the logits penalized over its seen
// set, the picked token added to the set, and a run of greedy picks that each skip the tokens
// picked before; sample_token leaves the penalty words alone. sample_rows: each row's token is
// the reference's for that row's logits, words and counter, whatever rows run beside it;
// sample_rows_penalized: the same, each row penalized by (and adding its token to) its slot's set.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graph/builder.h"
#include "runtime_test_util.h"
#include "sample_reference.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using ops::sampling::Words;
using ops::sampling::testing::penalize;
using ops::sampling::testing::reference_draw;
using testing::random_floats;
using testing::shared_context;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A program of one sample_token node over `vocab` logits, or with `penalized` of one
// sample_token_penalized node, its seen set a mutable buffer.
struct Sampler {
  int64_t vocab;
  std::unique_ptr<Program> prog;
  explicit Sampler(int64_t v, bool penalized = false) : vocab(v) {
    GraphBuilder b;
    const auto logits = b.input("logits", DType::f32, {1, v});
    const auto words = b.input("sampling", DType::i32, {8});
    const auto pos = b.sym_value(b.sym("pos", 0, 1 << 20));
    if (penalized) {
      const auto seen = b.mutable_buffer("seen", DType::i32, {ops::sampling::seen_words(v)});
      const auto outs = b.op("sample_token_penalized", {logits, words, pos, seen}, {});
      b.mutate(seen, outs[1]);
      b.output("token", outs[0]);
    } else {
      b.output("token", b.op1("sample_token", {logits, words, pos}, {}));
    }
    prog = std::make_unique<Program>(shared_context(), b.build(), b.weights());
  }
  void set(const std::vector<float>& logits, const Words& w) {
    prog->set_input<float>("logits", logits, {1, vocab});
    prog->set_input<int32_t>("sampling", w, {8});
  }
  // The seen set (penalized only): written from token ids, read as words.
  void set_seen(const std::vector<int32_t>& tokens) { prog->write_state<int32_t>("seen", bits(tokens)); }
  std::vector<int32_t> bits(const std::vector<int32_t>& tokens) const {
    std::vector<int32_t> w(static_cast<size_t>(ops::sampling::seen_words(vocab)), 0);
    for (int32_t t : tokens) w[static_cast<size_t>(t / 32)] |= static_cast<int32_t>(1u << (t % 32));
    return w;
  }
  std::vector<int32_t> seen_now() const {
    const std::vector<uint8_t> bytes = prog->read_state_storage("seen");
    std::vector<int32_t> w(bytes.size() / 4);
    std::memcpy(w.data(), bytes.data(), bytes.size());
    return w;
  }
  int32_t draw(uint32_t pos) {
    prog->set_sym("pos", pos);
    prog->execute();
    return static_cast<int32_t>(prog->read_f32("token").at(0));
  }
};

// Logits shaped like a language model's: most tokens far down, a few near the top.
std::vector<float> lm_logits(size_t n, uint32_t seed) {
  std::vector<float> v = random_floats(n, seed, -6.f, 2.f);
  const std::vector<float> lift = random_floats(n, seed + 1, 0.f, 1.f);
  for (size_t i = 0; i < n; ++i) {
    if (lift[i] < 0.01f) v[i] += 6.f * lift[i] * 100.f;  // ~1%: up to +6
  }
  return v;
}

Words words(int32_t k, float t, float p, float min_p, uint64_t seed) {
  return ops::sampling::sampling_words(k, t, p, min_p, seed);
}

TEST(SampleToken, GreedyTakesTheFirstLargest) {
  for (const int64_t vocab : {int64_t{37}, int64_t{9001}}) {
    Sampler s(vocab);
    EXPECT_EQ(s.prog->dispatches_per_execute(), 0u);
    std::vector<float> v(static_cast<size_t>(vocab));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 13) - 6.f;  // the max, many times
    std::vector<std::vector<float>> cases{v, v, v, v, v};
    cases[1][5] = kNaN;  // skipped
    cases[1][v.size() - 3] = 6.5f;
    cases[2][v.size() / 2] = kInf;  // greedy may pick an infinity
    for (float& x : cases[3]) x = -x;
    cases[3][0] = -0.f;  // -0 and +0 tie
    for (float& x : cases[4]) x = x == 6.f ? 0.f : x;
    for (const auto& c : cases) {
      s.set(c, ops::sampling::greedy_words());
      EXPECT_EQ(s.draw(3), reference_draw(c, ops::sampling::greedy_words(), 3).token) << vocab;
      EXPECT_EQ(s.prog->dispatches_per_execute(), 1u);
    }
    std::vector<float> nans(v.size(), kNaN);
    s.set(nans, ops::sampling::greedy_words());
    EXPECT_EQ(s.draw(0), -1) << "all NaN";
  }
}

// A grid of settings, each over several positions, on vocabularies of one chunk, a few, and
// Qwen3's. Every draw is the reference's unless it lies within rounding of a boundary.
TEST(SampleToken, DrawsMatchTheReference) {
  struct Setting {
    int32_t k;
    float t, p, min_p;
  };
  const std::vector<Setting> settings{{1, 1.f, 1.f, 0.f},      {5, 0.7f, 1.f, 0.f},   {40, 0.8f, 0.95f, 0.05f},
                                      {40, 1.3f, 0.5f, 0.f},   {128, 1.f, 0.9f, 0.f}, {128, 2.f, 1.f, 0.3f},
                                      {64, 0.25f, 0.99f, 0.01f}};
  int checked = 0, skipped = 0;
  for (const int64_t vocab : {int64_t{1000}, int64_t{9001}, int64_t{151936}}) {
    Sampler s(vocab);
    const std::vector<float> logits = lm_logits(static_cast<size_t>(vocab), static_cast<uint32_t>(vocab));
    for (size_t i = 0; i < settings.size(); ++i) {
      const Setting& g = settings[i];
      const Words w = words(g.k, g.t, g.p, g.min_p, 1000 + i);
      s.set(logits, w);
      for (uint32_t pos : {0u, 1u, 17u, 4095u, 100000u}) {
        const auto want = reference_draw(logits, w, pos);
        const int32_t got = s.draw(pos);
        if (want.margin < 1e-4) {
          ++skipped;
          continue;
        }
        ++checked;
        EXPECT_EQ(got, want.token) << "vocab " << vocab << " k " << g.k << " t " << g.t << " p " << g.p << " min_p "
                                   << g.min_p << " pos " << pos;
      }
    }
  }
  EXPECT_GE(checked, 9 * (checked + skipped) / 10) << skipped << " draws near a boundary";
}

// Draws over many positions stay within the k largest logits, where the chunks' thresholds
// differ: the merge's select counts only keys at or above the largest threshold, and the digit
// bound it returns may lie below it (a kernel that kept what lay between drew a chunk's own
// largest with k = 1: the third-largest logit here).
TEST(SampleToken, DrawsStayWithinTheKLargest) {
  const int64_t vocab = 9001;
  Sampler s(vocab);
  for (const uint32_t seed : {46u, 47u, 48u}) {
    const std::vector<float> logits = lm_logits(static_cast<size_t>(vocab), seed);
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)];
    });
    for (const int32_t k : {1, 2, 3, 40}) {
      s.set(logits, words(k, 1.5f, 1.f, 0.f, seed));
      for (uint32_t pos = 0; pos < 24; ++pos) {
        const int32_t got = s.draw(pos);
        const auto rank = std::find(order.begin(), order.end(), got) - order.begin();
        EXPECT_LT(rank, k) << "seed " << seed << " k " << k << " pos " << pos << ": token " << got;
      }
    }
  }
}

// Many logits equal to the k-th largest: a chunk keeps its ties up to kMaxTopK and the draw up
// to kMaxKept in all, the lowest indices first (the reference shows the bounds bite here).
TEST(SampleToken, TiesAtTheCutKeepTheLowestIndices) {
  const int64_t vocab = 9001;
  Sampler s(vocab);
  std::vector<float> v(static_cast<size_t>(vocab), 0.f);
  for (size_t i = 0; i < v.size(); i += 997) v[i] = 1.f;  // 10 above the ties
  for (size_t i = 3000; i < 3400; ++i) v[i] = 0.5f;       // ties past a chunk's bound
  for (size_t i = 6500; i < 6800; ++i) v[i] = 0.5f;
  const Words w = words(40, 1.f, 1.f, 0.f, 7);
  const auto want = reference_draw(v, w, 0);
  ASSERT_EQ(want.kept.size(), static_cast<size_t>(ops::sampling::kMaxKept));
  ASSERT_LT(want.kept.size(), 10u + 700u);  // the bounds drop ties
  s.set(v, w);
  std::map<int32_t, int> seen;
  for (uint32_t pos = 0; pos < 200; ++pos) {
    const auto ref = reference_draw(v, w, pos);
    if (ref.margin < 1e-4) continue;
    const int32_t got = s.draw(pos);
    ++seen[got];
    EXPECT_EQ(got, ref.token) << pos;
  }
  EXPECT_GT(seen.size(), 50u);  // the draws spread over the ties
}

TEST(SampleToken, FewerFiniteLogitsThanKAndNothingToPick) {
  const int64_t vocab = 5000;
  Sampler s(vocab);
  std::vector<float> v(static_cast<size_t>(vocab), -kInf);
  v[10] = 1.f;
  v[4321] = 1.5f;
  v[2222] = kNaN;
  v[77] = kInf;  // sampling skips infinities, as the host sampler does
  const Words w = words(40, 0.9f, 1.f, 0.f, 3);
  s.set(v, w);
  std::map<int32_t, int> seen;
  for (uint32_t pos = 0; pos < 40; ++pos) {
    const int32_t got = s.draw(pos);
    ++seen[got];
    EXPECT_EQ(got, reference_draw(v, w, pos).token) << pos;
  }
  EXPECT_EQ(seen.size(), 2u);
  std::vector<float> none(static_cast<size_t>(vocab), kNaN);
  none[9] = -kInf;
  s.set(none, w);
  EXPECT_EQ(s.draw(5), -1);
}

// Over many positions the draws follow the distribution (each token's count within 5 sigma of
// its expectation): a random stream stuck or biased would not.
TEST(SampleToken, DrawsFollowTheDistribution) {
  const int64_t vocab = 300;
  Sampler s(vocab);
  std::vector<float> v = random_floats(static_cast<size_t>(vocab), 11, -1.f, 1.f);
  const Words w = words(8, 0.5f, 1.f, 0.f, 12345);
  s.set(v, w);
  const auto ref = reference_draw(v, w, 0);
  std::vector<double> p(ref.kept.size());
  double total = 0;
  for (size_t i = 0; i < p.size(); ++i) total += p[i] = std::exp(2.0 * v[static_cast<size_t>(ref.kept[i])]);
  std::map<int32_t, int> count;
  const int n = 1500;
  for (int pos = 0; pos < n; ++pos) ++count[s.draw(static_cast<uint32_t>(pos))];
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = n * p[i] / total;
    EXPECT_NEAR(count[ref.kept[i]], e, 5 * std::sqrt(e) + 1) << "token " << ref.kept[i];
  }
  EXPECT_EQ(count.size(), p.size());
}

// Words out of range: a negative top_k is greedy, one above the bound is the bound.
TEST(SampleToken, TopKIsClampedToItsRange) {
  const int64_t vocab = 3000;
  Sampler s(vocab);
  const std::vector<float> v = lm_logits(static_cast<size_t>(vocab), 5);
  Words negative = words(-3, 1.f, 1.f, 0.f, 1);
  s.set(v, negative);
  EXPECT_EQ(s.draw(1), reference_draw(v, ops::sampling::greedy_words(), 1).token);
  for (uint32_t pos = 0; pos < 20; ++pos) {
    const Words big = words(100000, 3.f, 1.f, 0.f, pos);
    s.set(v, big);
    const auto ref = reference_draw(v, words(ops::sampling::kMaxTopK, 3.f, 1.f, 0.f, pos), pos);
    if (ref.margin < 1e-4) continue;
    EXPECT_EQ(s.draw(pos), ref.token) << pos;
  }
}

// What the route cannot take is refused when the program is built, saying why.
TEST(SampleToken, AVocabularyPastTheBoundOrAPositionTensorIsRefused) {
  auto build = [](int64_t vocab, bool position_tensor) {
    GraphBuilder b;
    const auto logits = b.input("logits", DType::f32, {1, vocab});
    const auto words = b.input("sampling", DType::i32, {8});
    const auto pos = position_tensor ? b.input("pos", DType::i32, {}) : b.sym_value(b.sym("pos", 0, 100));
    b.output("token", b.op1("sample_token", {logits, words, pos}, {}));
    Program p(shared_context(), b.build(), b.weights());
  };
  EXPECT_NO_THROW(build(ops::sampling::kMaxVocab, false));
  for (const auto& [vocab, tensor, why] : {std::tuple{ops::sampling::kMaxVocab + 1, false, "exceeds"},
                                           std::tuple{int64_t{100}, true, "position is a tensor"}}) {
    try {
      build(vocab, tensor);
      ADD_FAILURE() << why;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// ---- sample_token_penalized ---------------------------------------------------------------------

// A seen set that holds many of the likeliest tokens (where a penalty changes the most) and a
// random tenth of the rest.
std::vector<int32_t> seen_set(const std::vector<float>& logits, uint32_t seed) {
  const std::vector<float> u = random_floats(logits.size(), seed, 0.f, 1.f);
  std::vector<int32_t> seen;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (u[i] < (logits[i] > 1.f ? 0.5f : 0.1f)) seen.push_back(static_cast<int32_t>(i));
  }
  return seen;
}

// Greedy and drawn picks over settings with a penalty, an encouragement (below 1) and none, each
// the reference's pick from the penalized logits (unless a draw lies within rounding of a
// boundary), and the seen set afterwards the set with the pick added. The negative control: the
// penalty changes the reference's pick in many of the cases (a kernel that ignored the set or the
// words would fail them).
TEST(SampleTokenPenalized, PicksMatchThePenalizedReferenceAndJoinTheSeenSet) {
  struct Setting {
    int32_t k;
    float t, p, min_p, penalty;
  };
  const std::vector<Setting> settings{{0, 1.f, 1.f, 0.f, 1.5f},     {0, 1.f, 1.f, 0.f, 0.5f},
                                      {40, 0.8f, 0.95f, 0.05f, 1.3f}, {128, 1.f, 0.9f, 0.f, 3.f},
                                      {5, 0.7f, 1.f, 0.f, 0.7f},      {40, 0.8f, 0.95f, 0.05f, 1.f}};
  int checked = 0, skipped = 0, changed = 0;
  for (const int64_t vocab : {int64_t{1000}, int64_t{9001}, int64_t{151936}}) {
    Sampler s(vocab, true);
    const std::vector<float> logits = lm_logits(static_cast<size_t>(vocab), static_cast<uint32_t>(vocab) + 3);
    const std::vector<int32_t> seen = seen_set(logits, static_cast<uint32_t>(vocab));
    for (size_t i = 0; i < settings.size(); ++i) {
      const Setting& g = settings[i];
      const Words w = g.k == 0 ? ops::sampling::greedy_words(g.penalty)
                               : ops::sampling::sampling_words(g.k, g.t, g.p, g.min_p, 77 + i, g.penalty);
      s.set(logits, w);
      const std::vector<float> penalized = penalize(logits, seen, w);
      for (uint32_t pos : {0u, 5u, 4095u}) {
        s.set_seen(seen);
        const auto want = reference_draw(penalized, w, pos);
        if (want.token != reference_draw(logits, w, pos).token) ++changed;
        const int32_t got = s.draw(pos);
        const std::string what = "vocab " + std::to_string(vocab) + " setting " + std::to_string(i) + " pos " +
                                 std::to_string(pos);
        ASSERT_GE(got, 0) << what;
        std::vector<int32_t> after = seen;
        after.push_back(got);
        EXPECT_EQ(s.seen_now(), s.bits(after)) << what;
        if (want.margin < 1e-4) {
          ++skipped;
          continue;
        }
        ++checked;
        EXPECT_EQ(got, want.token) << what;
      }
    }
  }
  EXPECT_GE(checked, 9 * (checked + skipped) / 10) << skipped << " draws near a boundary";
  EXPECT_GE(changed, 15) << "the penalty changed too few picks to show it is applied";
}

// Greedy picks with a strong penalty, the set never written again: each pick joins the set, so
// the next is the largest logit not yet picked, in order. Without the penalty (the negative
// control) the same token comes every time.
TEST(SampleTokenPenalized, EachPickJoinsTheSetForTheNext) {
  const int64_t vocab = 5000;
  Sampler s(vocab, true);
  const std::vector<float> logits = random_floats(static_cast<size_t>(vocab), 31, 1.f, 2.f);  // all > 0
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)];
  });
  s.set(logits, ops::sampling::greedy_words(100.f));
  s.set_seen({});
  for (uint32_t step = 0; step < 12; ++step) EXPECT_EQ(s.draw(step), order[step]) << step;
  s.set(logits, ops::sampling::greedy_words());
  for (uint32_t step = 0; step < 3; ++step) EXPECT_EQ(s.draw(step), order[0]) << step;
}

// sample_token has no seen set: the penalty words change nothing.
TEST(SampleTokenPenalized, SampleTokenLeavesThePenaltyWordsAlone) {
  const int64_t vocab = 3000;
  Sampler plain(vocab);
  const std::vector<float> logits = lm_logits(static_cast<size_t>(vocab), 8);
  plain.set(logits, ops::sampling::greedy_words(1000.f));
  EXPECT_EQ(plain.draw(2), reference_draw(logits, ops::sampling::greedy_words(), 2).token);
}

// Rows of different logits, words (greedy and sampled) and counters in one sample_rows node,
// over steps of 7, then 3 and 5 rows in another order: every row's token is the reference's for
// its own row (unless its draw lies within rounding of a boundary). Negative control: the
// reference with each sampled row's counter taken from the next row disagrees with some tokens.
TEST(SampleRows, EachRowDrawsFromItsOwnLogitsWordsAndCounter) {
  const int64_t vocab = 9001, max_rows = 8;
  GraphBuilder b;
  const graph::Dim r = b.sym("R", 1, max_rows);
  b.output("tokens", b.op1("sample_rows", {b.input("logits", DType::f32, {r, vocab}), b.input("sampling", DType::i32, {r, 8}),
                                          b.input("counters", DType::i32, {r})}));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).route, "one_pass");

  struct Row {
    std::vector<float> logits;
    Words w;
    int32_t counter;
  };
  std::vector<Row> all;
  const std::vector<Words> settings{ops::sampling::greedy_words(), words(40, 0.8f, 0.95f, 0.05f, 11),
                                    words(5, 1.3f, 1.f, 0.f, 12),   words(128, 1.f, 0.9f, 0.f, 13),
                                    ops::sampling::greedy_words(), words(64, 0.25f, 0.99f, 0.01f, 14),
                                    words(1, 1.f, 1.f, 0.f, 15)};
  for (size_t i = 0; i < settings.size(); ++i) {
    all.push_back({lm_logits(static_cast<size_t>(vocab), 40 + static_cast<uint32_t>(i)), settings[i],
                   static_cast<int32_t>(3 + 17 * i)});
  }
  int checked = 0, off = 0;
  for (const std::vector<size_t>& step : std::vector<std::vector<size_t>>{{0, 1, 2, 3, 4, 5, 6}, {5, 1, 0}, {3, 6, 2, 4, 1}}) {
    std::vector<float> logits;
    std::vector<int32_t> w, counters;
    for (size_t i : step) {
      logits.insert(logits.end(), all[i].logits.begin(), all[i].logits.end());
      w.insert(w.end(), all[i].w.begin(), all[i].w.end());
      counters.push_back(all[i].counter);
    }
    const auto n = static_cast<int64_t>(step.size());
    prog.set_input<float>("logits", logits, {n, vocab});
    prog.set_input<int32_t>("sampling", w, {n, 8});
    prog.set_input<int32_t>("counters", counters, {n});
    prog.execute();
    EXPECT_EQ(prog.dispatches_per_execute(), 1u);
    const std::vector<float> got = prog.read_f32("tokens");
    ASSERT_EQ(got.size(), step.size());
    for (size_t j = 0; j < step.size(); ++j) {
      const Row& row = all[step[j]];
      const auto want = reference_draw(row.logits, row.w, static_cast<uint32_t>(row.counter));
      if (want.margin < 1e-4) continue;
      ++checked;
      EXPECT_EQ(static_cast<int32_t>(got[j]), want.token) << "row " << step[j] << " at " << j;
      if (row.w[0] != 0 && reference_draw(row.logits, row.w, static_cast<uint32_t>(row.counter + 17)).token != want.token) {
        ++off;
      }
    }
  }
  EXPECT_GE(checked, 13);
  EXPECT_GE(off, 2) << "another counter gives the same draws: the test cannot tell counters apart";
}

// sample_rows_penalized: rows in slots of their own (and one in none) over two steps of other
// compositions, each row's seen set its slot's, written per slot (write_state_at). Every row's
// token is the reference's for its logits penalized by its slot's set (a row of no slot: not
// penalized, whatever its words say), and the token joins its slot's set; a slot no row names
// keeps its set. Negative controls: the penalty changes the reference's token for several rows,
// and another slot's set gives another token for some.
TEST(SampleRowsPenalized, EachRowUsesItsSlotsSeenSetAndJoinsIt) {
  const int64_t vocab = 9001, max_rows = 8, slots = 5;
  const auto set_words = static_cast<size_t>(ops::sampling::seen_words(vocab));
  GraphBuilder b;
  const graph::Dim r = b.sym("R", 1, max_rows);
  const auto seen = b.mutable_buffer("seen", DType::i32, {slots, static_cast<int64_t>(set_words)});
  const auto outs = b.op("sample_rows_penalized", {b.input("logits", DType::f32, {r, vocab}),
                                                   b.input("sampling", DType::i32, {r, 8}),
                                                   b.input("counters", DType::i32, {r}), seen,
                                                   b.input("slots", DType::i32, {r})});
  b.mutate(seen, outs[1]);
  b.output("tokens", outs[0]);
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).route, "one_pass");
  const Sampler bits(vocab);  // for its bits()

  struct Row {
    std::vector<float> logits;
    Words w;
    int32_t counter, slot;
  };
  const std::vector<std::pair<Words, int32_t>> settings{
      {ops::sampling::greedy_words(1.5f), 0},
      {ops::sampling::sampling_words(40, 0.8f, 0.95f, 0.05f, 11, 1.3f), 1},
      {ops::sampling::greedy_words(3.f), -1},
      {ops::sampling::sampling_words(5, 0.7f, 1.f, 0.f, 12, 0.7f), 3},
      {ops::sampling::greedy_words(2.f), 4}};
  std::vector<Row> all;
  std::vector<std::vector<int32_t>> sets(static_cast<size_t>(slots));
  for (size_t i = 0; i < settings.size(); ++i) {
    all.push_back({lm_logits(static_cast<size_t>(vocab), 60 + static_cast<uint32_t>(i)), settings[i].first,
                   static_cast<int32_t>(5 + 13 * i), settings[i].second});
  }
  for (int32_t slot = 0; slot < slots; ++slot) {  // slot i's set is made from row i's logits (slot 2: no row)
    sets[static_cast<size_t>(slot)] = seen_set(all[static_cast<size_t>(slot)].logits, 90 + static_cast<uint32_t>(slot));
    prog.write_state_at<int32_t>("seen", static_cast<uint64_t>(slot) * set_words, bits.bits(sets[static_cast<size_t>(slot)]));
  }
  int checked = 0, changed = 0, other_set = 0;
  for (const std::vector<size_t>& step : std::vector<std::vector<size_t>>{{0, 1, 2, 3, 4}, {4, 2, 0}}) {
    std::vector<float> logits;
    std::vector<int32_t> w, counters, row_slots;
    for (size_t i : step) {
      logits.insert(logits.end(), all[i].logits.begin(), all[i].logits.end());
      w.insert(w.end(), all[i].w.begin(), all[i].w.end());
      counters.push_back(all[i].counter);
      row_slots.push_back(all[i].slot);
    }
    const auto n = static_cast<int64_t>(step.size());
    prog.set_input<float>("logits", logits, {n, vocab});
    prog.set_input<int32_t>("sampling", w, {n, 8});
    prog.set_input<int32_t>("counters", counters, {n});
    prog.set_input<int32_t>("slots", row_slots, {n});
    prog.execute();
    const std::vector<float> got = prog.read_f32("tokens");
    ASSERT_EQ(got.size(), step.size());
    for (size_t j = 0; j < step.size(); ++j) {
      const Row& row = all[step[j]];
      const auto counter = static_cast<uint32_t>(row.counter);
      const std::vector<int32_t> none;
      const std::vector<int32_t>& set = row.slot < 0 ? none : sets[static_cast<size_t>(row.slot)];
      const auto want = reference_draw(penalize(row.logits, set, row.w), row.w, counter);
      const auto token = static_cast<int32_t>(got[j]);
      ASSERT_GE(token, 0);
      if (row.slot >= 0) sets[static_cast<size_t>(row.slot)].push_back(token);
      if (want.margin < 1e-4) continue;
      ++checked;
      EXPECT_EQ(token, want.token) << "row " << step[j] << " at " << j;
      if (row.slot >= 0 && reference_draw(row.logits, row.w, counter).token != want.token) ++changed;
      const std::vector<int32_t>& another = sets[static_cast<size_t>((std::max(row.slot, 0) + 1) % slots)];
      if (reference_draw(penalize(row.logits, another, row.w), row.w, counter).token != want.token) ++other_set;
    }
  }
  const std::vector<uint8_t> stored = prog.read_state_storage("seen");
  ASSERT_EQ(stored.size(), 4 * set_words * static_cast<size_t>(slots));
  for (int32_t slot = 0; slot < slots; ++slot) {
    std::vector<int32_t> now(set_words);
    std::memcpy(now.data(), stored.data() + 4 * set_words * static_cast<size_t>(slot), 4 * set_words);
    EXPECT_EQ(now, bits.bits(sets[static_cast<size_t>(slot)])) << "slot " << slot;
  }
  EXPECT_GE(checked, 6);
  EXPECT_GE(changed, 3) << "the penalty changed too few tokens to show it is applied";
  EXPECT_GE(other_set, 2) << "another slot's set gives the same tokens: the test cannot tell sets apart";
}

}  // namespace
}  // namespace wgx::runtime
