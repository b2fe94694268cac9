// rope_sdpa_linear against the nodes it stands for (rope_sdpa_with_kv_cache, then linear over its
// output with the heads merged), both programs fed the same steps: test_rope_sdpa.cpp's schedule
// (one-token steps at 1, 5, 64, 129 and 300 visible rows, prefill chunks between them), a q4
// projection (group 32, f32 scales) of f32 activations, f32 and f16 caches, with and without
// Qwen3's q/k norm, the default single-pass threshold, a lower one, and none.
//   - Prefill steps, single-pass steps and split steps of more chunks than the projection merges
//     (flash decoding merges them itself) run the separate nodes' kernels: attn, out and the
//     caches bit for bit.
//   - Other split steps merge the chunks inside the projection: attn (what its first workgroup
//     wrote) within the project's tolerance (abs 1e-4 or rel 1e-3) of flash decoding's own merge,
//     and out within the f32 dot bound of a double reference of the product over attn rounded to
//     int8 as the kernel rounds it (so the projection is checked against what it was given, not
//     against another kernel); the caches as the separate nodes' bit for bit.
// Which path a step takes follows sdpa_flash.cpp's plan (split_plan below): by default 1, 5 and
// 64 visible rows single (one tile), 129 rows in 3 chunks of 64 rows merged by the projection (at
// most 4 chunks, of at least 64 rows while they fit a tile), 300 rows (4 chunks would pass a
// tile: 19 of 16) merged by flash decoding. Routes: one-token steps take
// rope_flash_decoding+merged_q4_gemv, whose projection kernel merges the chunks (comb.i8) at the
// merged steps only (the profiled kernels show it); activations in f16 take the composite route
// (the attention's route, then linear's).
#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"
#include "ops/quant/quantize.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::ValueId;
using testing::AttnConfig;
using testing::RopeReference;
using testing::Step;

constexpr int64_t kMaxSeq = 304, kMaxNew = 64, kN = 96;
constexpr uint32_t kGroup = 32;
constexpr int64_t kFoldChunks = 4, kMaxChunks = 32, kMinChunk = 16, kOneTile = 64, kFoldRows = 64;  // sdpa_flash.cpp's
// (its bound of 48 chunks applies from 2,049 rows only, past kMaxSeq)
constexpr double kEps = 1e-6;
// Tokens per step: one-token steps at input_pos 0, 4, 63, 128 and 299, prefill chunks between.
const std::vector<int64_t> kLengths = {1, 3, 1, 58, 1, 64, 1, 64, 64, 42, 1};

struct Case {
  const char* name;
  int64_t hq, hkv, dim;
  DType io, kv;
  bool norm;
  RopeReference rope;
  RuntimeOptions options;
  // The one-token paths the schedule must take: s(ingle), m(erged by the projection), p (merged by
  // flash decoding).
  const char* paths;
  bool subgroups = true;  // the shared device, else one without subgroups (the products' wg reduction)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"G4_D64_F16Cache_Llama", 8, 2, 64, DType::f32, DType::f16, false, testing::kLlamaRope, {}, "smp"},
    {"G2_D128_Norm_Qwen3_SingleMax32", 4, 2, 128, DType::f32, DType::f16, true, testing::kQwenRope,
     {{"sdpa_decode_single_max", "32"}}, "smp"},
    {"G4_D64_F32Cache_Split", 8, 2, 64, DType::f32, DType::f32, false, testing::kLlamaRope,
     {{"sdpa_decode_single_max", "0"}}, "mp"},
    {"G1_D64_F16Io_Composite", 2, 2, 64, DType::f16, DType::f16, false, testing::kLlamaRope, {}, ""},
    // The projections (the merging one too) reduced through workgroup memory, as on devices
    // without subgroups (the shared device's may take sgwg).
    {"G2_D128_Norm_Qwen3_NoSubgroups", 4, 2, 128, DType::f32, DType::f16, true, testing::kQwenRope, {}, "sm", false},
};

AttnConfig config(const Case& c) {
  AttnConfig a;
  a.hq = c.hq;
  a.hkv = c.hkv;
  a.dim = c.dim;
  a.max_seq = kMaxSeq;
  a.max_new = kMaxNew;
  a.io = c.io;
  a.kv = c.kv;
  a.options = c.options;
  return a;
}

// The projection's weight [kN, hq * dim]: its bytes and the values they hold.
struct Weight {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};
Weight weight(const Case& c) {
  const int64_t k = c.hq * c.dim;
  const std::vector<float> w = testing::random_floats(static_cast<size_t>(kN * k), 7, -1.f, 1.f);
  Weight r;
  r.bytes = ops::quantize_q4gsw(w.data(), kN, k, kGroup, DType::f32);
  r.values = ops::dequantize_q4gsw(r.bytes, kN, k, kGroup, DType::f32);
  return r;
}

