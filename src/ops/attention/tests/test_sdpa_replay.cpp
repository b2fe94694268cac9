// Replay: one built program per case serves a prefill, multi-token steps and single-token decode
// steps, with the KV caches as mutable buffers updated in place; only the new tokens and input_pos
// are fed per step, and every step's output is compared with a double reference over the whole
// history. Each case asserts the route sdpa took (and why the ones before it were refused), so
// together they take every route: flash_decoding (a single pass at these short contexts, and
// split, its chunks merged in the same dispatch, when sdpa_decode_single_max is 0), k16 with Q16
// and with the Q32 option at head_dim 64 and 128 (unsplit, and split over a long cache with the
// combine pass), and materialized where the faster routes' guards fail; GQA and MHA.
#include <algorithm>
#include <array>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::AttnConfig;
using testing::AttnReference;

struct Case {
  std::string name;
  AttnConfig config;
  std::vector<int64_t> steps;  // new tokens per step
  std::string route;           // sdpa's expected route
  std::string refused;         // a substring of the refusals before it ("" to skip)
  bool split = false;          // k16: some step splits over the cache (a combine dispatch runs)
};

// Prefill, multi-token steps, then decode; and a decode-only run for S == 1 graphs.
const std::vector<int64_t> kPrefill13{13, 3, 3, 1, 1, 1, 1};
const std::vector<int64_t> kPrefill7{7, 3, 1, 1, 1, 1, 1};
const std::vector<int64_t> kDecode40(40, 1);  // 40 tokens: FlashDecoding splits them in 3 chunks
const std::vector<int64_t> kDecode72(72, 1);
// 116 tokens: k16's small grids split the 8 K tiles of the later steps over the cache.
const std::vector<int64_t> kLong{13, 3, 16, 16, 16, 16, 16, 16, 1, 1, 1};

AttnConfig config(int64_t batch, int64_t hq, int64_t hkv, int64_t dim, int64_t max_new = 16, RuntimeOptions options = {},
                  int64_t max_seq = 64) {
  AttnConfig c;
  c.max_seq = max_seq;
  c.batch = batch;
  c.hq = hq;
  c.hkv = hkv;
  c.dim = dim;
  c.max_new = max_new;
  c.options = std::move(options);
  return c;
}

const RuntimeOptions kQ32{{"sdpa_query_tile", "32"}};
// flash_decoding split at every step (the default single pass covers these contexts): 40 visible
// rows are 3 chunks.
const RuntimeOptions kSplit{{"sdpa_decode_single_max", "0"}};

const Case kCases[] = {
    {"K16Q16_D64_GQA", config(1, 8, 2, 64), kPrefill13, "k16_streaming_q16", "flash_decoding: S can be 16"},
    {"K16Q16_D128_MHA_Batch2", config(2, 2, 2, 128), kPrefill7, "k16_streaming_q16", "k16_streaming_q32: sdpa_query_tile is not 32"},
    {"K16Q32_D64_GQA", config(1, 8, 2, 64, 16, kQ32), kPrefill7, "k16_streaming_q32", ""},
    {"K16Q32_D128_GQA", config(1, 8, 2, 128, 16, kQ32), kPrefill13, "k16_streaming_q32", ""},
    {"K16Q32_D64_MHA", config(1, 3, 3, 64, 16, kQ32), kPrefill13, "k16_streaming_q32", ""},
    {"K16Q16_D128_GQA_SplitK", config(1, 8, 2, 128, 16, {}, 256), kLong, "k16_streaming_q16", "", true},
    {"K16Q32_D64_MHA_SplitK", config(1, 2, 2, 64, 16, kQ32, 256), kLong, "k16_streaming_q32", "", true},
    {"Materialized_D80_GQA", config(1, 8, 2, 80), kPrefill13, "materialized", "head_dim 80 is not 64 or 128"},
    {"Materialized_D33_MHA", config(1, 2, 2, 33), kPrefill7, "materialized", "head_dim 33 is not 64 or 128"},
    {"Flash_D64_GQA", config(1, 8, 2, 64, 1), kDecode40, "flash_decoding", ""},
    {"Flash_D128_MHA_Batch2", config(2, 2, 2, 128, 1), kDecode40, "flash_decoding", ""},
    {"Flash_D80_GQA", config(1, 4, 1, 80, 1), kDecode40, "flash_decoding", ""},
    {"Flash_D64_GQA_Split", config(1, 8, 2, 64, 1, kSplit), kDecode40, "flash_decoding", ""},
    {"Flash_D128_MHA_Batch2_Split", config(2, 2, 2, 128, 1, kSplit), kDecode40, "flash_decoding", ""},
    {"Flash_D80_GQA_Split", config(1, 4, 1, 80, 1, kSplit), kDecode40, "flash_decoding", ""},
    {"Flash_D128_GQA_Split", config(1, 4, 2, 128, 1, kSplit), kDecode40, "flash_decoding", ""},
    // Decode-only graphs flash_decoding refuses (group x head_dim over 1024): k16 takes S == 1,
    // and materialized where k16 cannot either.
    {"DecodeWideGroup_K16", config(1, 32, 1, 64, 1, {}, 128), kDecode72, "k16_streaming_q16",
     "flash_decoding: a group of 32", true},
    {"DecodeWideGroup_Materialized", config(1, 16, 1, 80, 1), kDecode40, "materialized", "flash_decoding: a group of 16"},
};

