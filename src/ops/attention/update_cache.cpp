// update_cache(cache, value, input_pos), registered in_place: the kernel binds the cache once,
// read_write, as output 0. When a mutation of the cache's buffer is planned in place, output 0 is
// the cache itself and only the new rows are written. Otherwise (no mutation, or the planner had
// to keep the old contents) output 0 is another buffer: the cache is copied there first
// (InPlaceExec, shared with rope_update_cache).
#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kWorkgroupSize = 256;  // update_cache.wgsl
constexpr size_t kParamWords = 8;

std::string guard(const NodeContext& ctx) {
  if (auto why = position_guard(ctx, 2); !why.empty()) return why;
  const std::string cache = float_label(ctx.input(0).storage), value = float_label(ctx.input(1).storage);
  if (cache.empty() || value.empty()) return "the cache and the value must be stored as f32 or f16";
  // A packed row of odd length would share a word with its neighbour row.
  if (cache == "f16" && ctx.input_max_shape(0)[3] % 2 != 0) return "an f16 cache needs an even head_dim";
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const std::string cache = float_label(ctx.input(0).storage);
  const gpu::Kernel& k = kernel(ctx, "update_cache." + cache + "." + float_label(ctx.input(1).storage));
  const uint32_t per_word = cache == "f16" ? 2 : 1;
  auto update = [per_word](const NodeContext& c) {
    const std::vector<int64_t>& cs = c.input_shape(0);  // [B, H, MaxS, D]
    const std::vector<int64_t>& vs = c.input_shape(1);  // [B, S, H, D]
    const uint32_t pos = position(c, 2, vs[1], cs[2]);
    const uint64_t words = numel(vs) / per_word;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(words), static_cast<uint32_t>(vs[1]), static_cast<uint32_t>(cs[1]),
                static_cast<uint32_t>(cs[2]),   pos,                         static_cast<uint32_t>(cs[3]),
                0,                              0};
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  auto dispatch = std::make_unique<DispatchExec>(
      ctx, k, std::vector<gpu::BufferBinding>{ctx.input(1).binding(), ctx.output(0).binding()}, kParamWords, update);
  return std::make_unique<InPlaceExec>(ctx, true, std::move(dispatch));
}

}  // namespace

runtime::Route update_cache_route() { return {"update_cache", guard, build}; }

}  // namespace wgx::ops::attention
