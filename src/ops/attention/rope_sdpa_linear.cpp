// rope_sdpa_linear(q, k, v, k_cache, v_cache, input_pos, weight [, q_norm_weight, k_norm_weight])
// -> (attn, k_cache', v_cache', out): rope_sdpa_with_kv_cache, then linear(attn, weight), on one
// node, registered in_place for both caches as rope_sdpa_with_kv_cache is. Its routes run those
// ops' routes through views (runtime::OperandMap): the attention sees every input but the weight
// and attn as its out (the heads merged: the attention routes only bind it), the projection
// attn and the weight in and out out.
//   rope_flash_decoding+merged_q4_gemv   S == 1 at build time, a q4 projection of f32 x staged in
//                          int8: flash decoding, then, where it ran split over at most
//                          kFoldChunks (4) chunks of the cache and x at most 2,048 wide, the projection merging the
//                          chunks' partial results itself (quant/merged_gemv.h: its first
//                          workgroup writes attn) instead of flash decoding's merge. Other steps
//                          write attn in flash decoding (a single pass, here up to one tile of
//                          rows, or more chunks merged by its last workgroups) and run the
//                          projection's own route over it. Two dispatches either way.
//   <attention route>+linear   any S: each of rope_sdpa_with_kv_cache's routes, then the first
//                          of linear's routes that takes the projection.
#include <algorithm>
#include <optional>
#include <utility>

#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::NodeContext;
using runtime::OperandMap;

constexpr size_t kWeight = 6;
// The chunks up to which the projection merges them. Every workgroup of the projection merges
// all of x (each chunk's stats into workgroup memory once, then four chunks' accumulators in
// flight at a time), so its cost grows with the chunks, while the split pass's own merge (one
// workgroup per kv head, the last to finish) stays one dispatch whatever their number. Decode
// tok/s on the H200 (PERFORMANCE.md, 2026-12-01), this bound at 20 / 4 / 0: Llama-3.2-1B at
// 1,024 visible rows (16 chunks merged by the projection at 20) 1,353 / 1,381 / 1,374, at 256
// and 512 rows within 0.5% of each other; Qwen3-0.6B at 1,024 929 / 956 / 955, elsewhere
// within 0.5%; at 128 rows (3 chunks) the projection's merge was as fast as the split pass's.
constexpr uint32_t kFoldChunks = 4;
// Wider x (heads * head_dim) is merged by flash decoding's split pass instead (the projection
// then runs plain): every projection workgroup merging 4,096 values cost Llama-3.1-8B 5% of its
// decode rate (H200, 128..255 visible rows: 378 tok/s folded, 398 not), while the 2,048-wide
// 1B models are within 0.3% either way (PERFORMANCE.md, 2026-12-04).
constexpr int64_t kFoldMaxWidth = 2048;

// The chunks the projection merges at the most for this node.
uint32_t fold_chunks(const NodeContext& ctx) {
  const std::vector<int64_t> q = ctx.input_max_shape(0);  // [B, S, Hq, D]
  return q[2] * q[3] <= kFoldMaxWidth ? kFoldChunks : 0;
}

// The node as rope_sdpa_with_kv_cache: every input but the weight, outputs 0 to 2.
OperandMap attention_operands(const NodeContext& ctx) {
  OperandMap m;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (i != kWeight) m.inputs.push_back({false, i, std::nullopt});
  }
  m.outputs = {{true, 0, std::nullopt}, {true, 1, std::nullopt}, {true, 2, std::nullopt}};
  return m;
}

// The node as linear: attn (output 0) and the weight in, out (output 3) out.
OperandMap linear_operands() {
  OperandMap m;
  m.inputs = {{true, 0, std::nullopt}, {false, kWeight, std::nullopt}};
  m.outputs = {{true, 3, std::nullopt}};
  return m;
}

// The first of `linear` that takes the projection, or nullopt with every reason in `why`.
std::optional<runtime::Route> projection_route(const NodeContext& ctx, const std::vector<runtime::Route>& linear,
                                               std::string& why) {
  const OperandMap view = linear_operands();
  return first_route(NodeContext(ctx, view), linear, why);
}

