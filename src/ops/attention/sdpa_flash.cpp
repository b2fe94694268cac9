// sdpa_with_kv_cache, "flash_decoding": split-K attention for single-token decode (S == 1 at
// build time), one dispatch. One workgroup per (batch, kv head, chunk of the visible cache rows)
// for all query heads of the group. The chunk length grows with the context (kMinChunk rows at
// least, at most step_limit's chunks: 32, or 48 where that keeps each within one tile), so a long
// context still spreads over many workgroups and the scratch has a fixed bound.
// The merge: once its partial (max, sum, accumulator) is written, each workgroup counts itself
// per (batch, kv head) (a storage barrier, then an atomic add), and the last to arrive merges
// that kv head's chunks (merge_chunks) and sets the count back to 0: no workgroup waits for
// another, so this needs no guarantee that workgroups run together. (A second dispatch merging
// them, one workgroup per output row, took decode at 3,900 visible rows on the H200 from 1,272 to
// 1,235 tok/s on Llama-3.2-1B and from 841 to 797 on Qwen3-0.6B: PERFORMANCE.md, 2026-12-01; it
// is gone.)
// Single pass: at short context even the split's merge costs more than the split saves. While
// the visible rows (input_pos + 1) are at most default_single_max (or the sdpa_decode_single_max
// option, in rows; 0: never), the kernel runs with one chunk per (batch, kv head) covering every
// visible row and writes the output acc / l itself (write_out2 in the family's prelude, as the
// merge does). input_pos changes every step, so resize decides it per step.
// The kernel writes its partials into one scratch buffer, the (m, l) of every slot and then,
// from an offset a binding may start at, the accumulators (which rope_sdpa_linear's projection
// binds apart).
//
// rope_sdpa_with_kv_cache's "rope_flash_decoding" (S == 1 at build time) runs the same passes with
// the flash_rope variants, which take q and the new k and v rows as the projection gives them and
// do rope_update_cache's work inside the kernel (sdpa_flash.wgsl's rope_rows): a step is then
// one dispatch fewer than the two ops' (rope_update_cache's dispatch first measured slower on
// the H200: 1,941 against 1,813 us a Llama-3.2-1B step at ~3,900 rows, PERFORMANCE.md,
// 2026-11-30). Its caches are updated in place as rope_update_cache updates them (InPlaceExec).
// Its kernels see the node through sdpa_operands: q, the updated caches, input_pos and out as
// sdpa_with_kv_cache's are; the new rows and the rope table come from the node itself.
#include <algorithm>
#include <bit>
#include <optional>
#include <string_view>

#include "ops/attention/attention.h"
#include "ops/common.h"
#include "runtime/options.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

// sdpa_flash.wgsl
constexpr uint32_t kWorkgroupSize = 256;
constexpr uint32_t kMaxGroup = 16;      // MAX_G
constexpr uint32_t kMaxGroupDim = 1024;  // MAX_GD
constexpr uint32_t kRowsPerTile = 64;   // T
// q_s, part_s and p_s, mx_s (8 per head), m_s and alpha_s, last_s.
constexpr uint64_t kWorkgroupBytes = 4 * (kMaxGroupDim + 2 * kMaxGroup * kRowsPerTile + 10 * kMaxGroup + 1);
constexpr size_t kParamWords = 24;

constexpr uint32_t kMinChunk = 16;
// The merge (merge_chunks) keeps a weight per (query head, chunk) of a group in p_s.
constexpr uint32_t kMergeWeights = kMaxGroup * kRowsPerTile;
// The chunk bound by context. At most 32 chunks, except where 32 would take more than one tile
// each and 48 would not (2,049 to 3,072 visible rows): there 48 chunks of at most one tile. Decode tok/s on the H200
// (PERFORMANCE.md, 2026-12-01 (night)), 32 against 48 in one session: Qwen3-0.6B at 2,048 rows
// 891 / 921 (80-row chunks against 48), at 2,560 896 / 943 (96 against 64), Llama-3.2-1B 1,335 /
// 1,362 at 2,560; at 1,024, 1,536, 3,072, 3,584 and 3,900 rows, where both take as many tiles, 32
// was as fast or faster (fewer chunks to merge; 61 chunks of one tile at 3,900 lost 12%; 24 or 40
// at 3,900 rows lost too: 2026-11-30 (late)).
constexpr uint32_t kMaxChunks = 32;
constexpr uint32_t kOneTileChunks = 48;
// The chunks any step makes at most (the slots per kv head); the merge's weights hold them all.
constexpr uint32_t kSlots = std::max(kMaxChunks, kOneTileChunks);
static_assert(kMaxGroup * kSlots <= kMergeWeights);
// Visible rows up to which a step runs as a single pass (the default; the sdpa_decode_single_max
// option sets another, 0: never): whole tiles holding up to kSingleMaxElements cache elements per
// row set, at least one tile: two tiles (128 rows) at head_dim 64, one (64) at head_dim 128. One
// workgroup per kv head is slow over many rows; the split costs its merge (then a dispatch of its
// own). On the H200 (GPU time of the whole decode step, PERFORMANCE.md, 2026-11-30) the single
// pass was faster up to 101 rows for Llama-3.2-1B (head_dim 64) and up to 65 for Qwen3-0.6B
// (head_dim 128), the split one from 129 and 101 rows (-2% and -6% of the step at 129).
constexpr uint32_t kSingleMaxElements = 2 * kRowsPerTile * 64;
uint32_t default_single_max(uint32_t dim) {
  return kRowsPerTile * std::max(1u, kSingleMaxElements / kRowsPerTile / std::max(dim, 1u));
}

