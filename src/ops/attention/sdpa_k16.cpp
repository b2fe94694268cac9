// sdpa_with_kv_cache and attention, "k16_streaming_q16" / "k16_streaming_q32": online-softmax attention over
// tiles of 16 cache rows for the Llama (head_dim 64) and Qwen3 (head_dim 128) geometries. A
// workgroup of 256 invocations takes a tile of 16 query rows, or 32 when the runtime option
// sdpa_query_tile is "32"; the rows of a tile are the query heads of one kv head and consecutive
// tokens, so grouped heads share the K/V tile loads. Built for prefill and multi-token steps; a
// program whose S varies also runs its single-token steps here (the route is chosen once, and
// flash_decoding only takes programs whose S is always 1), as does a decode-only program whose
// geometry flash_decoding's guard refuses. So that such steps still fill the device, a grid of
// fewer than kTargetWorkgroups query tiles is split over the cache (split-K, at least
// kMinTilesPerSplit K tiles each) and a combine pass (sdpa_combine.wgsl) merges the partials.
#include <algorithm>

#include "ops/attention/attention.h"
#include "ops/common.h"
#include "runtime/options.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 256;  // sdpa_k16.wgsl
constexpr uint32_t kKeyTile = 16;         // KT
constexpr size_t kParamWords = 12;
constexpr uint64_t kCombineWorkgroupSize = 256;  // sdpa_combine.wgsl
constexpr uint64_t kTargetWorkgroups = 256;      // about two per multiprocessor of a large GPU
constexpr uint32_t kMinTilesPerSplit = 2;        // a split's K tiles amortize its query tile load
constexpr uint32_t kMaxSplits = 64;

// Workgroup storage: the query tile and one K/V tile (rows padded by a pair), the tile's scores.
uint64_t workgroup_bytes(uint32_t query_tile, uint32_t dim) {
  return 8 * uint64_t{query_tile + kKeyTile} * (dim / 2 + 1) + 4 * uint64_t{query_tile} * kKeyTile;
}

uint32_t row_tiles(const Geometry& g, uint32_t query_tile) { return (g.seq * g.group + query_tile - 1) / query_tile; }

// Splits over the cache for a step with `k_tiles` K tiles to see, before rounding: it grows with
// k_tiles, so at the longest context it bounds every step's count (the scratch is sized by it).
uint64_t split_cap(const Geometry& g, uint32_t query_tile, uint64_t k_tiles) {
  const uint64_t grid = uint64_t{g.batch} * g.hkv * row_tiles(g, query_tile);
  if (grid == 0 || grid >= kTargetWorkgroups) return 1;
  return std::max<uint64_t>(1, std::min<uint64_t>({(kTargetWorkgroups + grid - 1) / grid, k_tiles / kMinTilesPerSplit, kMaxSplits}));
}

struct Split {
  uint32_t splits = 1, tiles_per_split = 0;
};
// How a step with `visible` cache rows (input_pos + S) is split: equal runs of K tiles, as few
// splits as those runs need.
Split split_for(const Geometry& g, uint32_t query_tile, uint64_t visible) {
  const uint64_t k_tiles = (visible + kKeyTile - 1) / kKeyTile;
  const uint64_t cap = split_cap(g, query_tile, k_tiles);
  Split s;
  s.tiles_per_split = static_cast<uint32_t>((k_tiles + cap - 1) / cap);
  s.splits = s.tiles_per_split == 0 ? 1 : static_cast<uint32_t>((k_tiles + s.tiles_per_split - 1) / s.tiles_per_split);
  return s;
}

// The rows the step's last query row sees: input_pos + S, at most the K/V rows there are.
uint64_t visible_rows(const Geometry& g, uint32_t pos) { return std::min<uint64_t>(uint64_t{pos} + g.seq, g.max_seq); }

// Partial-result slots (output rows x splits) the scratch needs over every S and context.
uint64_t max_slots(const NodeContext& ctx, uint32_t query_tile) {
  Geometry g = geometry_max(ctx);
  const uint64_t k_tiles = (g.max_seq + kKeyTile - 1) / kKeyTile;
  uint64_t most = 0;
  for (uint32_t s = 1, seq_max = g.seq; s <= seq_max; ++s) {
    g.seq = s;
    const uint64_t cap = split_cap(g, query_tile, k_tiles);
    if (cap > 1) most = std::max(most, uint64_t{g.batch} * s * g.hq * cap);
  }
  return most;
}