// Inputs q, k, v, SymInt pos, the caches; outputs "attn" (the attention, heads merged) and "out"
// (the projection). `fused`: one rope_sdpa_linear node "attn"; else rope_sdpa_with_kv_cache
// "attn", a reshape and linear "proj".
std::unique_ptr<Program> make_program(const Case& c, const Weight& w, bool fused, RuntimeOptions options) {
  GraphBuilder b;
  const graph::Dim seq(b.sym("seq", 1, kMaxNew));
  const ValueId pos = b.sym_value(b.sym("pos", 0, kMaxSeq - 1));
  std::vector<ValueId> in = {b.input("q", c.io, {1, seq, c.hq, c.dim}),
                             b.input("k", c.io, {1, seq, c.hkv, c.dim}),
                             b.input("v", c.io, {1, seq, c.hkv, c.dim}),
                             b.mutable_buffer("k_cache", c.kv, {1, c.hkv, kMaxSeq, c.dim}),
                             b.mutable_buffer("v_cache", c.kv, {1, c.hkv, kMaxSeq, c.dim}),
                             pos};
  const ValueId wo =
      b.constant("wo", graph::TensorType{DType::q4gsw, {kN, c.hq * c.dim}, {kGroup, DType::f32}}, w.bytes);
  std::vector<ValueId> norms;
  if (c.norm) {
    const bool f16 = c.io == DType::f16;
    norms.push_back(b.constant("q_norm", c.io, {c.dim}, testing::activation_bytes(f16, testing::norm_weight(c.dim, f16, 1))));
    norms.push_back(b.constant("k_norm", c.io, {c.dim}, testing::activation_bytes(f16, testing::norm_weight(c.dim, f16, 2))));
  }
  graph::Attrs attrs = c.rope.attrs();
  attrs.insert_or_assign("eps", kEps);
  attrs.insert_or_assign("scale", 0.0);
  std::vector<ValueId> outs;
  if (fused) {
    in.push_back(wo);
    in.insert(in.end(), norms.begin(), norms.end());
    outs = b.op("rope_sdpa_linear", in, attrs, "attn");
  } else {
    in.insert(in.end(), norms.begin(), norms.end());
    outs = b.op("rope_sdpa_with_kv_cache", in, attrs, "attn");
    outs[0] = b.op1("reshape", {outs[0]}, {{"shape", graph::Shape{1, seq, c.hq * c.dim}}});
    outs.push_back(b.op1("linear", {outs[0], wo}, {}, "proj"));
  }
  b.mutate(in[3], outs[1]);
  b.mutate(in[4], outs[2]);
  b.output("attn", outs[0]);
  b.output("out", outs[3]);
  gpu::Context& device = c.subgroups ? testing::shared_context() : testing::device_like(false);
  return std::make_unique<Program>(device, b.build(), b.weights(), std::move(options));
}

// out as the merged projection should make it of `attn` (one row): attn rounded to int8 per 32
// values, times the dequantized weight, in double.
testing::DotReference projection_of(const std::vector<float>& attn, const Weight& w) {
  const std::vector<double> x = testing::int8_rounded(attn);
  const auto k = static_cast<int64_t>(attn.size());
  testing::DotReference r;
  for (int64_t j = 0; j < kN; ++j) {
    double y = 0, mag = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double p = x[static_cast<size_t>(i)] * w.values[static_cast<size_t>(j * k + i)];
      y += p;
      mag += std::abs(p);
    }
    r.values.push_back(y);
    r.magnitude.push_back(mag);
  }
  return r;
}

// The case's single-pass threshold (sdpa_decode_single_max), or the folded route's default.
int64_t single_max(const Case& c) {
  const auto it = c.options.find("sdpa_decode_single_max");
  return it == c.options.end() ? kOneTile : std::stoll(it->second);
}

// The chunks a one-token step of the folded route at `visible` rows runs split over (0: a single
// pass), as sdpa_flash.cpp's plan_for makes them.
int64_t split_plan(const Case& c, int64_t visible) {
  if (visible <= single_max(c)) return 0;
  // Fewer, fuller chunks where the projection merges them (at most kFoldChunks, each within a tile).
  const int64_t rows_merged = std::max(kFoldRows, (visible + kFoldChunks - 1) / kFoldChunks);
  if (rows_merged <= kOneTile) return (visible + rows_merged - 1) / rows_merged;
  const int64_t limit = kMaxChunks;
  const int64_t per_chunk = (visible + limit - 1) / limit;
  const int64_t rows = std::max(kMinChunk, (per_chunk + kMinChunk - 1) / kMinChunk * kMinChunk);
  return (visible + rows - 1) / rows;
}

class RopeSdpaLinear : public ::testing::TestWithParam<Case> {};