// The sdpa_decode_stop option (diagnostics, wrong results): the kernel ends after its prologue,
// after phase A of each tile, or after its softmax (no p * v): sdpa_flash.wgsl's STOP; 0: off.
uint32_t stop_code(const NodeContext& ctx) {
  const std::string_view v = runtime::option_choice(ctx.options(), "sdpa_decode_stop");
  return v == "prologue" ? 1 : v == "scores" ? 2 : v == "softmax" ? 3 : 0;
}

// The bound for a step over `visible` rows.
uint32_t step_limit(uint32_t visible) {
  return visible > kMaxChunks * kRowsPerTile && visible <= kOneTileChunks * kRowsPerTile ? kOneTileChunks : kMaxChunks;
}
// `fold`: rope_sdpa_linear's, whose split steps the projection merges (no merge in the kernel):
// a single pass pays only up to one tile there (on the H200, Llama-3.2-1B's
// step at 41-56 visible rows 860 us single, 874 split; at 81-96, 900 single, 873 split; Qwen3's
// at 21-36 and 41-56 single by 1-2%: PERFORMANCE.md, 2026-11-30).
uint32_t single_max(const NodeContext& ctx, bool fold = false) {
  const std::optional<uint32_t> rows = runtime::option_count(ctx.options(), "sdpa_decode_single_max");
  return rows ? *rows : fold ? kRowsPerTile : default_single_max(geometry_max(ctx).dim);
}

// How the `visible` cache rows (input_pos + 1) are chunked, in at most `limit` chunks.
struct Chunks {
  uint32_t rows = 0, count = 0;
};
Chunks chunks_for(uint32_t visible, uint32_t limit) {
  const uint32_t per_chunk = (visible + limit - 1) / limit;
  Chunks c;
  c.rows = std::max(kMinChunk, (per_chunk + kMinChunk - 1) / kMinChunk * kMinChunk);
  c.count = (visible + c.rows - 1) / c.rows;
  return c;
}

// Where the projection merges the chunks (rope_sdpa_linear's `fold`): chunks of at least this many
// rows and at most the fold bound, while that keeps each chunk within one tile (up to 4 x 64 = 256
// visible rows). A chunk
// of up to one tile costs its workgroup about the same whatever its rows, so fewer, fuller
// chunks leave the projection fewer to merge. On the
// H200 (decode tok/s over 256 tokens from input_pos 128 / 512, PERFORMANCE.md, 2026-11-30
// evening), chunks of at least 64 rows against 32 and the earlier plan (16-row chunks, at most
// 32 of them, the combine pass past 20): Llama-3.2-1B 1,139 / 1,120 against 1,132 / 1,092 and
// 1,106 / 1,085; Qwen3-0.6B 854 / 836 against 850 / 812 and 822 / 799. Merged chunks of several
// tiles, so that longer contexts skip the combine pass too, lost with the kernels built per shape
// (PERFORMANCE.md, 2026-11-30 (late)): at 3,900 rows 20 chunks of four tiles took Qwen3 787 ->
// 725 tok/s and Llama 1,144 -> 1,077, 32 chunks of two 787 -> 767 and 1,139 -> 1,071; at 2,000
// rows two-tile chunks were +1% on Qwen3 and -0.3% on Llama. Chunks of at least 32 rows lost
// 1-3% (2026-11-30 (late)).
constexpr uint32_t kFoldRows = 64;