// Q32 runs only when the sdpa_query_tile option asks for it; Q16 is the default and also takes a
// program whose Q32 was refused (Q32 comes first).
std::string option_guard(const NodeContext& ctx, uint32_t query_tile) {
  if (query_tile == 32 && runtime::option_choice(ctx.options(), "sdpa_query_tile") != "32") {
    return "sdpa_query_tile is not 32";
  }
  return "";
}

std::string guard(const NodeContext& ctx, uint32_t query_tile, bool causal) {
  if (auto why = causal_guard(ctx, causal); !why.empty()) return why;
  if (auto why = option_guard(ctx, query_tile); !why.empty()) return why;
  const Geometry g = geometry_max(ctx);
  if (g.dim != 64 && g.dim != 128) return "head_dim " + std::to_string(g.dim) + " is not 64 or 128";
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, workgroup_bytes(query_tile, g.dim)); !why.empty()) return why;
  if (auto why = scratch_guard(ctx, max_slots(ctx, query_tile) * g.dim * 4); !why.empty()) return why;
  // Unsplit grids are the largest: a split grid has fewer than 2 * kTargetWorkgroups workgroups.
  return workgroups_guard(ctx, std::max<uint64_t>(uint64_t{g.batch} * g.hkv * row_tiles(g, query_tile), 2 * kTargetWorkgroups));
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, uint32_t query_tile, bool causal) {
  const uint32_t dim = geometry_max(ctx).dim;
  const gpu::Kernel& k = kernel(ctx, "k16.q" + std::to_string(query_tile) + ".d" + std::to_string(dim) + "." + io_label(ctx));
  const gpu::Kernel& combine = kernel(ctx, "combine." + float_label(ctx.output(0).storage));
  auto steps = std::make_unique<Steps>();
  const uint64_t slots = max_slots(ctx, query_tile);
  const gpu::BufferBinding stats = steps->scratch(ctx, slots * 8);
  const gpu::BufferBinding acc = steps->scratch(ctx, slots * dim * 4);
  const uint32_t scale = scale_bits(ctx);
  auto update = [scale, query_tile, causal](const NodeContext& c) {
    const Geometry g = geometry_now(c);
    const uint32_t pos = causal_position(c, causal, g);
    const uint32_t tiles = row_tiles(g, query_tile);
    const Split sp = split_for(g, query_tile, visible_rows(g, pos));
    DispatchExec::Launch l;
    l.params = {g.batch, g.seq, g.hq, g.hkv, g.group, g.max_seq, pos, tiles, scale, sp.splits, sp.tiles_per_split,
                g.max_seq};
    l.workgroups = uint64_t{g.batch} * g.hkv * tiles * sp.splits;
    return l;
  };
  auto update_combine = [query_tile, causal](const NodeContext& c) {
    const Geometry g = geometry_now(c);
    const Split sp = split_for(g, query_tile, visible_rows(g, causal_position(c, causal, g)));
    const uint64_t pairs = uint64_t{g.batch} * g.seq * g.hq * g.dim / 2;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(pairs), g.dim / 2, sp.splits, sp.splits};
    l.workgroups = sp.splits > 1 ? (pairs + kCombineWorkgroupSize - 1) / kCombineWorkgroupSize : 0;
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, k,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                      ctx.output(0).binding(), stats, acc},
      kParamWords, update));
  steps->add(std::make_unique<DispatchExec>(
      ctx, combine, std::vector<gpu::BufferBinding>{stats, acc, ctx.output(0).binding()}, 4, update_combine));
  return steps;
}

}  // namespace

runtime::Route k16_route(uint32_t query_tile, bool causal) {
  return {"k16_streaming_q" + std::to_string(query_tile),
          [query_tile, causal](const NodeContext& ctx) { return guard(ctx, query_tile, causal); },
          [query_tile, causal](const NodeContext& ctx) { return build(ctx, query_tile, causal); }};
}

}  // namespace wgx::ops::attention