TEST_P(RopeSdpaLinear, MatchesTheSeparateNodesStepByStep) {
  const Case& c = GetParam();
  const AttnConfig a = config(c);
  const Weight w = weight(c);
  const std::unique_ptr<Program> fused = make_program(c, w, true, c.options);
  const std::unique_ptr<Program> separate = make_program(c, w, false, c.options);
  fused->set_timing(gpu::Timing::Dispatches);
  const bool timed = testing::shared_context().features().timestamp_query;
  const RouteChoice& route = testing::route_of(*fused, "attn");
  const bool merged = c.io == DType::f32;
  EXPECT_EQ(route.small_route, merged ? "rope_flash_decoding+merged_q4_gemv" : "rope_flash_decoding+linear")
      << testing::rejected_text(route);
  EXPECT_EQ(route.route, testing::route_of(*separate, "attn").route + "+linear");
  EXPECT_EQ(fused->mutation_copies(), 0u) << "both caches should be updated where they lie";

  std::string taken;  // the paths the one-token steps took
  for (const Step& st : testing::make_steps(a, kLengths, 100)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    testing::run_step(*fused, a, st);
    testing::run_step(*separate, a, st);
    const std::vector<float> attn = fused->read_f32("attn");
    EXPECT_EQ(fused->read_state_f32("k_cache"), separate->read_state_f32("k_cache"));
    EXPECT_EQ(fused->read_state_f32("v_cache"), separate->read_state_f32("v_cache"));
    const int64_t chunks = st.seq == 1 ? split_plan(c, st.pos + 1) : 0;
    const bool by_flash = chunks > kFoldChunks;
    if (st.seq == 1 && merged) taken += chunks == 0 ? 's' : by_flash ? 'p' : 'm';
    const bool by_projection = merged && chunks > 0 && !by_flash;
    bool comb = false;  // the projection's kernel merged the chunks
    for (const gpu::DispatchTiming& t : fused->last_timings()) {
      comb = comb || t.kernel.find(".comb.") != std::string::npos;
    }
    if (timed && st.seq == 1) {
      EXPECT_EQ(comb, by_projection);
    }
    if (!by_projection) {
      EXPECT_EQ(attn, separate->read_f32("attn"));
      EXPECT_EQ(fused->read_f32("out"), separate->read_f32("out"));
    } else {
      EXPECT_TRUE(testing::close(attn, separate->read_f32("attn"))) << "attn";
      EXPECT_TRUE(testing::within_dot_bound(fused->read_f32("out"), projection_of(attn, w).values,
                                            projection_of(attn, w).magnitude, c.hq * c.dim + 2, false))
          << "out";
    }
    EXPECT_EQ(fused->dispatches_per_execute(), separate->dispatches_per_execute());
    if (::testing::Test::HasFailure()) return;
  }
  for (const char* p = c.paths; *p; ++p) {
    EXPECT_NE(taken.find(*p), std::string::npos) << "no one-token step took path " << *p << " (took " << taken << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RopeSdpaLinear, ::testing::ValuesIn(kCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

// Warm-ahead (sdpa_flash.cpp): extra workgroups of flash decoding read the projection's weight (the
// node's only matrix, so both `0` and `last` pick it) and change nothing: attn, out and both caches
// bit for bit as without them, at single steps and at steps merged by the projection and by flash
// decoding; 128 workgroups over the weight's 1,728 words take runs of 14, which the bound inside
// the inner loop cuts short (test_sdpa_replay.cpp: bad values decline the route). A warm whose
// workgroups add 1 to the merge's count instead of 0 fails it.
TEST(RopeSdpaLinearRoutes, WarmWorkgroupsChangeNothing) {
  const Case& c = kCases[0];
  const AttnConfig a = config(c);
  const Weight w = weight(c);
  RuntimeOptions off = c.options;
  off["sdpa_decode_warm"] = "off";
  const std::unique_ptr<Program> plain = make_program(c, w, true, off);
  std::vector<std::unique_ptr<Program>> warmed;
  for (const char* pick : {"0", "last"}) {
    RuntimeOptions on = c.options;
    on["sdpa_decode_warm"] = pick;
    warmed.push_back(make_program(c, w, true, on));
    EXPECT_EQ(testing::route_of(*warmed.back(), "attn").small_route, "rope_flash_decoding+merged_q4_gemv")
        << testing::rejected_text(testing::route_of(*warmed.back(), "attn"));
  }
  for (const Step& st : testing::make_steps(a, kLengths, 200)) {
    SCOPED_TRACE("input_pos " + std::to_string(st.pos) + ", S " + std::to_string(st.seq));
    testing::run_step(*plain, a, st);
    for (const std::unique_ptr<Program>& p : warmed) {
      testing::run_step(*p, a, st);
      EXPECT_EQ(p->read_f32("attn"), plain->read_f32("attn"));
      EXPECT_EQ(p->read_f32("out"), plain->read_f32("out"));
      EXPECT_EQ(p->read_state_f32("k_cache"), plain->read_state_f32("k_cache"));
      EXPECT_EQ(p->read_state_f32("v_cache"), plain->read_state_f32("v_cache"));
      EXPECT_EQ(p->dispatches_per_execute(), plain->dispatches_per_execute());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace wgx::runtime
