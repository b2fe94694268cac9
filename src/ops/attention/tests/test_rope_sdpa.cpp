// rope_sdpa_with_kv_cache against the two ops it stands for (rope_update_cache, then
// sdpa_with_kv_cache over its results), both programs fed the same steps: one-token steps at 1,
// 5, 64, 193 and 300 visible rows (single passes and split ones: under the default threshold of
// 128 rows at head_dim 64 and 64 at 128, a threshold of 32, and none, 19 chunks of 16 rows at
// 300, the new row in the last) and the prefill chunks between them, for groups of 1, 2 and
// 4 query heads, head_dim 64 and 128 (and 6, an odd half), with and without Qwen3's q/k
// norm, both rope layouts, f32
// and f16 activations and caches, batch 1 and 2. After every step the output and both whole
// caches are compared, and every cache row but the step's new ones must be what it was.
// Tolerances:
//   - one-token steps run flash_rope, which does rope_update_cache's arithmetic inside the
//     attention kernel: f32 results within the project's tolerance (abs 1e-4 or rel 1e-3), f16
//     ones within an f16 ulp (kF16Abs + kF16Rel |want|). The norm's sum of squares is added in
//     another order than rope_update_cache's, so with f16 activations an f16 rounding of a
//     normalized value could go the other way, and move every score of the step: those cases
//     take data whose squares add up exactly in f32 in any order (multiples of 2^-6 in [-2, 2]);
//   - prefill (S > 1) runs the same kernels as the two ops (rope_update_cache's dispatch, then
//     sdpa's route): the rows it writes match bit for bit, its output within the tolerance above
//     (the rows of earlier one-token steps are in view).
// The routes: one-token steps take rope_flash_decoding and record one dispatch fewer than the
// two ops (the controls: the two ops, and the node with the fused kernel turned off, fail that
// count), prefill the route the separate sdpa node takes; the caches are updated where they lie;
// norm weights that are not constants are refused.
#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::ValueId;
using testing::AttnConfig;
using testing::RopeReference;
using testing::Step;

constexpr int64_t kMaxSeq = 304, kMaxNew = 64;
constexpr double kEps = 1e-6;
// Tokens per step: one-token steps at input_pos 0, 4, 63, 192 and 299 (1, 5, 64, 193 and 300
// visible rows), prefill chunks between them.
const std::vector<int64_t> kLengths = {1, 3, 1, 58, 1, 64, 64, 1, 64, 42, 1};

constexpr RopeReference kLlama = testing::kLlamaRope;
constexpr RopeReference kQwen = testing::kQwenRope;
constexpr RopeReference kInterleaved = testing::kInterleavedRope;

const RuntimeOptions kDefault{};
const RuntimeOptions kSingleMax32{{"sdpa_decode_single_max", "32"}};
const RuntimeOptions kSplit{{"sdpa_decode_single_max", "0"}};

struct Case {
  const char* name;
  int64_t batch, hq, hkv, dim;
  DType io, kv;  // activations (q, k, v, out, the norm weights), caches
  bool norm;
  RopeReference rope;
  RuntimeOptions options;
  double scale = 0;  // 0: 1/sqrt(head_dim)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"G1_D64_F32", 1, 2, 2, 64, DType::f32, DType::f32, false, kLlama, kDefault},
    {"G4_D64_F16Cache_Llama", 1, 8, 2, 64, DType::f32, DType::f16, false, kLlama, kSingleMax32},
    {"G4_D64_F16_Batch2", 2, 4, 1, 64, DType::f16, DType::f16, false, kLlama, kSplit},
    {"G2_D128_F32_Norm", 1, 4, 2, 128, DType::f32, DType::f32, true, kQwen, kDefault, 0.125},
    {"G2_D128_F16_Norm_Qwen3", 1, 4, 2, 128, DType::f16, DType::f16, true, kQwen, kSingleMax32},
    {"G1_D128_F16Io_F32Cache_Norm", 1, 2, 2, 128, DType::f16, DType::f32, true, kQwen, kSplit},
    {"G2_D64_Interleaved_F16Cache_Norm", 1, 4, 2, 64, DType::f32, DType::f16, true, kInterleaved, kSingleMax32},
    // A group whose rows the held norm cannot hold ((4 + 1) x 64 pairs is more than 256
    // invocations): rope_rows' two passes over the rows.
    {"G4_D128_F16_Norm", 1, 4, 1, 128, DType::f16, DType::f16, true, kQwen, kDefault},
    {"G4_D128_F32_Norm_Split", 1, 4, 1, 128, DType::f32, DType::f32, true, kQwen, kSplit},
    {"G2_D128_F16_Norm_Split", 1, 4, 2, 128, DType::f16, DType::f16, true, kQwen, kSplit},
    // head_dim 6: three frequencies (an odd half, rope's smallest case).
    {"G2_D6_Norm_OddHalf", 1, 4, 2, 6, DType::f32, DType::f32, true, kQwen, kSplit},
    {"G2_D6_Interleaved_OddHalf", 1, 4, 2, 6, DType::f32, DType::f32, false, kInterleaved, kSingleMax32},
};

