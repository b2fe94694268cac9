// softmax and log_softmax over attr `dim`. "row": dims after `dim` have size 1, so the rows are
// contiguous (rownorm.wgsl, one fused dispatch). "strided": any dim, as [outer, n, inner] columns
// (softmax_cols.wgsl): column statistics into a scratch buffer (a tile of adjacent columns times
// lanes per workgroup), then the outputs word by word.
#include "ops/common.h"
#include "ops/reduce/routes.h"
#include "ops/reduce/rownorm.h"
#include "ops/reduce/view.h"
#include "shaders/reduce_shaders.h"

namespace wgx::ops::reduce {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr size_t kParamWords = 8;

size_t softmax_dim(const NodeContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input_type(0).shape.size());
  const int64_t d = ctx.attr("dim").as_int();
  return static_cast<size_t>(d < 0 ? d + rank : d);
}

const shaders::ShaderVariant* columns_variant(const NodeContext& ctx) {
  return shaders::find_reduce("softmax_cols." + ctx.node().op + "." + dtype_label(ctx.input(0).dtype));
}

// [outer, n, inner] around dim `dim`.
struct Columns {
  uint64_t outer = 1, n = 1, inner = 1;
};
Columns columns_of(const std::vector<int64_t>& shape, size_t dim) {
  Columns c;
  for (size_t d = 0; d < shape.size(); ++d) {
    const uint64_t s = static_cast<uint64_t>(shape[d]);
    (d < dim ? c.outer : d == dim ? c.n : c.inner) *= s;
  }
  return c;
}

// Two dispatches of one kernel (phase 0: statistics per column, phase 1: outputs) and the
// statistics between them.
std::unique_ptr<runtime::NodeExec> build_columns(const NodeContext& ctx, const gpu::Kernel& kernel, size_t dim) {
  auto steps = std::make_unique<Steps>();
  const Columns max = columns_of(ctx.input_max_shape(0), dim);
  const gpu::BufferBinding stats = steps->own(ctx, 8 * max.outer * max.inner, "column stats");  // 2 f32 per column
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  const std::vector<gpu::BufferBinding> buffers{ctx.input(0).binding(), stats, ctx.output(0).binding()};
  for (uint32_t phase = 0; phase < 2; ++phase) {
    auto update = [phase, dim, per_word](const NodeContext& c) {
      const Columns col = columns_of(c.input_shape(0), dim);
      const uint64_t columns = col.outer * col.inner, numel = columns * col.n;
      const uint32_t lanes = strided_lanes(columns, col.n, 1);
      // Phase 0: columns, kWorkgroupSize / lanes per workgroup; phase 1: output words.
      const uint64_t per_group = phase == 0 ? kWorkgroupSize / lanes : kWorkgroupSize;
      const uint64_t items = phase == 0 ? columns : (numel + per_word - 1) / per_word;
      DispatchExec::Launch l;
      l.params = {phase, static_cast<uint32_t>(columns), static_cast<uint32_t>(col.n),
                  static_cast<uint32_t>(col.inner), static_cast<uint32_t>(numel), lanes, 0, 0};
      l.workgroups = numel == 0 ? 0 : (items + per_group - 1) / per_group;
      return l;
    };
    steps->add(std::make_unique<DispatchExec>(ctx, kernel, buffers, kParamWords, update));
  }
  return steps;
}

}  // namespace

runtime::Route softmax_row_route() {
  return {"row",
          [](const NodeContext& ctx) -> std::string {
            if (std::string why = rownorm_guard(ctx); !why.empty()) return why;
            const std::vector<int64_t> max = ctx.input_max_shape(0);
            for (size_t d = softmax_dim(ctx) + 1; d < max.size(); ++d) {
              if (max[d] != 1) return "dim " + std::to_string(d) + " follows the softmax dim: its elements are strided";
            }
            return "";
          },
          [](const NodeContext& ctx) { return build_rownorm(ctx, softmax_dim(ctx)); }};
}

runtime::Route softmax_strided_route() {
  return {"strided",
          [](const NodeContext& ctx) -> std::string {
            if (!columns_variant(ctx)) return "no variant for " + ctx.node().op + " on " + dtype_label(ctx.input(0).dtype);
            return check_node(ctx, 0);
          },
          [](const NodeContext& ctx) -> std::unique_ptr<runtime::NodeExec> {
            const gpu::Kernel& kernel = variant_kernel(
                ctx, *columns_variant(ctx),
                {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage, gpu::Binding::Storage});
            return build_columns(ctx, kernel, softmax_dim(ctx));
          }};
}

}  // namespace wgx::ops::reduce
