// sdpa_rows_linear (continuous batching's attention and output projection on one node) gives
// what sdpa_rows, a reshape and linear give as nodes of their own, bit for bit (attn and out),
// with a q4 projection, over steps whose rows change: R = 3 (the projection's one-row kernels
// read attn), 6 and 20 (q4_gemm's 16-row tiles), 40 (its 64-row tiles), each with rows of
// several slots at different positions and, above 3 rows, a row out of the caches. Caches of
// MaxS 150 (a row of up to five chunks of at least 32 rows, merged by the last workgroup of
// each row and kv head) and 16 (one chunk, no merge), f32 and f16, random contents. The node takes rows_online+q4_gemm, whose
// attention rounds its output to int8 for the projection: it runs no q8_chunks, the separate
// linear one per step of more than four rows. Negative control: a step of the rounding off by
// 1% in the attention's kernel fails the comparison (checked by hand). With quant_gemm_x8 off
// (x in f32: no rounding anywhere) the node takes rows_online+linear, with the same bits again.
#include <algorithm>
#include <cstdint>
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

constexpr int64_t kMaxRows = 48, kSlots = 4, kN = 96;
constexpr uint32_t kGroup = 32;

struct Case {
  const char* name;
  int64_t hq, hkv, dim, max_seq;
  DType kv;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"G2_D64_MaxS150_F16Cache", 4, 2, 64, 150, DType::f16},
    {"G3_D64_MaxS16_F32Cache", 6, 2, 64, 16, DType::f32},
    {"G2_D128_MaxS150_F32Cache", 4, 2, 128, 150, DType::f32},
};

// Outputs "attn" [1, R, Hq * D] and "y" [1, R, N], on one node (`fused`) or three.
std::unique_ptr<Program> program(const Case& c, bool fused, const std::vector<uint8_t>& weight,
                                 const RuntimeOptions& options = {}) {
  GraphBuilder b;
  const graph::Dim r = b.sym("R", 1, kMaxRows);
  const ValueId q = b.input("q", DType::f32, {1, r, c.hq, c.dim});
  const ValueId rows = b.input("rows", DType::i32, {r, 2});
  const ValueId kc = b.mutable_buffer("k_cache", c.kv, {kSlots, c.hkv, c.max_seq, c.dim});
  const ValueId vc = b.mutable_buffer("v_cache", c.kv, {kSlots, c.hkv, c.max_seq, c.dim});
  const ValueId w = b.constant("w", graph::TensorType{DType::q4gsw, {kN, c.hq * c.dim}, {kGroup, DType::f32}}, weight);
  const graph::Attrs scale{{"scale", 0.125}};
  if (fused) {
    const std::vector<ValueId> outs = b.op("sdpa_rows_linear", {q, kc, vc, rows, w}, scale, "attn");
    b.output("attn", outs[0]);
    b.output("y", outs[1]);
  } else {
    const ValueId a = b.op1("sdpa_rows", {q, kc, vc, rows}, scale);
    const ValueId flat = b.op1("reshape", {a}, {{"shape", graph::Shape{1, r, c.hq * c.dim}}});
    b.output("attn", flat);
    b.output("y", b.op1("linear", {flat, w}));
  }
  return std::make_unique<Program>(testing::shared_context(), b.build(), b.weights(), options);
}

// Whether the last execute ran q8_chunks.
bool rounded_x(const Program& p) {
  return std::any_of(p.last_timings().begin(), p.last_timings().end(),
                     [](const gpu::DispatchTiming& t) { return t.kernel.find("q8_chunks") != std::string::npos; });
}

class AttentionRowsLinear : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionRowsLinear, GivesTheSeparateOpsBitsAsTheRowsChange) {
  const Case& c = GetParam();
  const int64_t k = c.hq * c.dim;
  const std::vector<float> wf = testing::random_floats(static_cast<size_t>(kN * k), 11, -1.f, 1.f);
  const std::vector<uint8_t> weight = ops::quantize_q4gsw(wf.data(), kN, k, kGroup, DType::f32);
  for (const bool x8 : {true, false}) {
    SCOPED_TRACE(x8 ? "quant_gemm_x8 on" : "quant_gemm_x8 off");
    const RuntimeOptions options = x8 ? RuntimeOptions{} : RuntimeOptions{{"quant_gemm_x8", "off"}};
    std::unique_ptr<Program> one = program(c, true, weight, options), three = program(c, false, weight, options);
    EXPECT_EQ(one->routes().at(0).route, x8 ? "rows_online+q4_gemm" : "rows_online+linear")
        << testing::rejected(one->routes().at(0));
    one->set_timing(gpu::Timing::Dispatches);
    three->set_timing(gpu::Timing::Dispatches);
    const size_t cache = static_cast<size_t>(kSlots * c.hkv * c.max_seq * c.dim);
    const bool f16 = c.kv == DType::f16;
    for (Program* p : {one.get(), three.get()}) {
      p->write_state("k_cache", testing::activation_bytes(f16, testing::random_floats(cache, 3)));
      p->write_state("v_cache", testing::activation_bytes(f16, testing::random_floats(cache, 4)));
    }
    uint32_t seed = 20;
    for (const int64_t n : {3, 6, 20, 40, 6}) {
      SCOPED_TRACE("R = " + std::to_string(n));
      std::vector<int32_t> rows;
      for (int64_t i = 0; i < n; ++i) {
        const bool out = n > 3 && i == n / 2;  // a row out of the caches
        rows.push_back(out ? static_cast<int32_t>(kSlots) : static_cast<int32_t>((i * 3 + n) % kSlots));
        rows.push_back(static_cast<int32_t>((i * 7 + n * 5) % c.max_seq));
      }
      const std::vector<float> q = testing::random_floats(static_cast<size_t>(n * k), seed++);
      for (Program* p : {one.get(), three.get()}) {
        p->set_input<int32_t>("rows", rows, {n, 2});
        p->set_input("q", std::span<const float>(q), {1, n, c.hq, c.dim});
        p->execute();
      }
      EXPECT_EQ(one->read_f32("attn"), three->read_f32("attn"));
      EXPECT_EQ(one->read_f32("y"), three->read_f32("y"));
      EXPECT_FALSE(rounded_x(*one));
      EXPECT_EQ(rounded_x(*three), x8 && n > 4);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionRowsLinear, ::testing::ValuesIn(kCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

}  // namespace
}  // namespace wgx::runtime
