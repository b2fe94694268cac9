// sdpa_rows(q [1, R, Hq, D], k_cache [S, Hkv, MaxS, D], v_cache, rows [R, 2]) -> [1, R, Hq, D]:
// continuous batching's attention, one route ("rows_online"): a workgroup per (row, kv head)
// runs an online softmax over the visible rows of the row's slot in tiles (sdpa_rows.wgsl). Its
// dispatch and params follow R, which resize reads from the current shapes.
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
constexpr size_t kParamWords = 8;

uint64_t workgroups(const Geometry& g) { return uint64_t{g.seq} * g.hkv; }

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
  return workgroups_guard(ctx, workgroups(g));
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& k = kernel(ctx, "sdpa_rows." + io_label(ctx));
  const uint32_t scale = scale_bits(ctx);
  const auto slots = static_cast<uint32_t>(ctx.input_max_shape(1)[0]);
  auto update = [scale, slots](const NodeContext& c) {
    const Geometry g = geometry_now(c);  // batch 1, seq R
    DispatchExec::Launch l;
    l.params = {g.seq, g.hq, g.hkv, g.group, g.max_seq, g.dim, slots, scale};
    l.workgroups = workgroups(g);
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, k,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                      ctx.input(3).binding(), ctx.output(0).binding()},
      kParamWords, update);
}

}  // namespace

runtime::Route sdpa_rows_route() { return {"rows_online", guard, build}; }

}  // namespace wgx::ops::attention
