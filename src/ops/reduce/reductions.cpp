// sum, mean, amax, amin, argmax on reduce.wgsl. "row" takes reductions whose elements form one
// contiguous run per output: lanes walk it together (coalesced; several short rows per
// workgroup). "strided" takes any dims: where the innermost reduced run is contiguous it tiles
// like a row, otherwise adjacent outputs go to adjacent invocations (coalesced along the kept
// dims) with a few lanes each, more when outputs are few and long. Both split outputs that are
// few and long into chunks; the last workgroup of that dispatch to finish merges their partials
// (reduce.wgsl's params.merge), or where they are many (past kMergePartials), or with the
// reduce_split_merge option off (a diagnostic: tests reach that dispatch with it), a second
// dispatch does. Decoding's argmax over the vocabulary (one output of 128-152 K
// elements) is such a split: one dispatch a token fewer.
#include <algorithm>
#include <array>
#include <limits>

#include "ops/common.h"
#include "ops/reduce/routes.h"
#include "ops/reduce/view.h"
#include "runtime/options.h"
#include "shaders/reduce_shaders.h"

namespace wgx::ops::reduce {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr size_t kParamWords = 32;
constexpr size_t kMaxGroups = 4;
// Splitting: chunks of at least kMinChunk elements, when a whole-output tiling gives fewer than
// kFillWorkgroups workgroups, at most kMaxPartials partials (8 bytes each) per node.
constexpr uint64_t kMinChunk = 4096;
constexpr uint64_t kMaxPartials = 65536;
// The most partials the last workgroup merges itself (64 per invocation); more take a dispatch.
constexpr uint64_t kMergePartials = 16384;

const shaders::ShaderVariant* find_variant(const NodeContext& ctx) {
  return shaders::find_reduce("reduce." + ctx.node().op + "." + dtype_label(ctx.input(0).dtype));
}

std::string guard(const NodeContext& ctx) {
  if (!find_variant(ctx)) return "no variant for " + ctx.node().op + " on " + dtype_label(ctx.input(0).dtype);
  return check_node(ctx, 8 * kWorkgroupSize);  // one 8-byte partial per invocation
}

void append_groups(std::vector<uint32_t>& params, const std::vector<uint32_t>& values) {
  for (size_t i = 0; i < kMaxGroups; ++i) params.push_back(i < values.size() ? values[i] : 0);
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// One dispatch of reduce.wgsl: `items` items of `count` reduced elements each, tiled along the
// contiguous run (row) or across items (strided); at least `min_cols` items per workgroup.
struct Tile {
  uint32_t lanes = 1, lane_stride = 1, col_stride = 1;
  uint64_t workgroups(uint64_t items) const { return ceil_div(items, kWorkgroupSize / lanes); }
};
Tile tile(bool row, uint64_t items, uint64_t count, uint32_t min_cols) {
  Tile t;
  if (row) {
    t.lanes = std::min(row_lanes(count), kWorkgroupSize / min_cols);
    t.col_stride = t.lanes;
  } else {
    t.lanes = strided_lanes(items, count, min_cols);
    t.lane_stride = kWorkgroupSize / t.lanes;
  }
  return t;
}

// The two dispatches of a node for the current shapes: the reduction (whole outputs, or
// partials of chunks) and, when split, the merge of the partials, unless the first merges them
// (`merge`, up to kMergePartials partials; the second then has no workgroups).
std::array<DispatchExec::Launch, 2> plan(const NodeContext& c, const std::vector<bool>& reduced, bool row,
                                         uint32_t per_word, bool can_split, bool merge) {
  const DimGroups g = group_dims(c.input_shape(0), reduced);
  // Lanes walk the innermost reduced run where it is contiguous (always so on the row route);
  // otherwise adjacent invocations take adjacent outputs.
  row = row || (!g.red_stride.empty() && g.red_stride.back() == 1);
  const Tile whole = tile(row, g.outputs, g.count, per_word);
  uint64_t chunks = 1;
  if (can_split && g.outputs > 0 && whole.workgroups(g.outputs) < kFillWorkgroups && g.count >= 2 * kMinChunk) {
    chunks = std::max<uint64_t>(1, std::min(g.count / kMinChunk, kMaxPartials / g.outputs));
  }
  const uint64_t chunk = chunks > 1 ? ceil_div(g.count, chunks) : g.count;
  chunks = chunks > 1 ? ceil_div(g.count, chunk) : 1;  // every chunk non-empty
  // The mean of nothing is NaN, as in PyTorch.
  const float scale = g.count ? static_cast<float>(1.0 / static_cast<double>(g.count))
                              : std::numeric_limits<float>::quiet_NaN();
  auto launch = [&](uint32_t mode, uint64_t items, const Tile& t, const Tile* merged = nullptr) {
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(g.outputs), static_cast<uint32_t>(g.count),
                static_cast<uint32_t>(g.kept_size.size()), static_cast<uint32_t>(g.red_size.size()),
                t.lanes, t.lane_stride, t.col_stride, f32_bits(scale), mode, static_cast<uint32_t>(items),
                static_cast<uint32_t>(chunk), static_cast<uint32_t>(chunks), merged ? 1u : 0u,
                merged ? merged->lanes : 0u, 0, 0};
    for (const auto* v : {&g.kept_size, &g.kept_stride, &g.red_size, &g.red_stride}) append_groups(l.params, *v);
    l.workgroups = t.workgroups(items);
    return l;
  };
  if (chunks == 1) return {launch(0, g.outputs, whole), DispatchExec::Launch{}};
  const uint64_t items = g.outputs * chunks;
  const Tile merging = tile(true, g.outputs, chunks, per_word);
  if (merge && items <= kMergePartials) {
    return {launch(1, items, tile(row, items, chunk, 1), &merging), DispatchExec::Launch{}};
  }
  return {launch(1, items, tile(row, items, chunk, 1)), launch(2, g.outputs, merging)};
}

// The reduction and, when the current shapes call for a split, the merge of its partials (a
// dispatch of no workgroups otherwise).
std::unique_ptr<runtime::NodeExec> build_reduction(const NodeContext& ctx, bool row) {
  const gpu::Kernel& kernel =
      variant_kernel(ctx, *find_variant(ctx),
                     {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage,
                      gpu::Binding::Storage, gpu::Binding::Storage});
  const std::vector<bool> reduced = reduced_dims(ctx);
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  // Only nodes whose outputs may be long enough to split get room for partials.
  const bool can_split = group_dims(ctx.input_max_shape(0), reduced).count >= 2 * kMinChunk;
  auto steps = std::make_unique<Steps>();
  const gpu::BufferBinding partials = steps->own(ctx, can_split ? 8 * kMaxPartials : 8, "partials");
  const bool merge = runtime::option_on(ctx.options(), "reduce_split_merge");
  const std::vector<gpu::BufferBinding> buffers{ctx.input(0).binding(), ctx.output(0).binding(), partials,
                                                steps->own(ctx, 4, "merge count")};
  for (size_t pass = 0; pass < 2; ++pass) {
    steps->add(std::make_unique<DispatchExec>(ctx, kernel, buffers, kParamWords, [=](const NodeContext& c) {
      return plan(c, reduced, row, per_word, can_split, merge)[pass];
    }));
  }
  return steps;
}

}  // namespace

runtime::Route reduction_row_route() {
  return {"row",
          [](const NodeContext& ctx) {
            if (std::string why = guard(ctx); !why.empty()) return why;
            return reduced_run_is_last(ctx.input_max_shape(0), reduced_dims(ctx));
          },
          [](const NodeContext& ctx) { return build_reduction(ctx, true); }};
}

runtime::Route reduction_strided_route() {
  return {"strided", guard, [](const NodeContext& ctx) { return build_reduction(ctx, false); }};
}

}  // namespace wgx::ops::reduce
