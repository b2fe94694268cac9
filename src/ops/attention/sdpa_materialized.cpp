// sdpa_with_kv_cache and attention, "materialized": the general route. Any head_dim and any S; the scores of a
// query row live in a scratch row of max_seq floats. A pool of at most kPool workgroups takes the
// rows in turn, so the scratch is kPool (or fewer) rows whatever S and the head count are.
#include <algorithm>

#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 64;  // sdpa_materialized.wgsl
constexpr uint64_t kPool = 1024;         // enough workgroups to fill a large GPU
constexpr size_t kParamWords = 12;

uint64_t pool_size(const Geometry& g) { return std::min<uint64_t>(kPool, uint64_t{g.batch} * g.seq * g.hq); }

std::string guard(const NodeContext& ctx, bool causal) {
  if (auto why = causal_guard(ctx, causal); !why.empty()) return why;
  const Geometry g = geometry_max(ctx);
  if (float_label(ctx.output(0).storage) == "f16" && g.dim % 2 != 0) return "an f16 output needs an even head_dim";
  if (auto why = scratch_guard(ctx, pool_size(g) * g.max_seq * 4); !why.empty()) return why;
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, kWorkgroupSize * 4); !why.empty()) return why;
  return workgroups_guard(ctx, pool_size(g));
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, bool causal) {
  const gpu::Kernel& k = kernel(ctx, "materialized." + io_label(ctx));
  auto steps = std::make_unique<Steps>();
  const Geometry max = geometry_max(ctx);
  const gpu::BufferBinding scores = steps->scratch(ctx, pool_size(max) * max.max_seq * 4);
  const uint32_t scale = scale_bits(ctx);
  auto update = [scale, causal](const NodeContext& c) {
    const Geometry g = geometry_now(c);
    const uint32_t pos = causal_position(c, causal, g);
    const uint64_t pool = pool_size(g);
    DispatchExec::Launch l;
    l.params = {g.batch, g.seq, g.hq,  g.hkv, g.group, g.max_seq, pos, g.dim, g.batch * g.seq * g.hq,
                static_cast<uint32_t>(pool), scale, g.max_seq};
    l.workgroups = pool;
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, k,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(), scores,
                                      ctx.output(0).binding()},
      kParamWords, update));
  return steps;
}

}  // namespace

runtime::Route materialized_route(bool causal) {
  return {"materialized", [causal](const NodeContext& ctx) { return guard(ctx, causal); },
          [causal](const NodeContext& ctx) { return build(ctx, causal); }};
}

}  // namespace wgx::ops::attention
