// rope_sdpa_with_kv_cache(q, k, v, k_cache, v_cache, input_pos [, q_norm_weight, k_norm_weight])
// -> (out, k_cache', v_cache'): rope_update_cache, then sdpa_with_kv_cache over its results, as one
// node, registered in_place for both caches as rope_update_cache is. Its routes are those ops'
// own, run on this node through views (runtime::OperandMap) that show each route its op's
// operands:
//   rope_flash_decoding        S == 1 at build time (sdpa_flash.cpp): flash_decoding's kernel
//                              with the new rows rotated and written inside it
//   rope_update_cache+<sdpa>   any S: rope_update_cache's dispatch, its rotated q in scratch, then
//                              each of sdpa_with_kv_cache's routes in its order (the one the
//                              separate node would take) over that q and the updated caches
#include <optional>
#include <utility>

#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::NodeContext;
using runtime::OperandMap;
using runtime::TensorRef;

// rope_update_cache sees the node's inputs, and as its outputs the rotated q (where `rotated_q`
// lies; without it, q itself, which has its type and shape: enough for a guard) and the updated
// caches.
OperandMap rope_operands(const NodeContext& ctx, std::optional<TensorRef> rotated_q) {
  OperandMap m;
  for (size_t i = 0; i < ctx.input_count(); ++i) m.inputs.push_back({false, i, std::nullopt});
  m.outputs = {{false, 0, std::move(rotated_q)}, {true, 1, std::nullopt}, {true, 2, std::nullopt}};
  return m;
}

std::string guard(const NodeContext& ctx, const runtime::Route& rope, const runtime::Route& sdpa) {
  const OperandMap rope_view = rope_operands(ctx, std::nullopt);
  if (auto why = rope.guard(NodeContext(ctx, rope_view)); !why.empty()) return rope.name + ": " + why;
  const OperandMap sdpa_view = sdpa_operands();
  return sdpa.guard(NodeContext(ctx, sdpa_view));
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, const runtime::Route& rope,
                                         const runtime::Route& sdpa) {
  auto steps = std::make_unique<Steps>();
  // The rotated q lives between the two dispatches only: rope_update_cache's writes all of it.
  TensorRef q = ctx.input(0);
  const gpu::BufferBinding scratch = steps->scratch(ctx, q.capacity);
  q.buffer = scratch.buffer;
  q.offset = scratch.offset;
  steps->add(build_viewed(rope.build, ctx, rope_operands(ctx, q)));
  steps->add(build_viewed(sdpa.build, ctx, sdpa_operands(q)));
  return steps;
}

}  // namespace

OperandMap sdpa_operands(std::optional<TensorRef> rotated_q) {
  OperandMap m;
  m.inputs = {{false, 0, std::move(rotated_q)},
              {true, 1, std::nullopt},
              {true, 2, std::nullopt},
              {false, 5, std::nullopt}};
  m.outputs = {{true, 0, std::nullopt}};
  return m;
}

runtime::Route rope_then_sdpa_route(runtime::Route sdpa) {
  const runtime::Route rope = rope_update_cache_route();
  const std::string name = rope.name + "+" + sdpa.name;
  return {name, [rope, sdpa](const NodeContext& ctx) { return guard(ctx, rope, sdpa); },
          [rope, sdpa](const NodeContext& ctx) { return build(ctx, rope, sdpa); }};
}

}  // namespace wgx::ops::attention