// Warm-ahead: the split pass's workgroups are few (a kv head's chunks: 16 at 128 rows for both
// models) and bound by latency, so most of the GPU, and its memory, idle while it runs. Extra
// workgroups then read a weight that a later dispatch reads (sdpa_flash.wgsl's warm), which finds
// it in the L2 cache. The candidates are the matrices (constants of two dimensions or more: not
// the norms' weights) that this node and the next one read, in the order they run them
// (rope_sdpa_linear's: the output projection's weight, then the MLP's gate/up and down weights,
// or gate, up and down apart); sdpa_decode_warm picks one by its place, or `last` (the default
// on GPU adapters: the one read furthest ahead, the MLP's down weight), or off (the default on
// CPU adapters, which have no such cache), over kWarmWorkgroups workgroups. On the H200 (decode tok/s, PERFORMANCE.md,
// 2026-12-01 (day)), Llama-3.2-1B at 128 rows: off 1,429-1,434, down 1,444-1,452 (+1.2%), the
// output projection's weight 1,430-1,436, gate/up (18.9 MB, longer than the attention) 1,405,
// down with 256 or 512 workgroups 1,429-1,431 and 1,410; at 3,900 rows +0.8%; Qwen3-0.6B
// (1.8 MB of down) +0.4% at 128 rows, within the runs' spread.
constexpr uint32_t kWarmWorkgroups = 128;
constexpr uint32_t kWarmKey = 0x9e3779b9u;  // warm's comparison value (any)
constexpr int kWarmOff = -1, kWarmLast = -2;
// The sdpa_decode_warm option: the candidate's place (0 to 7, the digits the option accepts), kWarmLast or
// kWarmOff (auto: last on GPU adapters, off on CPU ones).
int warm_pick(const NodeContext& ctx) {
  const std::string_view v = runtime::option_choice(ctx.options(), "sdpa_decode_warm");
  if (v == "auto") return ctx.gpu().adapter().is_cpu ? kWarmOff : kWarmLast;
  if (v == "off") return kWarmOff;
  if (v == "last") return kWarmLast;
  return v.front() - '0';  // the option's table allows only those digits
}
struct WarmPlan {
  gpu::BufferBinding buffer;
  uint32_t vec4 = 0, workgroups = 0;  // 0: nothing warms
};
WarmPlan warm_plan(const NodeContext& ctx) {
  const int pick = warm_pick(ctx);
  if (pick == kWarmOff) return {};
  std::vector<runtime::TensorRef> candidates;
  for (const NodeContext::Constant& c : ctx.constants_ahead(1)) {
    if (ctx.graph().type(c.value).shape.size() >= 2) candidates.push_back(c.ref);
  }
  if (candidates.empty()) return {};
  const size_t at = pick == kWarmLast ? candidates.size() - 1 : static_cast<size_t>(pick);
  if (at >= candidates.size()) return {};
  const runtime::TensorRef& r = candidates[at];
  // Whole vec4 words only (a weight of fewer than 16 bytes is not worth a workgroup), as much of
  // the weight as one binding takes.
  const uint64_t bytes = std::min(r.capacity, ctx.gpu().limits().max_storage_buffer_binding_size) / 16 * 16;
  if (bytes == 0) return {};
  WarmPlan w;
  w.buffer = {r.buffer, r.offset, bytes};
  w.vec4 = static_cast<uint32_t>(bytes / 16);
  w.workgroups = kWarmWorkgroups;
  return w;
}

// One step: its chunks, and whether it is a single pass (then one chunk of all visible rows).
struct Plan {
  Chunks chunks;
  bool single = false;
};
// `fold_max`: the chunks the consumer merges (0: it merges none), in chunks of at least kFoldRows
// rows.
Plan plan_for(uint32_t visible, uint32_t single_rows, uint32_t fold_max) {
  const uint32_t limit = step_limit(visible);
  if (visible <= single_rows) return {{visible, 1}, true};
  if (const uint32_t most = std::min(fold_max, limit); most > 0) {
    const uint32_t rows = std::max(kFoldRows, (visible + most - 1) / most);
    if (rows <= kRowsPerTile) return {{rows, (visible + rows - 1) / rows}, false};
  }
  return {chunks_for(visible, limit), false};
}
uint32_t max_chunks(const Geometry& g) { return std::min(kSlots, (g.max_seq + kMinChunk - 1) / kMinChunk); }

