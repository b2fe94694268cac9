// q4_gemv's one-row variant whose x is flash decoding's partial results, merged in its prologue
// (Stage::Comb in product_parts.h, stage_comb_i8 in q4_gemv.variants.toml): rope_sdpa_linear's
// output projection at a one-token step, where the attention ran split over chunks of the cache,
// without the attention's own merge of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/op_kernel.h"

namespace wgx::ops::quant {

// Flash decoding's partial results (sdpa_flash.wgsl's Part) for query heads of head_dim values each.
struct SplitPartials {
  gpu::BufferBinding stats;  // (m, l) per (query head, chunk slot)
  gpu::BufferBinding acc;    // head_dim accumulators per (query head, chunk slot)
  gpu::BufferBinding attn;   // where the merged x goes (the attention output: f32, K values)
  uint32_t slots = 0;        // chunk slots per query head
  uint32_t head_dim = 0;
  // The chunks of the current step, set before the product resizes (flash decoding's resize sets it).
  std::shared_ptr<const uint32_t> chunks;
};

// "" when `ctx` (a linear node, or a view of one: x [1, 1, K], a q4gsw weight, no bias) can take
// its x as `heads` heads of `head_dim` merged from up to `chunks` chunks each; otherwise why not.
std::string merged_gemv_guard(const runtime::NodeContext& ctx, uint32_t heads, uint32_t head_dim, uint32_t chunks);
// Its executable part (one dispatch).
std::unique_ptr<runtime::NodeExec> merged_gemv(const runtime::NodeContext& ctx, const SplitPartials& partials);

}  // namespace wgx::ops::quant