// gtest prints a failing case by name.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Replay : public ::testing::TestWithParam<Case> {};

TEST_P(Replay, EveryStepMatchesTheReferenceOverTheWholeHistory) {
  const Case& tc = GetParam();
  const AttnConfig& c = tc.config;
  graph::GraphBuilder b;
  Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
  const RouteChoice& sdpa = testing::route_of(prog, "sdpa");
  ASSERT_EQ(sdpa.route, tc.route) << testing::rejected_text(sdpa);
  if (!tc.refused.empty()) {
    EXPECT_NE(testing::rejected_text(sdpa).find(tc.refused), std::string::npos) << testing::rejected_text(sdpa);
  }
  EXPECT_EQ(testing::route_of(prog, "k_update").route, "update_cache");
  EXPECT_EQ(prog.mutation_copies(), 0u);  // both caches are updated where they lie

  AttnReference ref(c, false);
  size_t most_dispatches = 0;  // two cache updates, then sdpa's one or two
  for (const testing::Step& st : testing::make_steps(c, tc.steps, 1000)) {
    SCOPED_TRACE("step at input_pos " + std::to_string(st.pos) + ", S = " + std::to_string(st.seq));
    const std::vector<float> got = testing::run_step(prog, c, st);
    most_dispatches = std::max(most_dispatches, prog.dispatches_per_execute());
    ref.append(st);
    ASSERT_TRUE(testing::close(got, ref.attend(st)));
  }
  if (tc.route.starts_with("k16")) {
    // Programs whose S ranges above 1 run their one-token steps through flash_decoding (the
    // small shape class): one dispatch at these contexts (at most 116 rows, under the default
    // sdpa_decode_single_max), so only k16's split takes two.
    const bool flash_decode = sdpa.small_route == "flash_decoding";
    EXPECT_EQ(flash_decode, c.max_new > 1) << "small-class route: '" << sdpa.small_route << "'";
    EXPECT_EQ(most_dispatches, tc.split ? 4u : 3u);
  } else if (tc.route == "flash_decoding") {
    // A single pass up to 40 rows by default, and the split merges its own chunks: one dispatch
    // with the two cache updates.
    EXPECT_EQ(most_dispatches, 3u);
  }
  // The caches hold every token at its position and zeros beyond.
  EXPECT_EQ(prog.read_state_f32("k_cache"), ref.cache(false));
  EXPECT_EQ(prog.read_state_f32("v_cache"), ref.cache(true));
}

INSTANTIATE_TEST_SUITE_P(Routes, Replay, ::testing::ValuesIn(kCases), [](const auto& tp) { return tp.param.name; });

// The attention options' malformed values are refused before anything is built, each naming the
// values the option takes (runtime/options.h).
TEST(ReplayOptions, MalformedValuesAreRefused) {
  for (const auto& [name, value, takes] : std::vector<std::array<const char*, 3>>{
           {"sdpa_query_tile", "24", "16 | 32"},
           {"sdpa_decode_single_max", "-1", "auto | 0 to 1048576"},
           {"sdpa_decode_warm", "first", "auto | off | last | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7"},
           {"sdpa_decode_warm", "8", "auto | off | last | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7"}}) {
    SCOPED_TRACE(std::string(name) + "=" + value);
    const AttnConfig c = config(1, 8, 2, 64, 1, {{name, value}});
    graph::GraphBuilder b;
    try {
      Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights(), c.options);
      ADD_FAILURE() << "built";
    } catch (const std::invalid_argument& e) {
      const std::string want = "runtime option " + std::string(name) + " is '" + value + "'; it takes " + takes;
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// An explicit scale replaces 1/sqrt(head_dim) on every route.
TEST(ReplayScale, ExplicitScaleIsUsed) {
  for (int64_t max_new : {int64_t{1}, int64_t{16}}) {
    for (int64_t dim : {int64_t{64}, int64_t{48}}) {
      AttnConfig c = config(1, 4, 2, dim, max_new);
      c.scale = 0.3;
      graph::GraphBuilder b;
      Program prog(testing::shared_context(), testing::attention_graph(b, c), b.weights());
      SCOPED_TRACE(testing::route_of(prog, "sdpa").route);
      AttnReference ref(c, false);
      for (const testing::Step& st : testing::make_steps(c, max_new == 1 ? std::vector<int64_t>(20, 1) : kPrefill7, 77)) {
        const std::vector<float> got = testing::run_step(prog, c, st);
        ref.append(st);
        ASSERT_TRUE(testing::close(got, ref.attend(st)));
      }
    }
  }
}

}  // namespace
}  // namespace wgx::runtime
