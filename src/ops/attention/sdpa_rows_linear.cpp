// sdpa_rows_linear(q, k_cache, v_cache, rows, weight) -> (attn, out): sdpa_rows, then
// linear(attn, weight), on one node. Its routes run those ops' routes through views
// (runtime::OperandMap): the attention sees the first four inputs and attn as its out (the heads
// merged: the route only binds it), the projection attn and the weight in and out out.
//   rows_online+q4_gemm   the projection q4_gemm's with x in int8: whoever writes a group's
//                         outputs in sdpa_rows.wgsl also rounds them to int8 chunks into the
//                         projection's x (the same bits as q8_chunks.wgsl makes of attn), so the
//                         projection runs no q8_chunks (at four rows or fewer it reads attn).
//   rows_online+linear    sdpa_rows' route, then the first of linear's routes that takes the
//                         projection.
#include "ops/attention/attention.h"
#include "ops/common.h"
#include "ops/quant/gemm_handover.h"

namespace wgx::ops::attention {

namespace {

using runtime::NodeContext;
using runtime::OperandMap;

constexpr size_t kWeight = 4;

// The node as sdpa_rows: the first four inputs, attn (output 0) out.
OperandMap attention_operands() {
  OperandMap m;
  for (size_t i = 0; i < kWeight; ++i) m.inputs.push_back({false, i, std::nullopt});
  m.outputs = {{true, 0, std::nullopt}};
  m.op = "sdpa_rows";
  return m;
}

// The node as linear: attn (output 0) and the weight in, out (output 1) out.
OperandMap linear_operands() {
  OperandMap m;
  m.inputs = {{true, 0, std::nullopt}, {false, kWeight, std::nullopt}};
  m.outputs = {{true, 1, std::nullopt}};
  m.op = "linear";
  return m;
}

std::string x8_guard(const NodeContext& ctx) {
  const OperandMap a = attention_operands(), p = linear_operands();
  if (auto why = sdpa_rows_guard(NodeContext(ctx, a), true); !why.empty()) return "sdpa_rows: " + why;
  if (auto why = quant::q4_gemm_x8_guard(NodeContext(ctx, p)); !why.empty()) return "q4_gemm: " + why;
  return "";
}

std::unique_ptr<runtime::NodeExec> x8_build(const NodeContext& ctx) {
  // The projection's x first (scratch), then the attention that writes it, then the product.
  const OperandMap a = attention_operands(), p = linear_operands();
  const std::shared_ptr<quant::GemmHandover> handover = quant::q4_gemm_x8_handover(NodeContext(ctx, p));
  const quant::X8Target target = quant::x8_target(*handover);
  auto steps = std::make_unique<Steps>();
  steps->add(build_viewed([&target](const NodeContext& c) { return sdpa_rows_exec(c, target); }, ctx, a));
  steps->add(build_viewed([&handover](const NodeContext& c) { return quant::q4_gemm_fed(c, handover); }, ctx, p));
  return steps;
}

std::string composite_guard(const NodeContext& ctx, const std::vector<runtime::Route>& linear) {
  const OperandMap a = attention_operands(), p = linear_operands();
  if (auto why = sdpa_rows_guard(NodeContext(ctx, a), false); !why.empty()) return "sdpa_rows: " + why;
  std::string why;
  return first_route(NodeContext(ctx, p), linear, why) ? "" : "no linear route takes the projection (" + why + ")";
}

std::unique_ptr<runtime::NodeExec> composite_build(const NodeContext& ctx, const std::vector<runtime::Route>& linear) {
  const OperandMap p = linear_operands();
  std::string why;
  const runtime::Route projection = first_route(NodeContext(ctx, p), linear, why).value();  // the guard found one
  auto steps = std::make_unique<Steps>();
  steps->add(build_viewed(sdpa_rows_route().build, ctx, attention_operands()));
  steps->add(build_viewed(projection.build, ctx, p));
  return steps;
}

}  // namespace

std::vector<runtime::Route> sdpa_rows_linear_routes(const std::vector<runtime::Route>& linear) {
  return {{"rows_online+q4_gemm", x8_guard, x8_build},
          {"rows_online+linear", [linear](const NodeContext& c) { return composite_guard(c, linear); },
           [linear](const NodeContext& c) { return composite_build(c, linear); }}};
}

}  // namespace wgx::ops::attention
