// rope_update_cache against a double reference and against the chain of separate ops it stands
// for (rms_norm -> rope -> update_cache): a prefill chunk, one-token steps, another chunk and a
// last step at increasing input_pos, with the rotated q and both caches checked after every
// step; with and without the q/k norm, both rope layouts, Llama 3.1 scaling, f32 and f16
// activations and caches, GQA, head_dim 64, 128 and 6 (even, not a multiple of 4). Negative
// controls: the reference at the next position, or without the norm, is off by far more than
// the tolerance. Runtime side: both cache mutations land in the caches' own buffers (one
// dispatch, no copies); without mutations the caches are copied first and stay as they were;
// rows past the caches, packed f16 rotate_half at head_dim 6 and norm weights that are not
// constants are refused.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "attention_test_util.h"
#include "graph/error.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::ValueId;
using testing::AttnConfig;
using testing::AttnReference;
using testing::RopeReference;
using testing::Step;

constexpr int64_t kMaxSeq = 16, kMaxNew = 5;
constexpr double kEps = 1e-6;
// Tokens per step: input_pos 0, 5, 6, 7, 10.
const std::vector<int64_t> kLengths = {5, 1, 1, 3, 1};

struct Case {
  const char* name;
  int64_t hq, hkv, dim;
  DType io, kv;  // activations (q, k, v, the rotated q, the norm weights), caches
  bool norm;
  RopeReference rope;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr RopeReference kLlama = testing::kLlamaRope;
constexpr RopeReference kQwen = testing::kQwenRope;
constexpr RopeReference kInterleaved = testing::kInterleavedRope;
constexpr RopeReference kInterleavedLlama{.theta = 5e5, .interleaved = true, .llama3 = true};

const Case kCases[] = {
    {"llama_f32", 8, 2, 64, DType::f32, DType::f32, false, kLlama},
    {"llama_f16_cache", 8, 2, 64, DType::f32, DType::f16, false, kLlama},
    {"llama_f16", 8, 2, 64, DType::f16, DType::f16, false, kLlama},
    {"qwen3_f32", 4, 2, 128, DType::f32, DType::f32, true, kQwen},
    {"qwen3_f16", 4, 2, 128, DType::f16, DType::f16, true, kQwen},
    {"qwen3_f16_f32_cache", 4, 2, 128, DType::f16, DType::f32, true, kQwen},
    {"interleaved_norm_f16_cache", 6, 3, 64, DType::f32, DType::f16, true, kInterleavedLlama},
    {"interleaved_f16_f32_cache", 4, 4, 64, DType::f16, DType::f32, false, kInterleaved},
    {"head_dim6_norm", 3, 1, 6, DType::f32, DType::f32, true, kQwen},
    {"head_dim6_interleaved_norm_f16_cache", 2, 1, 6, DType::f32, DType::f16, true, kInterleaved},
};

AttnConfig config(const Case& c) {
  AttnConfig a;
  a.hq = c.hq;
  a.hkv = c.hkv;
  a.dim = c.dim;
  a.max_seq = kMaxSeq;
  a.max_new = kMaxNew;
  a.kv = c.kv;
  a.io = c.io;
  return a;
}

bool f16_io(const Case& c) { return c.io == DType::f16; }

std::vector<float> norm_weight(const Case& c, uint32_t seed) { return testing::norm_weight(c.dim, f16_io(c), seed); }
std::vector<uint8_t> constant_bytes(const Case& c, const std::vector<float>& w) {
  return testing::activation_bytes(f16_io(c), w);
}

// Inputs q, k, v (seq and pos SymInts as attention_test_util.h's run_step sets them), caches
// k_cache and v_cache. The rotated q is output "out"; `mutate`: the updated caches are written
// back into their buffers, else they are outputs "k_out" and "v_out". `unfused`: the same through
// rms_norm, rope and update_cache nodes.
std::unique_ptr<Program> make_program(const Case& c, const std::vector<float>& qn, const std::vector<float>& kn,
                                      bool unfused, bool mutate = true) {
  GraphBuilder b;
  const graph::Dim seq = b.sym("seq", 1, kMaxNew);
  const ValueId pos = b.sym_value(b.sym("pos", 0, kMaxSeq - 1));
  ValueId q = b.input("q", c.io, {1, seq, c.hq, c.dim});
  ValueId k = b.input("k", c.io, {1, seq, c.hkv, c.dim});
  const ValueId v = b.input("v", c.io, {1, seq, c.hkv, c.dim});
  const ValueId kc = b.mutable_buffer("k_cache", c.kv, {1, c.hkv, kMaxSeq, c.dim});
  const ValueId vc = b.mutable_buffer("v_cache", c.kv, {1, c.hkv, kMaxSeq, c.dim});
  ValueId qw = graph::kNoValue, kw = graph::kNoValue;
  if (c.norm) {
    qw = b.constant("q_norm", c.io, {c.dim}, constant_bytes(c, qn));
    kw = b.constant("k_norm", c.io, {c.dim}, constant_bytes(c, kn));
  }
  ValueId q2, kc2, vc2;
  if (unfused) {
    if (c.norm) {
      q = b.op1("rms_norm", {q, qw}, {{"eps", kEps}});
      k = b.op1("rms_norm", {k, kw}, {{"eps", kEps}});
    }
    q2 = b.op1("rope", {q, pos}, c.rope.attrs());
    kc2 = b.op1("update_cache", {kc, b.op1("rope", {k, pos}, c.rope.attrs()), pos});
    vc2 = b.op1("update_cache", {vc, v, pos});
  } else {
    std::vector<ValueId> in = {q, k, v, kc, vc, pos};
    if (c.norm) in.insert(in.end(), {qw, kw});
    graph::Attrs attrs = c.rope.attrs();
    attrs.insert_or_assign("eps", kEps);
    const std::vector<ValueId> outs = b.op("rope_update_cache", in, attrs, "fused");
    q2 = outs[0];
    kc2 = outs[1];
    vc2 = outs[2];
  }
  b.output("out", q2);
  if (mutate) {
    b.mutate(kc, kc2);
    b.mutate(vc, vc2);
  } else {
    b.output("k_out", kc2);
    b.output("v_out", vc2);
  }
  return std::make_unique<Program>(testing::shared_context(), b.build(), b.weights());
}

using Expected = testing::RopeRows;
// The q or k rows of a step ([1, S, H, D]) as the op gives them (testing::rope_rows).
Expected expected_rows(const Case& c, const std::vector<float>& x, int64_t seq, int64_t heads,
                       const std::vector<float>& weight, int64_t pos) {
  return testing::rope_rows(c.rope, c.dim, f16_io(c), kEps, x, seq, heads, weight, pos);
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

template <typename T>
::testing::AssertionResult matches(const std::vector<float>& got, const std::vector<T>& want,
                                   const std::vector<T>& spread, bool f16) {
  return testing::rope_matches(got, want, spread, f16);
}

class RopeUpdateCache : public ::testing::TestWithParam<Case> {};

TEST_P(RopeUpdateCache, MatchesDoubleReferenceStepByStep) {
  const Case& c = GetParam();
  const AttnConfig a = config(c);
  const std::vector<float> qn = c.norm ? norm_weight(c, 1) : std::vector<float>{};
  const std::vector<float> kn = c.norm ? norm_weight(c, 2) : std::vector<float>{};
  const std::unique_ptr<Program> prog = make_program(c, qn, kn, false);
  ASSERT_EQ(prog->routes().size(), 1u);
  EXPECT_EQ(prog->routes()[0].route, "rope_update_cache") << testing::rejected_text(prog->routes()[0]);
  EXPECT_EQ(prog->mutation_copies(), 0u) << "both caches should be updated where they lie";

  // The caches as the reference expects them, and the spread of their k entries.
  const bool f16_k = f16_io(c) || c.kv == DType::f16;
  AttnReference want(a, f16_k), spread(a, false);
  for (const Step& st : testing::make_steps(a, kLengths, 40)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    const std::vector<float> got_q = testing::run_step(*prog, a, st);
    EXPECT_EQ(prog->dispatches_per_execute(), 1u);
    const Expected q = expected_rows(c, st.q, st.seq, c.hq, qn, st.pos);
    const Expected k = expected_rows(c, st.k, st.seq, c.hkv, kn, st.pos);
    EXPECT_TRUE(matches(got_q, q.values, q.spread, f16_io(c)));
    want.append({st.pos, st.seq, {}, to_float(k.values), st.v});
    spread.append({st.pos, st.seq, {}, to_float(k.spread), std::vector<float>(st.v.size(), 0.f)});
    EXPECT_TRUE(matches(prog->read_state_f32("k_cache"), want.cache(false), spread.cache(false), f16_k));
    EXPECT_EQ(prog->read_state_f32("v_cache"), want.cache(true));

    // Negative controls: the next position's rotation, and (with the norm) no norm, are far off.
    const Expected next = expected_rows(c, st.q, st.seq, c.hq, qn, st.pos + 1);
    EXPECT_FALSE(matches(got_q, next.values, next.spread, f16_io(c))) << "the position is not followed";
    if (c.norm) {
      const Expected plain = expected_rows(c, st.q, st.seq, c.hq, {}, st.pos);
      EXPECT_FALSE(matches(got_q, plain.values, plain.spread, f16_io(c))) << "the norm is not applied";
    }
  }
}

// The separate ops on the same inputs: without the norm the same arithmetic, bit for bit;
// with it, the norm's sum in another order, so within the tolerance of the reference.
TEST_P(RopeUpdateCache, MatchesTheChainOfSeparateOps) {
  const Case& c = GetParam();
  const AttnConfig a = config(c);
  const std::vector<float> qn = c.norm ? norm_weight(c, 3) : std::vector<float>{};
  const std::vector<float> kn = c.norm ? norm_weight(c, 4) : std::vector<float>{};
  const std::unique_ptr<Program> fused = make_program(c, qn, kn, false);
  const std::unique_ptr<Program> chain = make_program(c, qn, kn, true);
  const bool f16_k = f16_io(c) || c.kv == DType::f16;
  AttnReference spread(a, false);
  for (const Step& st : testing::make_steps(a, kLengths, 70)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    const std::vector<float> got_q = testing::run_step(*fused, a, st);
    const std::vector<float> want_q = testing::run_step(*chain, a, st);
    const std::vector<float> got_k = fused->read_state_f32("k_cache"), want_k = chain->read_state_f32("k_cache");
    EXPECT_EQ(fused->read_state_f32("v_cache"), chain->read_state_f32("v_cache"));
    if (!c.norm) {
      EXPECT_EQ(got_q, want_q);
      EXPECT_EQ(got_k, want_k);
      continue;
    }
    const Expected q = expected_rows(c, st.q, st.seq, c.hq, qn, st.pos);
    const Expected k = expected_rows(c, st.k, st.seq, c.hkv, kn, st.pos);
    spread.append({st.pos, st.seq, {}, to_float(k.spread), std::vector<float>(st.v.size(), 0.f)});
    EXPECT_TRUE(matches(got_q, want_q, to_float(q.spread), f16_io(c)));
    EXPECT_TRUE(matches(got_k, want_k, spread.cache(false), f16_k));
  }
  EXPECT_EQ(chain->dispatches_per_execute(), c.norm ? 6u : 4u);
}

INSTANTIATE_TEST_SUITE_P(Cases, RopeUpdateCache, ::testing::ValuesIn(kCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

// Without mutations the updated caches are other buffers: the old contents are copied there
// first (rows outside the step keep their values) and the caches' own buffers stay as they were.
TEST(RopeUpdateCacheCopy, WithoutMutationsTheCachesAreCopiedThenUpdated) {
  const Case& c = kCases[0];
  const AttnConfig a = config(c);
  const std::unique_ptr<Program> prog = make_program(c, {}, {}, false, /*mutate=*/false);
  EXPECT_EQ(prog->mutation_copies(), 0u);
  const std::vector<Step> steps = testing::make_steps(a, {3, 2}, 90);
  AttnReference want(a, false);
  for (const Step& st : steps) {
    testing::run_step(*prog, a, st);
    // Each execution starts from the unchanged (zero) buffers: only this step's rows are set.
    AttnReference only(a, false);
    const Expected k = expected_rows(c, st.k, st.seq, c.hkv, {}, st.pos);
    only.append({st.pos, st.seq, {}, to_float(k.values), st.v});
    const std::vector<float> zeros(only.cache(false).size(), 0.f);
    EXPECT_TRUE(matches(prog->read_f32("k_out"), only.cache(false), zeros, false)) << st.pos;
    EXPECT_EQ(prog->read_f32("v_out"), only.cache(true)) << st.pos;
  }
  EXPECT_EQ(prog->read_state_f32("k_cache"), std::vector<float>(static_cast<size_t>(c.hkv * kMaxSeq * c.dim), 0.f));
  EXPECT_EQ(prog->read_state_f32("v_cache"), std::vector<float>(static_cast<size_t>(c.hkv * kMaxSeq * c.dim), 0.f));
}

// Rows past the caches are refused at execute time, as update_cache refuses them.
TEST(RopeUpdateCacheRange, RowsPastTheCachesAreRefused) {
  const Case& c = kCases[0];
  const AttnConfig a = config(c);
  const std::unique_ptr<Program> prog = make_program(c, {}, {}, false);
  Step st = testing::make_steps(a, {3}, 95)[0];
  st.pos = kMaxSeq - 2;  // rows 14, 15, 16 of 16
  EXPECT_THROW(testing::run_step(*prog, a, st), graph::GraphError);
  st.pos = kMaxSeq - 3;  // the last three rows
  testing::run_step(*prog, a, st);
  EXPECT_NE(prog->read_state_f32("v_cache").back(), 0.f);
}

// rotate_half with a packed f16 cache writes two frequencies' words at once: head_dim 6 has no
// route, and the build error says why.
TEST(RopeUpdateCacheRange, F16RotateHalfNeedsHeadDimMultipleOf4) {
  const Case c{"d6", 2, 1, 6, DType::f32, DType::f16, false, kQwen};
  try {
    make_program(c, {}, {}, false);
    ADD_FAILURE() << "built";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim % 4 == 0"), std::string::npos) << e.what();
  }
}

// The norm weights are copied into the node's table when it is built, so they must be constants:
// weights given as graph inputs have no route, and the build error says why.
TEST(RopeUpdateCacheRange, NormWeightsMustBeConstants) {
  GraphBuilder b;
  const ValueId pos = b.sym_value(b.sym("pos", 0, kMaxSeq - 1));
  std::vector<ValueId> in = {b.input("q", DType::f32, {1, 1, 4, 8}), b.input("k", DType::f32, {1, 1, 2, 8}),
                             b.input("v", DType::f32, {1, 1, 2, 8}),
                             b.mutable_buffer("k_cache", DType::f32, {1, 2, kMaxSeq, 8}),
                             b.mutable_buffer("v_cache", DType::f32, {1, 2, kMaxSeq, 8}), pos,
                             b.input("q_norm", DType::f32, {8}), b.input("k_norm", DType::f32, {8})};
  const std::vector<ValueId> outs = b.op("rope_update_cache", in);
  b.output("out", outs[0]);
  b.mutate(in[3], outs[1]);
  b.mutate(in[4], outs[2]);
  try {
    Program prog(testing::shared_context(), b.build(), b.weights());
    ADD_FAILURE() << "built";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("must be constants"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wgx::runtime