bool f16_io(const Case& c) { return c.io == DType::f16; }
bool f16_cache_values(const Case& c) { return f16_io(c) || c.kv == DType::f16; }

AttnConfig config(const Case& c, int64_t max_new = kMaxNew) {
  AttnConfig a;
  a.batch = c.batch;
  a.hq = c.hq;
  a.hkv = c.hkv;
  a.dim = c.dim;
  a.max_seq = kMaxSeq;
  a.max_new = max_new;
  a.io = c.io;
  a.kv = c.kv;
  a.options = c.options;
  return a;
}

std::vector<uint8_t> activation_bytes(const Case& c, const std::vector<float>& x) {
  return testing::activation_bytes(f16_io(c), x);
}
std::vector<float> norm_weight(const Case& c, uint32_t seed) { return testing::norm_weight(c.dim, f16_io(c), seed); }

// The steps' data; with f16 activations and the norm, multiples of 2^-6 (random_floats' range is
// [-2, 2]): exact in f16, and their squares (multiples of 2^-12, a head's sum below 2^10) add up
// exactly in f32 in any order.
std::vector<Step> make_steps(const Case& c, const AttnConfig& a, const std::vector<int64_t>& lengths, uint32_t seed) {
  std::vector<Step> steps = testing::make_steps(a, lengths, seed);
  if (c.norm && f16_io(c)) {
    for (Step& st : steps) {
      for (auto* x : {&st.q, &st.k, &st.v}) {
        for (float& e : *x) e = std::round(e * 64.f) / 64.f;
      }
    }
  }
  return steps;
}

// Inputs q, k, v (S from 1 to max_new, or 1), SymInt pos, caches k_cache and v_cache, output
// "out". `fused`: one rope_sdpa_with_kv_cache node "attn"; else rope_update_cache "rope" and
// sdpa_with_kv_cache "attn". `mutate`: the updated caches are written back into their buffers,
// else they are outputs "k_out" and "v_out". `norm_constants`: the norm weights as constants,
// else as inputs "q_norm" and "k_norm" (never run: no route takes them).
std::unique_ptr<Program> make_program(const Case& c, const std::vector<float>& qn, const std::vector<float>& kn,
                                      bool fused, int64_t max_new = kMaxNew, bool mutate = true,
                                      bool norm_constants = true) {
  GraphBuilder b;
  const graph::Dim seq = max_new == 1 ? graph::Dim(1) : graph::Dim(b.sym("seq", 1, max_new));
  const ValueId pos = b.sym_value(b.sym("pos", 0, kMaxSeq - 1));
  std::vector<ValueId> in = {b.input("q", c.io, {c.batch, seq, c.hq, c.dim}),
                             b.input("k", c.io, {c.batch, seq, c.hkv, c.dim}),
                             b.input("v", c.io, {c.batch, seq, c.hkv, c.dim}),
                             b.mutable_buffer("k_cache", c.kv, {c.batch, c.hkv, kMaxSeq, c.dim}),
                             b.mutable_buffer("v_cache", c.kv, {c.batch, c.hkv, kMaxSeq, c.dim}),
                             pos};
  if (c.norm && norm_constants) {
    in.push_back(b.constant("q_norm", c.io, {c.dim}, activation_bytes(c, qn)));
    in.push_back(b.constant("k_norm", c.io, {c.dim}, activation_bytes(c, kn)));
  } else if (c.norm) {
    in.push_back(b.input("q_norm", c.io, {c.dim}));
    in.push_back(b.input("k_norm", c.io, {c.dim}));
  }
  graph::Attrs rope = c.rope.attrs();
  rope.insert_or_assign("eps", kEps);
  std::vector<ValueId> outs;
  if (fused) {
    graph::Attrs attrs = rope;
    attrs.insert_or_assign("scale", c.scale);
    outs = b.op("rope_sdpa_with_kv_cache", in, attrs, "attn");
  } else {
    outs = b.op("rope_update_cache", in, rope, "rope");
    outs[0] = b.op1("sdpa_with_kv_cache", {outs[0], outs[1], outs[2], pos}, {{"scale", c.scale}}, "attn");
  }
  b.output("out", outs[0]);
  if (mutate) {
    b.mutate(in[3], outs[1]);
    b.mutate(in[4], outs[2]);
  } else {
    b.output("k_out", outs[1]);
    b.output("v_out", outs[2]);
  }
  return std::make_unique<Program>(testing::shared_context(), b.build(), b.weights(), c.options);
}

