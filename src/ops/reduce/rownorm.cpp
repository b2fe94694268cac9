// The row kernel of softmax, log_softmax, rms_norm and layer_norm, and the norms' route.
#include "ops/reduce/rownorm.h"

#include "ops/common.h"
#include "ops/reduce/routes.h"
#include "ops/reduce/view.h"
#include "shaders/reduce_shaders.h"
#include "shaders/rownorm_flags.h"

namespace wgx::ops::reduce {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr size_t kParamWords = 8;
constexpr uint32_t kSharedBytes = 3 * 4 * kWorkgroupSize;  // the tree and two statistics per row

const shaders::ShaderVariant* find_variant(const NodeContext& ctx) {
  return shaders::find_reduce("rownorm." + ctx.node().op + "." + dtype_label(ctx.input(0).dtype));
}

}  // namespace

std::string rownorm_guard(const NodeContext& ctx) {
  if (!find_variant(ctx)) return "no variant for " + ctx.node().op + " on " + dtype_label(ctx.input(0).dtype);
  return check_node(ctx, kSharedBytes);
}

std::unique_ptr<runtime::NodeExec> build_rownorm(const NodeContext& ctx, size_t dim) {
  const gpu::Kernel& kernel =
      variant_kernel(ctx, *find_variant(ctx),
                     {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                      gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  // A missing weight or bias binds x in its place (read-only twice is allowed); flags say so.
  const size_t inputs = ctx.input_count();
  const gpu::BufferBinding x = ctx.input(0).binding();
  const gpu::BufferBinding weight = inputs > 1 ? ctx.input(1).binding() : x;
  const gpu::BufferBinding bias = inputs > 2 ? ctx.input(2).binding() : x;
  using shaders::rownorm_flags::kBias, shaders::rownorm_flags::kWeight;
  const uint32_t flags = (inputs > 1 ? kWeight : 0u) | (inputs > 2 ? kBias : 0u);
  const float eps = ctx.has_attr("eps") ? static_cast<float>(ctx.attr("eps").as_float()) : 0.f;
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [dim, flags, eps, per_word](const NodeContext& c) {
    const std::vector<int64_t>& shape = c.input_shape(0);
    const uint64_t n = static_cast<uint64_t>(shape[dim]);
    uint64_t rows = 1;
    for (size_t d = 0; d < dim; ++d) rows *= static_cast<uint64_t>(shape[d]);
    uint32_t lanes = row_lanes(n);
    // Rows that end inside a word go in pairs (cols even), so each workgroup's words are its own.
    if (n % per_word != 0 && lanes == kWorkgroupSize) lanes /= 2;
    const uint32_t cols = kWorkgroupSize / lanes;
    const float inv_n = n ? static_cast<float>(1.0 / static_cast<double>(n)) : 0.f;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(rows), static_cast<uint32_t>(n), lanes, flags, f32_bits(inv_n), f32_bits(eps), 0, 0};
    l.workgroups = n == 0 ? 0 : (rows + cols - 1) / cols;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, std::vector<gpu::BufferBinding>{x, weight, bias, ctx.output(0).binding()},
                                        kParamWords, update);
}

runtime::Route norm_row_route() {
  return {"row", rownorm_guard,
          [](const NodeContext& ctx) { return build_rownorm(ctx, ctx.input_type(0).shape.size() - 1); }};
}

}  // namespace wgx::ops::reduce
