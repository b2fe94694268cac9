// linear_swiglu_linear(x, gate_up_weight, down_weight) -> (act, out) and its add_rms_norm_ form
// (x, residual, norm_weight, gate_up_weight, down_weight) -> (act, out, x + residual): the gated
// MLP as one node. Routes, in order:
//   q4_gemv_persist       the add_rms_norm_ form where q4_gemv_q8 below runs, in one dispatch:
//                         its gate/up kernel goes on to the down product after a handoff inside
//                         the dispatch (q4_gemv.wgsl's PERSIST), over quant_mlp_persist_wgs
//                         workgroups (kPersistWorkgroups; 1 on a CPU adapter), which need not
//                         run at once (a wait makes the gate/up tiles of workgroups that have
//                         not started). The quant_mlp_persist option: on, off; by default on
//                         where it measured faster (see persist_guard). act is staged in
//                         workgroup memory after the handoff where it fits (q4_gemv.wgsl's
//                         stage_act), else read where it lies.
//   q4_gemv_q8            one row of f32 x, q4gsw weights, no biases: the gate/up q4_gemv
//                         (with the norm prologue for the add_rms_norm_ form) writes act and
//                         act rounded to int8 in runs of 16 (q4_gemv.wgsl's q8_run), which the
//                         down q4_gemv reads as its x (the q8 variant): a twelfth of f32 act's
//                         bytes per workgroup. Declined with the quant_gemv_x8 option off
//                         (every one-row product's x in f32, act too).
//   linear_swiglu+linear  any shape: the first of the gate/up op's routes that takes the node
//                         seen as that op, then the first of linear's that takes act and the
//                         down weight; where both are q4_gemm with int8 x, the gate/up's reduce
//                         pass rounds act for the down product (q4_gemm_gate_up).
#include <optional>

#include "ops/quant/quant_routes.h"
#include "runtime/options.h"