// A one-token step's tolerance (see the top): the project's for f32, an f16 ulp for f16 values.
::testing::AssertionResult matches(const std::vector<float>& got, const std::vector<float>& want, bool f16) {
  if (!f16) return testing::close(got, want);
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(double{got[i]} - want[i]) <= testing::kF16Abs + testing::kF16Rel * std::abs(want[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Whether the cache rows a step writes (input_pos .. input_pos + S - 1, per batch and head:
// `step_rows`) or the others are equal in `a` and `b`, element for element.
::testing::AssertionResult rows_equal(const Case& c, const Step& st, bool step_rows, const std::vector<float>& a,
                                      const std::vector<float>& b) {
  const auto d = static_cast<size_t>(c.dim);
  for (size_t row = 0; row < a.size() / d; ++row) {
    const auto j = static_cast<int64_t>(row % static_cast<size_t>(kMaxSeq));
    if ((j >= st.pos && j < st.pos + st.seq) != step_rows) continue;
    for (size_t e = row * d; e < (row + 1) * d; ++e) {
      if (a[e] != b[e]) {
        return ::testing::AssertionFailure() << "cache row " << row << " (position " << j << "), channel "
                                             << e - row * d << ": " << a[e] << " vs " << b[e];
      }
    }
  }
  return ::testing::AssertionSuccess();
}
// Every cache row outside the step's holds what it held before.
::testing::AssertionResult others_unchanged(const Case& c, const Step& st, const std::vector<float>& before,
                                            const std::vector<float>& after) {
  return rows_equal(c, st, false, before, after);
}
::testing::AssertionResult new_rows_equal(const Case& c, const Step& st, const std::vector<float>& got,
                                          const std::vector<float>& want) {
  return rows_equal(c, st, true, got, want);
}

class RopeSdpa : public ::testing::TestWithParam<Case> {};

TEST_P(RopeSdpa, MatchesTheTwoOpsStepByStep) {
  const Case& c = GetParam();
  const AttnConfig a = config(c);
  const std::vector<float> qn = c.norm ? norm_weight(c, 1) : std::vector<float>{};
  const std::vector<float> kn = c.norm ? norm_weight(c, 2) : std::vector<float>{};
  const std::unique_ptr<Program> fused = make_program(c, qn, kn, true);
  const std::unique_ptr<Program> separate = make_program(c, qn, kn, false);
  const RouteChoice& route = testing::route_of(*fused, "attn");
  EXPECT_EQ(route.small_route, "rope_flash_decoding") << testing::rejected_text(route);
  EXPECT_EQ(route.route, "rope_update_cache+" + testing::route_of(*separate, "attn").route);
  EXPECT_EQ(fused->mutation_copies(), 0u) << "both caches should be updated where they lie";

  for (const Step& st : make_steps(c, a, kLengths, 100)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    const std::vector<float> k_before = fused->read_state_f32("k_cache"), v_before = fused->read_state_f32("v_cache");
    const std::vector<float> got = testing::run_step(*fused, a, st);
    const std::vector<float> want = testing::run_step(*separate, a, st);
    const std::vector<float> got_k = fused->read_state_f32("k_cache"), want_k = separate->read_state_f32("k_cache");
    const std::vector<float> got_v = fused->read_state_f32("v_cache"), want_v = separate->read_state_f32("v_cache");
    EXPECT_TRUE(matches(got, want, f16_io(c))) << "out";
    EXPECT_TRUE(matches(got_k, want_k, f16_cache_values(c))) << "k_cache";
    EXPECT_TRUE(matches(got_v, want_v, f16_cache_values(c))) << "v_cache";
    if (st.seq > 1) {  // the same kernels wrote the new rows
      EXPECT_TRUE(new_rows_equal(c, st, got_k, want_k)) << "k_cache";
      EXPECT_TRUE(new_rows_equal(c, st, got_v, want_v)) << "v_cache";
    }
    EXPECT_TRUE(others_unchanged(c, st, k_before, got_k)) << "k_cache";
    EXPECT_TRUE(others_unchanged(c, st, v_before, got_v)) << "v_cache";
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RopeSdpa, ::testing::ValuesIn(kCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

// The dispatches a step records: the graphs hold only the attention node(s). One-token steps take
// rope_flash_decoding: one dispatch, a single pass while the visible rows are at most the
// threshold (8 here) and split after, where the two ops record one more; a prefill step records
// what the two ops do (rope_update_cache's dispatch, then k16's). A decode-only graph takes
// rope_flash_decoding as its only route.
TEST(RopeSdpaRoutes, OneTokenStepsRecordOneDispatchFewerThanTheTwoOps) {
  Case c = kCases[4];
  c.options = {{"sdpa_decode_single_max", "8"}};
  const AttnConfig a = config(c, 4);
  const std::vector<float> qn = norm_weight(c, 3), kn = norm_weight(c, 4);
  const std::unique_ptr<Program> fused = make_program(c, qn, kn, true, 4);
  const std::unique_ptr<Program> separate = make_program(c, qn, kn, false, 4);
  const RouteChoice& attn = testing::route_of(*fused, "attn");
  EXPECT_EQ(attn.route, "rope_update_cache+k16_streaming_q16") << testing::rejected_text(attn);
  EXPECT_EQ(attn.small_route, "rope_flash_decoding") << testing::rejected_text(attn);
  EXPECT_EQ(testing::route_of(*separate, "attn").small_route, "flash_decoding");
  EXPECT_EQ(fused->mutation_copies(), 0u);

  // Prefill to row 3, one-token steps at 4 and 9 visible rows, chunks to row 20, one at 21.
  for (const Step& st : make_steps(c, a, {3, 1, 4, 1, 4, 4, 3, 1}, 200)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    testing::run_step(*fused, a, st);
    testing::run_step(*separate, a, st);
    if (st.seq > 1) {
      EXPECT_EQ(fused->dispatches_per_execute(), separate->dispatches_per_execute());
      continue;
    }
    EXPECT_EQ(fused->dispatches_per_execute(), 1u);
    // The control: the two ops record one more, so the count above tells the paths apart.
    EXPECT_EQ(separate->dispatches_per_execute(), 2u);
  }

  const std::unique_ptr<Program> decode = make_program(c, qn, kn, true, 1);
  const RouteChoice& only = testing::route_of(*decode, "attn");
  EXPECT_EQ(only.route, "rope_flash_decoding") << testing::rejected_text(only);
  EXPECT_EQ(only.small_route, "");
}

// Without mutations the updated caches are other buffers: the fused node copies the caches there
// first (so each execute starts from the unchanged, zero caches), as the two ops do, and matches
// them; the caches' own buffers stay as they were.
TEST(RopeSdpaCopy, WithoutMutationsTheCachesAreCopiedThenUpdated) {
  const Case& c = kCases[3];
  const AttnConfig a = config(c, 1);
  const std::vector<float> qn = norm_weight(c, 5), kn = norm_weight(c, 6);
  const std::unique_ptr<Program> fused = make_program(c, qn, kn, true, 1, /*mutate=*/false);
  const std::unique_ptr<Program> separate = make_program(c, qn, kn, false, 1, /*mutate=*/false);
  EXPECT_EQ(testing::route_of(*fused, "attn").route, "rope_flash_decoding");
  for (const Step& st : make_steps(c, a, {1, 1}, 300)) {
    Step at = st;
    at.pos = 7 + 5 * st.pos;  // positions 7 and 12: the one visible row written is the step's
    SCOPED_TRACE("input_pos " + std::to_string(at.pos));
    EXPECT_TRUE(matches(testing::run_step(*fused, a, at), testing::run_step(*separate, a, at), false));
    EXPECT_TRUE(matches(fused->read_f32("k_out"), separate->read_f32("k_out"), false));
    EXPECT_EQ(fused->read_f32("v_out"), separate->read_f32("v_out"));
  }
  const std::vector<float> zeros(static_cast<size_t>(c.hkv * kMaxSeq * c.dim), 0.f);
  EXPECT_EQ(fused->read_state_f32("k_cache"), zeros);
  EXPECT_EQ(fused->read_state_f32("v_cache"), zeros);
}

// The norm weights are copied into the node's table when it is built, so they must be constants:
// weights given as graph inputs have no route (neither the fused kernel nor rope_update_cache's),
// and the build error says why.
TEST(RopeSdpaRoutes, NormWeightsMustBeConstants) {
  try {
    make_program(kCases[3], {}, {}, true, kMaxNew, true, /*norm_constants=*/false);
    ADD_FAILURE() << "built";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rope_flash_decoding: the norm weights must be constants"), std::string::npos) << what;
    EXPECT_NE(what.find("rope_update_cache+k16_streaming_q16: rope_update_cache: the norm weights must be constants"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace wgx::runtime
