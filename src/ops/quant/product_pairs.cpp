// The q4 products that serve other nodes' routes: the projection that merges flash decoding's
// chunks in its prologue (merged_gemv.h), and linear_swiglu_linear's one-row pair, as two
// dispatches handing act over in int8 or as one persistent dispatch (mlp.cpp).
#include <algorithm>

#include "ops/quant/product_parts.h"
#include "runtime/handoff_pool.h"
#include "runtime/options.h"

namespace wgx::ops::quant {

using namespace products;

std::string merged_gemv_guard(const NodeContext& ctx, uint32_t heads, uint32_t head_dim, uint32_t chunks) {
  if (auto why = check_node(ctx, true); !why.empty()) return why;
  const Facts f = facts_of(ctx, Op::Linear);
  if (f.f16) return "x is f16 (the merged x is staged from f32)";
  if (f.bias) return "the projection has a bias";
  if (!x8(ctx, f)) return "K = " + std::to_string(f.k) + " is staged in f32, not int8 (quant_gemv_x8)";
  if (head_dim == 0 || head_dim % 8 != 0) return "head_dim " + std::to_string(head_dim) + " is not a multiple of 8";
  if (uint64_t{heads} * head_dim != f.k) return "K = " + std::to_string(f.k) + " is not heads * head_dim";
  if (heads > kCombHeads || uint64_t{heads} * chunks > kCombWeights) {
    return std::to_string(heads) + " heads of up to " + std::to_string(chunks) + " chunks are more than " +
           std::to_string(kCombWeights) + " weights (or " + std::to_string(kCombHeads) + " heads)";
  }
  return check_limits(ctx, info(Kernel::Q4Gemv).buffers + 3, stage_storage(f, Stage::Comb, true));
}

std::unique_ptr<runtime::NodeExec> merged_gemv(const NodeContext& ctx, const SplitPartials& partials) {
  const Facts f = facts_of(ctx, Op::Linear);
  auto exec = std::make_unique<Steps>();
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  // x is not read (the weight stands in for it: a read-only binding of no consequence).
  exec->add(product(ctx, Kernel::Q4Gemv, f,
                    {nibbles, nibbles, w, exec->own(ctx, 4, "no bias"), ctx.output(0).binding(),
                     exec->own(ctx, 4, "no output"), exec->own(ctx, 4, "no output"), partials.stats, partials.acc,
                     partials.attn},
                    1, Stage::Comb, &partials));
  return exec;
}

std::string q8_pair_guard(const NodeContext& gate_up, const NodeContext& down) {
  if (runtime::option_choice(gate_up.options(), "quant_gemv_x8") == "off") {
    return "quant_gemv_x8 is off (x in f32 for the one-row products)";
  }
  if (auto why = guard(gate_up, true, Kernel::Q4Gemv); !why.empty()) return "gate/up: " + why;
  if (auto why = guard(down, true, Kernel::Q4Gemv); !why.empty()) return "down: " + why;
  if (max_rows(gate_up) != 1) return "x has up to " + std::to_string(max_rows(gate_up)) + " rows (the int8 act is for one)";
  Facts f = facts_of(gate_up, Op::Swiglu);
  if (f.f16) return "x is f16";
  if (f.bias || facts_of(down, Op::Linear).bias) return "a product has a bias";
  if ((f.n / 2) % 32 != 0) return "act is " + std::to_string(f.n / 2) + " wide, not a multiple of 32";
  f.q8_out = true;
  if (f.ops.norm && one_row_stage(gate_up, f) != Stage::Norm) return "the gate/up product has no norm prologue here";
  if (auto why = check_limits(gate_up, info(Kernel::Q4Gemv).buffers, info(Kernel::Q4Gemv).storage + kQ8OutStorage);
      !why.empty()) {
    return why;
  }
  return "";
}

std::unique_ptr<runtime::NodeExec> q8_gate_up(const NodeContext& ctx, gpu::BufferBinding& q8) {
  Facts f = facts_of(ctx, Op::Swiglu);
  f.q8_out = true;
  auto exec = std::make_unique<Steps>();
  q8 = Steps::scratch(ctx, 4 * 3 * f.n / 16);  // a row of act: N / 2 bytes, and 16 per 32 values
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  const Stage stage = one_row_stage(ctx, f);  // the guard saw Norm for an add_rms_norm_ view
  std::vector<gpu::BufferBinding> buffers{ctx.input(0).binding(), nibbles, w, exec->own(ctx, 4, "no bias"),
                                          ctx.output(0).binding(), q8, exec->own(ctx, 4, "no output")};
  if (stage == Stage::Norm) {
    buffers.insert(buffers.end(), {ctx.input(1).binding(), ctx.input(2).binding(), ctx.output(1).binding()});
  }
  exec->add(product(ctx, Kernel::Q4Gemv, f, buffers, 1, stage));
  return exec;
}

std::unique_ptr<runtime::NodeExec> q8_down(const NodeContext& ctx, gpu::BufferBinding q8) {
  Facts f = facts_of(ctx, Op::Linear);
  f.q8_in = true;
  auto exec = std::make_unique<Steps>();
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  exec->add(product(ctx, Kernel::Q4Gemv, f,
                    {q8, nibbles, w, exec->own(ctx, 4, "no bias"), ctx.output(0).binding(),
                     exec->own(ctx, 4, "no output"), exec->own(ctx, 4, "no output")},
                    1));
  return exec;
}

// The most column tiles the persist variant's gate/up product can have: tiles of 32 columns at
// least (32 lanes per column group at most, as Q8_OUT has it).
uint64_t max_gate_up_tiles(const Facts& f) { return ceil_div(f.n, kQ4GemvColumns * kWorkgroup / kQ8OutLanes); }

std::string q8_persist_guard(const NodeContext& gate_up, const NodeContext& down, uint64_t workgroups,
                             bool by_default) {
  if (auto why = q8_pair_guard(gate_up, down); !why.empty()) return why;
  const Facts f = facts_of(gate_up, Op::Swiglu);
  if (!f.ops.norm) return "the gate/up product has no norm prologue (the persist variant is add_rms_norm_'s)";
  if (!x8(gate_up, f)) return "x is not staged in int8";
  if (stop_code(gate_up) != 0) {
    return "quant_gemv_stop is set (a diagnostic of the separate products)";
  }
  if (workgroups == 0 || workgroups > gate_up.gpu().workgroups_per_dimension()) {
    return std::to_string(workgroups) + " workgroups is not 1 to " + std::to_string(gate_up.gpu().workgroups_per_dimension());
  }
  if (workgroups > 1 && gate_up.gpu().adapter().is_cpu) {
    return "a CPU adapter may suspend a started workgroup while another waits for it: 1 workgroup there";
  }
  if (workgroups > 1 && ceil_div(max_gate_up_tiles(f), workgroups) > 32) {  // a claim word's bits
    return std::to_string(workgroups) + " workgroups may take more than 32 gate/up tiles each";
  }
  if (std::min(workgroups, max_gate_up_tiles(f)) > kPersistClaimWords) {
    return "more than " + std::to_string(kPersistClaimWords) + " workgroups with gate/up tiles";
  }
  if (by_default && gate_up.gpu().adapter().is_cpu) return "a CPU adapter (quant_mlp_persist=on takes it)";
  if (by_default && max_gate_up_tiles(f) > workgroups) {
    return "up to " + std::to_string(max_gate_up_tiles(f)) + " gate/up tiles for " + std::to_string(workgroups) +
           " workgroups, where it measured slower (quant_mlp_persist=on takes it)";
  }
  return "";
}

std::unique_ptr<runtime::NodeExec> q8_persist(const NodeContext& gate_up, const NodeContext& down, uint64_t workgroups) {
  Facts f = facts_of(gate_up, Op::Swiglu);
  f.q8_out = true;
  const Facts d = facts_of(down, Op::Linear);
  auto exec = std::make_unique<Steps>();
  // The handoff words, the claim words (a word per workgroup that has gate/up tiles, from word
  // kPersistClaims), then act in int8 as q8_run writes it (a row: N / 2 bytes, and 16 per 32
  // values) from word kPersistAct: the same places in every node (q4_gemv.wgsl's PERSIST).
  const uint64_t act_words = 3 * f.n / 16;
  const gpu::BufferBinding q8 = gate_up.handoff(
      4 * (kPersistAct - runtime::HandoffPool::kWords + act_words),
      "route q4_gemv_persist (--option quant_mlp_persist=off runs the MLP as two dispatches)");
  const uint32_t sg_size = gate_up.gpu().adapter().subgroup_min_size;
  Persist p;
  p.n = static_cast<uint32_t>(d.n);
  p.k = static_cast<uint32_t>(d.k);
  p.tpc = lanes(d);
  p.tiles = static_cast<uint32_t>(ceil_div(d.n, kQ4GemvColumns * kWorkgroup / p.tpc));
  p.fault = runtime::option_on(gate_up.options(), "quant_mlp_persist_fault");
  p.help = runtime::option_on(gate_up.options(), "quant_mlp_persist_help");
  p.workgroups = workgroups;
  p.sgwg = sg_size > 0 && p.tpc >= sg_size && p.tpc % sg_size == 0;
  // act staged once per workgroup after the handoff (q4_gemv.wgsl's stage_act) where the
  // workgroup memory holds it beside the gate/up product's, else read where it lies. Staged, on
  // the H200, Qwen3-0.6B decoded 4% faster (1,050.7 / 1,050.6 tok/s against 1,010.4 / 1,015.2:
  // PERFORMANCE.md, 2026-12-01 (afternoon)).
  const uint64_t storage = stage_storage(f, Stage::Norm, true) + kQ8OutStorage + 4 * act_words;
  if (check_limits(gate_up, info(Kernel::Q4Gemv).buffers + kNormBuffers, storage).empty()) {
    p.act_vec4s = static_cast<uint32_t>(act_words / 4);
  }
  const gpu::BufferBinding w = gate_up.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  // The down weight (nibbles, then scales) as X, x where the bias would be; the down output as
  // Out2.
  const std::vector<gpu::BufferBinding> buffers{down.input(d.ops.weight).binding(), nibbles,
                                                w,                                  gate_up.input(0).binding(),
                                                gate_up.output(0).binding(), q8,
                                                down.output(0).binding(),    gate_up.input(1).binding(),
                                                gate_up.input(2).binding(),  gate_up.output(1).binding()};
  exec->add(product(gate_up, Kernel::Q4Gemv, f, buffers, 1, Stage::Norm, nullptr, &p, &d.q4p));
  return exec;
}

}  // namespace wgx::ops::quant