// The partials' scratch (the kernel's Part): the stats of every slot (8 bytes each), then from
// acc_offset (aligned for a binding of its own) the accumulators (dim floats each).
struct PartLayout {
  uint64_t stats_bytes = 0, acc_offset = 0, acc_bytes = 0;
  uint64_t bytes() const { return acc_offset + acc_bytes; }
};
PartLayout part_layout(const NodeContext& ctx, const Geometry& g) {
  const uint64_t slots = uint64_t{g.batch} * g.hq * max_chunks(g);
  const uint64_t align = std::max<uint64_t>(ctx.gpu().limits().min_storage_buffer_offset_alignment, 8);
  PartLayout p;
  p.stats_bytes = slots * 8;
  p.acc_offset = (p.stats_bytes + align - 1) / align * align;
  p.acc_bytes = slots * g.dim * 4;
  return p;
}

std::string guard(const NodeContext& ctx) {
  if (auto why = sdpa_guard(ctx); !why.empty()) return why;
  const Geometry g = geometry_max(ctx);
  if (g.seq != 1) return "S can be " + std::to_string(g.seq) + " (single-token decode only)";
  if (g.dim % 2 != 0) return "head_dim " + std::to_string(g.dim) + " is odd";
  if (g.group > kMaxGroup || uint64_t{g.group} * g.dim > kMaxGroupDim) {
    return "a group of " + std::to_string(g.group) + " query heads x head_dim " + std::to_string(g.dim) +
           " is over " + std::to_string(kMaxGroup) + " heads or " + std::to_string(kMaxGroupDim) + " elements";
  }
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, kWorkgroupBytes); !why.empty()) return why;
  if (auto why = scratch_guard(ctx, part_layout(ctx, g).bytes()); !why.empty()) return why;
  return workgroups_guard(ctx, uint64_t{g.batch} * g.hkv * max_chunks(g));
}

// flash_rope's inputs besides sdpa's (rope_sdpa_with_kv_cache): the step's k and v rows, the rope
// table, and the params that say how to use them.
struct NewRows {
  gpu::BufferBinding k, v;
  RopeTable table;
  bool rotate_half = true;
  float eps = 0, inv_n = 0;
};

// `ctx` shows sdpa_with_kv_cache's operands (a view, for rope_sdpa_with_kv_cache); with `rope`,
// the flash_rope kernel, which rotates q and writes the new rows first. With `fold`, the merge is
// left to whoever consumes the partials (rope_sdpa_linear's projection) at steps of at most
// `fold_max` chunks: `fold` gets where they lie, and each resize sets the step's chunk count
// there, 0 where the kernel wrote out (a single pass, or more chunks: it merges them itself).
std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, const NewRows* rope,
                                         quant::SplitPartials* fold = nullptr, uint32_t fold_max = 0) {
  std::vector<std::pair<std::string, double>> constants;
  if (const uint32_t stop = stop_code(ctx); stop != 0) constants.emplace_back("STOP", stop);
  // The kernel built for the model's group size and head_dim (kFlashFixed), a kernel per
  // geometry: with fixed trip counts the driver gave it 58-71 registers instead of 80 on the
  // H200, and decode went from 1,136 to 1,179 tok/s on Llama-3.2-1B, 859 to 902 on Qwen3-0.6B
  // (PERFORMANCE.md, 2026-11-30), against one kernel reading them from params.
  const Geometry max = geometry_max(ctx);
  kFlashFixed.constants(constants, {max.group, max.dim});
  const gpu::Kernel& split = kernel(ctx, (rope ? "flash_rope." : "flash.") + io_label(ctx), std::move(constants));
  auto steps = std::make_unique<Steps>();
  const uint32_t single = single_max(ctx, fold != nullptr);
  const uint32_t fold_chunks = fold ? fold_max : 0;
  const PartLayout layout = part_layout(ctx, max);
  const gpu::BufferBinding part = steps->scratch(ctx, layout.bytes());
  const gpu::BufferBinding stats{part.buffer, part.offset, layout.stats_bytes};
  const gpu::BufferBinding acc{part.buffer, part.offset + layout.acc_offset, layout.acc_bytes};
  const uint32_t scale = scale_bits(ctx);
  const uint32_t slots_per_head = max_chunks(max);
  // The params after `single`: where the accumulators start (in pairs), then flash_rope's.
  std::vector<uint32_t> tail{static_cast<uint32_t>(layout.acc_offset / 8), 0, 0, 0, 0, 0, 0, 0};
  std::shared_ptr<gpu::Buffer> table;  // bound by pass 1, whose update keeps it
  if (rope) {
    table = rope->table.buffer;
    tail = {tail[0],
            rope->rotate_half ? 1u : 0u,
            rope->table.norm_words > 0 ? 1u : 0u,
            std::bit_cast<uint32_t>(rope->eps),
            std::bit_cast<uint32_t>(rope->inv_n),
            rope->table.norm_base,
            rope->table.norm_words,
            0};
  }
  const size_t merge_word = 12 + tail.size();  // params.merge
  const WarmPlan warm = warm_plan(ctx);
  tail.insert(tail.end(), {0, warm.workgroups, warm.vec4, kWarmKey});
  std::shared_ptr<uint32_t> chunks_now;
  if (fold) {
    chunks_now = std::make_shared<uint32_t>(0);
    *fold = {stats, acc, ctx.output(0).binding(), slots_per_head, max.dim, chunks_now};
  }
  // Whether the consumer merges this step's chunks.
  auto merged = [folding = fold != nullptr, fold_max](const Plan& p) {
    return folding && !p.single && p.chunks.count <= fold_max;
  };
  // Whether the kernel merges them itself (its last workgroup per kv head: merge_chunks).
  auto in_kernel = [=](const Plan& p) { return !p.single && !merged(p); };
  // The plan of this step (input_pos changed, or the shape class did).
  auto update = [=, keep = table](const NodeContext& c) {
    const Geometry g = geometry_now(c);
    const uint32_t pos = position(c, 3, g.seq, g.max_seq);
    const Plan p = plan_for(pos + 1, single, fold_chunks);
    if (chunks_now) *chunks_now = merged(p) ? p.chunks.count : 0;
    DispatchExec::Launch l;
    l.params = {g.batch,        g.hq,           g.hkv, g.group, g.max_seq, pos, g.dim, p.chunks.rows,
                p.chunks.count, slots_per_head, scale, p.single ? 1u : 0u};
    l.params.insert(l.params.end(), tail.begin(), tail.end());
    l.params[merge_word] = in_kernel(p) ? 1u : 0u;
    l.workgroups = uint64_t{g.batch} * g.hkv * p.chunks.count * g.seq;  // no work when S is 0
    if (l.workgroups > 0) l.workgroups += warm.workgroups;
    return l;
  };
  std::vector<gpu::BufferBinding> split_buffers{ctx.input(0).binding(), ctx.input(1).binding(),
                                                ctx.input(2).binding(), part, ctx.output(0).binding()};
  if (rope) split_buffers.insert(split_buffers.end(), {rope->k, rope->v, {table.get(), 0, 0}});
  split_buffers.push_back(steps->own(ctx, 4ull * max.batch * max.hkv, "chunk counts"));
  split_buffers.push_back(warm.workgroups > 0 ? warm.buffer : ctx.input(0).binding());
  steps->add(std::make_unique<DispatchExec>(ctx, split, split_buffers, kParamWords, update));
  return steps;
}