std::string composite_guard(const NodeContext& ctx, const runtime::Route& attention,
                            const std::vector<runtime::Route>& linear) {
  const OperandMap view = attention_operands(ctx);
  if (auto why = attention.guard(NodeContext(ctx, view)); !why.empty()) return why;
  std::string why;
  return projection_route(ctx, linear, why) ? "" : "no linear route takes the projection (" + why + ")";
}

std::unique_ptr<runtime::NodeExec> composite_build(const NodeContext& ctx, const runtime::Route& attention,
                                                   const std::vector<runtime::Route>& linear) {
  std::string why;
  const runtime::Route projection = projection_route(ctx, linear, why).value();  // the guard found one
  auto steps = std::make_unique<Steps>();
  steps->add(build_viewed(attention.build, ctx, attention_operands(ctx)));
  steps->add(build_viewed(projection.build, ctx, linear_operands()));
  return steps;
}

// One-token steps: flash decoding, then the projection merging the chunks, or, where flash
// decoding wrote attn, the projection's own route over attn.
class FoldedExec : public runtime::NodeExec {
 public:
  void resize(const NodeContext& ctx) override {
    split->resize(ctx);  // first: it sets the step's chunk count, which the merging one reads
    plain->resize(ctx);
    merged->resize(ctx);
  }
  void record(gpu::Recorder& rec) override {
    split->record(rec);
    (*chunks == 0 ? plain : merged)->record(rec);
  }

  std::unique_ptr<runtime::NodeExec> split, plain, merged;
  std::shared_ptr<const uint32_t> chunks;
};

std::string folded_guard(const NodeContext& ctx, const std::vector<runtime::Route>& linear) {
  const OperandMap view = attention_operands(ctx);
  const NodeContext attention(ctx, view);
  if (auto why = rope_flash_decoding_route().guard(attention); !why.empty()) return "rope_flash_decoding: " + why;
  const std::vector<int64_t> q = ctx.input_max_shape(0);  // [B, S, Hq, D]
  if (q[0] != 1) return "batch " + std::to_string(q[0]) + " (the merged projection takes one row)";
  const OperandMap projection_view = linear_operands();
  const NodeContext projection(ctx, projection_view);
  if (auto why = quant::merged_gemv_guard(projection, static_cast<uint32_t>(q[2]), static_cast<uint32_t>(q[3]),
                                          std::min(fold_chunks(ctx), rope_flash_slots(attention)));
      !why.empty()) {
    return "merged q4_gemv: " + why;
  }
  std::string why;
  return projection_route(ctx, linear, why) ? "" : "no linear route takes the projection (" + why + ")";
}

std::unique_ptr<runtime::NodeExec> folded_build(const NodeContext& ctx, const std::vector<runtime::Route>& linear) {
  std::string why;
  const runtime::Route projection = projection_route(ctx, linear, why).value();  // the guard found one
  auto exec = std::make_unique<FoldedExec>();
  quant::SplitPartials partials;
  const uint32_t fold = fold_chunks(ctx);
  exec->split = build_viewed([&partials, fold](const NodeContext& c) { return rope_flash_split(c, partials, fold); },
                             ctx, attention_operands(ctx));
  exec->chunks = partials.chunks;
  exec->plain = build_viewed(projection.build, ctx, linear_operands());
  exec->merged = build_viewed([&partials](const NodeContext& c) { return quant::merged_gemv(c, partials); }, ctx,
                              linear_operands());
  return exec;
}

}  // namespace

std::vector<runtime::Route> rope_sdpa_linear_routes(const std::vector<runtime::Route>& attention,
                                                    const std::vector<runtime::Route>& linear) {
  std::vector<runtime::Route> routes{
      {"rope_flash_decoding+merged_q4_gemv", [linear](const NodeContext& c) { return folded_guard(c, linear); },
       [linear](const NodeContext& c) { return folded_build(c, linear); }}};
  for (const runtime::Route& a : attention) {
    routes.push_back({a.name + "+linear", [a, linear](const NodeContext& c) { return composite_guard(c, a, linear); },
                      [a, linear](const NodeContext& c) { return composite_build(c, a, linear); }});
  }
  return routes;
}

}  // namespace wgx::ops::attention
