// sdpa_rows(q [1, R, Hq, D], k_cache [S, Hkv, MaxS, D], v_cache, rows [R, 2]) -> [1, R, Hq, D]:
// continuous batching's attention, one route ("rows_online"): a workgroup per (row, kv head,
// chunk) runs an online softmax over its chunk of the visible rows of the row's slot in tiles
// (sdpa_rows.wgsl), and sdpa_combine.wgsl merges the chunks. The chunk count is fixed per node
// (kMaxChunks, fewer for short caches), so a row's arithmetic does not change with the step. On
// the H200 (Llama-3.2-1B, 128-256 visible rows, per layer) one workgroup per (row, kv head) took
// 46 us at 5 rows (its tiles one after another); 8 chunks take 18 + 9 (the merge) at 5 rows,
// 32 + 9 at 16 and 87 + 10 at 64, where 4,096 workgroups of a few cache rows each cost more
// than their work (chunks of at least a tile are the next thing to try). Its dispatch and
// params follow R, which resize reads from the current shapes.
#include <algorithm>

#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

// sdpa_rows.wgsl
constexpr uint32_t kWorkgroupSize = 64;  // WG (and T, the rows of a tile)
constexpr uint32_t kMaxGroup = 16;       // MAX_G
constexpr uint32_t kMaxGroupDim = 1024;  // MAX_GD
// q_s, p_s, m_s and alpha_s, at_s.
constexpr uint64_t kWorkgroupBytes = 4 * (kMaxGroupDim + kMaxGroup * kWorkgroupSize + 2 * kMaxGroup + 2);
constexpr size_t kParamWords = 12;
constexpr uint32_t kMaxChunks = 8;      // chunks a row's visible cache rows split into
constexpr uint32_t kRowsPerChunk = 16;  // of the cache at least: fewer chunks for short caches
constexpr uint64_t kCombineWorkgroupSize = 256;  // sdpa_combine.wgsl

uint32_t chunks_of(const Geometry& g) {
  return std::clamp<uint32_t>((g.max_seq + kRowsPerChunk - 1) / kRowsPerChunk, 1, kMaxChunks);
}
uint64_t workgroups(const Geometry& g) { return uint64_t{g.seq} * g.hkv * chunks_of(g); }
// Partial-result slots: rows x query heads x chunks (none with one chunk).
uint64_t part_slots(const Geometry& g) { return chunks_of(g) > 1 ? uint64_t{g.seq} * g.hq * chunks_of(g) : 0; }

std::string guard(const NodeContext& ctx) {
  if (auto why = sdpa_storage_guard(ctx); !why.empty()) return why;
  const Geometry g = geometry_max(ctx);
  if (g.dim % 2 != 0) return "head_dim " + std::to_string(g.dim) + " is odd (channels load in pairs)";
  if (g.group > kMaxGroup || g.group * g.dim > kMaxGroupDim) {
    return "a group of " + std::to_string(g.group) + " query heads of head_dim " + std::to_string(g.dim) +
           " is more than one workgroup holds (at most " + std::to_string(kMaxGroup) + " heads, " +
           std::to_string(kMaxGroupDim) + " channels)";
  }
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, kWorkgroupBytes); !why.empty()) return why;
  if (auto why = scratch_guard(ctx, part_slots(g) * g.dim * 4); !why.empty()) return why;
  return workgroups_guard(ctx, workgroups(g));
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& k = kernel(ctx, "sdpa_rows." + io_label(ctx));
  const uint32_t scale = scale_bits(ctx);
  const auto slots = static_cast<uint32_t>(ctx.input_max_shape(1)[0]);
  const Geometry max = geometry_max(ctx);
  const uint64_t parts = part_slots(max);
  auto steps = std::make_unique<Steps>();
  const gpu::BufferBinding stats = parts > 0 ? steps->scratch(ctx, parts * 8) : steps->own(ctx, 8, "no stats");
  const gpu::BufferBinding acc = parts > 0 ? steps->scratch(ctx, parts * max.dim * 4) : steps->own(ctx, 8, "no acc");
  auto update = [scale, slots](const NodeContext& c) {
    const Geometry g = geometry_now(c);  // batch 1, seq R
    DispatchExec::Launch l;
    l.params = {g.seq, g.hq, g.hkv, g.group, g.max_seq, g.dim, slots, scale, chunks_of(g), 0, 0, 0};
    l.workgroups = workgroups(g);
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, k,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                      ctx.input(3).binding(), ctx.output(0).binding(), stats, acc},
      kParamWords, update));
  if (parts == 0) return steps;
  auto update_combine = [](const NodeContext& c) {
    const Geometry g = geometry_now(c);
    const uint64_t pairs = uint64_t{g.seq} * g.hq * g.dim / 2;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(pairs), g.dim / 2, chunks_of(g), chunks_of(g)};
    l.workgroups = (pairs + kCombineWorkgroupSize - 1) / kCombineWorkgroupSize;
    return l;
  };
  const gpu::Kernel& combine = kernel(ctx, "combine." + float_label(ctx.output(0).storage));
  steps->add(std::make_unique<DispatchExec>(
      ctx, combine, std::vector<gpu::BufferBinding>{stats, acc, ctx.output(0).binding()}, 4, update_combine));
  return steps;
}

}  // namespace

runtime::Route sdpa_rows_route() { return {"rows_online", guard, build}; }

}  // namespace wgx::ops::attention
