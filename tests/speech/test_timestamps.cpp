// Whisper's timestamp rules (speech/timestamps.h) on made-up logits over a small vocabulary:
// text ids 0..9, <|endoftext|> 10, <|notimestamps|> 11, timestamps 12..31 (<|0.00|>.. <|0.38|>).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "speech/timestamps.h"

namespace wgx::speech {
namespace {

constexpr TimestampTokens kIds{10, 11, 12, 5};
constexpr size_t kVocab = 32;

std::vector<float> flat() { return std::vector<float>(kVocab, 0.0f); }
bool allowed(const std::vector<float>& l, int32_t id) { return std::isfinite(l[static_cast<size_t>(id)]); }

TEST(TimestampRules, WindowStartsWithAnEarlyTimestamp) {
  std::vector<float> l = flat();
  l[3] = 100;  // the likeliest token is text, yet the first must be a timestamp
  apply_timestamp_rules(l, {}, kIds);
  for (int32_t id = 0; id < 12; ++id) EXPECT_FALSE(allowed(l, id)) << id;
  for (int32_t id = 12; id <= 12 + 5; ++id) EXPECT_TRUE(allowed(l, id)) << id;
  for (int32_t id = 18; id < 32; ++id) EXPECT_FALSE(allowed(l, id)) << id;  // max_initial_index 5
}

TEST(TimestampRules, PairsAndOrder) {
  // After text then one timestamp (a segment's end): only timestamps from it on, or the end
  // (likelier here than the timestamps together, which would otherwise rule it out too).
  std::vector<float> l = flat();
  l[10] = 5;
  const std::vector<int32_t> seq{14, 3, 4, 20};
  apply_timestamp_rules(l, seq, kIds);
  for (int32_t id = 0; id < 10; ++id) EXPECT_FALSE(allowed(l, id)) << id;
  EXPECT_TRUE(allowed(l, 10));
  for (int32_t id = 12; id < 20; ++id) EXPECT_FALSE(allowed(l, id)) << id;  // never back
  for (int32_t id = 20; id < 32; ++id) EXPECT_TRUE(allowed(l, id)) << id;   // equal to the end is fine

  // After a pair: no timestamp, text comes (the pair's value is used up).
  l = flat();
  l[25] = 50;
  const std::vector<int32_t> pair{14, 3, 20, 20};
  apply_timestamp_rules(l, pair, kIds);
  for (int32_t id = 12; id < 32; ++id) EXPECT_FALSE(allowed(l, id)) << id;
  EXPECT_TRUE(allowed(l, 5));
  EXPECT_FALSE(allowed(l, 11));  // <|notimestamps|> never
}

TEST(TimestampRules, TimestampMassWins) {
  // Text: one token at 1.0; 20 timestamps at 0.0 each: together e^0 * 20 > e^1, so text goes.
  std::vector<float> l(kVocab, 0.0f);
  for (int32_t id = 0; id < 12; ++id) l[static_cast<size_t>(id)] = -10;
  l[4] = 1.0f;
  const std::vector<int32_t> seq{12, 3};
  apply_timestamp_rules(l, seq, kIds);
  EXPECT_FALSE(allowed(l, 4));
  // Control: a text token likelier than all timestamps together stays.
  std::vector<float> c(kVocab, 0.0f);
  c[4] = 10.0f;
  apply_timestamp_rules(c, seq, kIds);
  EXPECT_TRUE(allowed(c, 4));
  EXPECT_EQ(argmax(c), 4);
}

TEST(TimestampSplit, SegmentsAndWhereTheNextWindowStarts) {
  // <|0.04|> a b <|0.10|><|0.10|> c <|0.20|> <eot>: two whole segments, the window is done.
  const std::vector<int32_t> whole{14, 1, 2, 17, 17, 3, 22, 10};
  SplitWindow w = split_at_timestamps(whole, kIds, 30.0);
  ASSERT_EQ(w.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(w.segments[0].start, 0.04);
  EXPECT_DOUBLE_EQ(w.segments[0].end, 0.10);
  EXPECT_EQ(w.segments[0].tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_DOUBLE_EQ(w.segments[1].start, 0.10);
  EXPECT_DOUBLE_EQ(w.segments[1].end, 0.20);
  EXPECT_DOUBLE_EQ(w.consumed, 30.0);
  // Cut off inside a segment that started at 0.20: that segment waits for the next window.
  const std::vector<int32_t> cut{14, 1, 17, 22, 4, 5};
  w = split_at_timestamps(cut, kIds, 30.0);
  ASSERT_EQ(w.segments.size(), 1u);
  EXPECT_DOUBLE_EQ(w.consumed, 0.20);
}

TEST(Suppress, OnlyTheNamedIds) {
  std::vector<float> l = flat();
  const std::vector<int32_t> ids{2, 7, 99, -1};  // out-of-range ids are ignored
  suppress(l, ids);
  for (int32_t id = 0; id < 32; ++id) EXPECT_EQ(allowed(l, id), id != 2 && id != 7) << id;
}

}  // namespace
}  // namespace wgx::speech