// rope_sdpa_with_kv_cache: flash_decoding's guard on the node seen as sdpa's, and a table to make.
std::string rope_guard(const NodeContext& ctx) {
  if (auto why = rope_table_guard(ctx); !why.empty()) return why;
  const runtime::OperandMap sdpa = sdpa_operands();
  return guard(NodeContext(ctx, sdpa));
}

std::unique_ptr<runtime::NodeExec> rope_build(const NodeContext& ctx, quant::SplitPartials* fold, uint32_t fold_max) {
  NewRows rows;
  rows.k = ctx.input(1).binding();
  rows.v = ctx.input(2).binding();
  rows.table = rope_table(ctx);
  rows.rotate_half = ctx.attr("layout").as_string() == "rotate_half";
  rows.eps = static_cast<float>(ctx.attr("eps").as_float());
  rows.inv_n = static_cast<float>(1.0 / static_cast<double>(ctx.input_max_shape(0)[3]));
  auto passes =
      build_viewed([&rows, fold, fold_max](const NodeContext& sdpa) { return build(sdpa, &rows, fold, fold_max); }, ctx,
                   sdpa_operands());
  return std::make_unique<InPlaceExec>(ctx, rope_update_cache_in_place(), std::move(passes));
}

}  // namespace

runtime::Route flash_decoding_route() {
  return {"flash_decoding", guard, [](const NodeContext& ctx) { return build(ctx, nullptr); }};
}

runtime::Route rope_flash_decoding_route() {
  return {"rope_flash_decoding", rope_guard, [](const NodeContext& ctx) { return rope_build(ctx, nullptr, 0); }};
}

std::unique_ptr<runtime::NodeExec> rope_flash_split(const NodeContext& ctx, quant::SplitPartials& partials,
                                                    uint32_t fold_max) {
  return rope_build(ctx, &partials, fold_max);
}

uint32_t rope_flash_slots(const NodeContext& ctx) {
  const runtime::OperandMap sdpa = sdpa_operands();
  const NodeContext view(ctx, sdpa);
  return max_chunks(geometry_max(view));
}

}  // namespace wgx::ops::attention