namespace wgx::ops::quant {

namespace {

using runtime::NodeContext;
using runtime::OperandMap;

bool has_norm(const NodeContext& ctx) { return ctx.op().starts_with("add_rms_norm_"); }

// The node as its gate/up op: x (with the residual and the norm weight) and the gate/up weight
// in; act (and x + residual, output 2) out.
OperandMap gate_up_operands(const NodeContext& ctx) {
  const bool norm = has_norm(ctx);
  OperandMap m;
  for (size_t i = 0; i < (norm ? 4u : 2u); ++i) m.inputs.push_back({false, i, std::nullopt});
  m.outputs.push_back({true, 0, std::nullopt});
  if (norm) m.outputs.push_back({true, 2, std::nullopt});
  m.op = norm ? "add_rms_norm_linear_swiglu" : "linear_swiglu";
  return m;
}

// The node as linear: act (output 0) and the down weight in, out (output 1) out.
OperandMap down_operands(const NodeContext& ctx) {
  OperandMap m;
  m.inputs = {{true, 0, std::nullopt}, {false, has_norm(ctx) ? 4u : 2u, std::nullopt}};
  m.outputs = {{true, 1, std::nullopt}};
  m.op = "linear";
  return m;
}

std::string pair_guard(const NodeContext& ctx) {
  const OperandMap gate_up = gate_up_operands(ctx), down = down_operands(ctx);
  return q8_pair_guard(NodeContext(ctx, gate_up), NodeContext(ctx, down));
}

std::unique_ptr<runtime::NodeExec> pair_build(const NodeContext& ctx) {
  auto steps = std::make_unique<Steps>();
  gpu::BufferBinding q8;
  steps->add(build_viewed([&q8](const NodeContext& c) { return q8_gate_up(c, q8); }, ctx, gate_up_operands(ctx)));
  steps->add(build_viewed([&q8](const NodeContext& c) { return q8_down(c, q8); }, ctx, down_operands(ctx)));
  return steps;
}

// Workgroups of the persist kernel by default: as many as a large GPU runs at once (the H200 has
// 132 multiprocessors, each holding several), each then taking one or two tiles of each product
// (fewer measured slower: PERFORMANCE.md, 2026-12-01); on a CPU adapter 1 (the route takes no
// more there). The quant_mlp_persist_wgs option sets another.
constexpr uint64_t kPersistWorkgroups = 256;
uint64_t persist_workgroups(const NodeContext& ctx) {
  const std::optional<uint32_t> wgs = runtime::option_count(ctx.options(), "quant_mlp_persist_wgs");
  return wgs ? *wgs : ctx.gpu().adapter().is_cpu ? 1 : kPersistWorkgroups;
}

// quant_mlp_persist = auto takes the route where it measured faster: on GPU adapters, for MLPs
// whose gate/up product has at most one tile per workgroup. On the H200 (decode tok/s at 128
// rows, PERFORMANCE.md, 2026-12-01) Qwen3-0.6B's (192 tiles) went +2% at 256 workgroups, +4%
// more with act staged in workgroup memory; Llama-3.2-1B's (512 tiles) lost 7% at 256 and
// 6.5% at 512, where each has one, and with act staged came within 0.5% at 256 (at 512 the
// workgroups no longer run at once there).
std::string persist_guard(const NodeContext& ctx) {
  const std::string_view on = runtime::option_choice(ctx.options(), "quant_mlp_persist");
  if (on == "off") return "quant_mlp_persist is off";
  return q8_persist_guard(NodeContext(ctx, gate_up_operands(ctx)), NodeContext(ctx, down_operands(ctx)),
                          persist_workgroups(ctx), on == "auto");
}

std::unique_ptr<runtime::NodeExec> persist_build(const NodeContext& ctx) {
  const OperandMap down = down_operands(ctx);
  return build_viewed(
      [&ctx, &down](const NodeContext& g) { return q8_persist(g, NodeContext(ctx, down), persist_workgroups(ctx)); },
      ctx, gate_up_operands(ctx));
}

std::string composite_guard(const NodeContext& ctx, const std::vector<runtime::Route>& gate_up,
                            const std::vector<runtime::Route>& linear) {
  const OperandMap g = gate_up_operands(ctx), d = down_operands(ctx);
  std::string why;
  if (!first_route(NodeContext(ctx, g), gate_up, why)) return "no " + g.op + " route takes gate/up (" + why + ")";
  if (!first_route(NodeContext(ctx, d), linear, why)) return "no linear route takes down (" + why + ")";
  return "";
}

std::unique_ptr<runtime::NodeExec> composite_build(const NodeContext& ctx, const std::vector<runtime::Route>& gate_up,
                                                   const std::vector<runtime::Route>& linear) {
  const OperandMap g = gate_up_operands(ctx), d = down_operands(ctx);
  std::string why;
  // The guard found both.
  const runtime::Route first = first_route(NodeContext(ctx, g), gate_up, why).value();
  const runtime::Route second = first_route(NodeContext(ctx, d), linear, why).value();
  auto steps = std::make_unique<Steps>();
  if (first.name == "q4_gemm" && second.name == "q4_gemm") {
    // act reaches the down product in int8 from the gate/up's reduce pass (q4_gemm_gate_up).
    std::shared_ptr<GemmHandover> handover;
    steps->add(build_viewed([&handover](const NodeContext& c) { return q4_gemm_gate_up(c, handover); }, ctx, g));
    steps->add(build_viewed([&handover](const NodeContext& c) { return q4_gemm_fed(c, handover); }, ctx, d));
    return steps;
  }
  steps->add(build_viewed(first.build, ctx, g));
  steps->add(build_viewed(second.build, ctx, d));
  return steps;
}

}  // namespace

std::vector<runtime::Route> mlp_routes(const std::string& op, const std::vector<runtime::Route>& linear) {
  const std::vector<runtime::Route> gate_up =
      product_routes(op.starts_with("add_rms_norm_") ? "add_rms_norm_linear_swiglu" : "linear_swiglu");
  return {{"q4_gemv_persist", persist_guard, persist_build},
          {"q4_gemv_q8", pair_guard, pair_build},
          {"linear_swiglu+linear", [gate_up, linear](const NodeContext& c) { return composite_guard(c, gate_up, linear); },
           [gate_up, linear](const NodeContext& c) { return composite_build(c, gate_up, linear); }}};
}

}  // namespace wgx::ops::quant
