// add_rms_norm(x, residual, weight) -> (rms_norm(x + residual) * weight, x + residual): one
// dispatch, one workgroup per row of the last dim (per two rows where rows end inside a packed
// f16 word), writing both outputs.
#include <bit>
#include <memory>

#include "ops/common.h"
#include "ops/transformer/kernels.h"

namespace wgx::ops::transformer {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr size_t kParamWords = 8;

std::string variant_name(const NodeContext& ctx) { return "add_rms_norm." + dtype_label(ctx.input(0).dtype); }

std::string guard(const NodeContext& ctx) {
  if (!has_variant(variant_name(ctx))) return "no variant " + variant_name(ctx);
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  return add_rms_norm_dispatch(ctx, ctx.output(0).binding(), ctx.output(1).binding());
}

}  // namespace

std::unique_ptr<runtime::NodeExec> add_rms_norm_dispatch(const NodeContext& ctx, gpu::BufferBinding out,
                                                         gpu::BufferBinding sum,
                                                         std::optional<gpu::BufferBinding> steps) {
  std::vector<gpu::Binding> bindings{gpu::Binding::Uniform,         gpu::Binding::ReadOnlyStorage,
                                     gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                                     gpu::Binding::Storage,         gpu::Binding::Storage};
  if (steps) bindings.push_back(gpu::Binding::Storage);
  const gpu::Kernel& kernel = family_kernel(ctx, variant_name(ctx) + (steps ? ".q8" : ""), std::move(bindings));
  const uint32_t per_word = runtime::elements_per_word(ctx.input(0).storage);  // out and sum are x's
  const float eps = static_cast<float>(ctx.attr("eps").as_float());
  auto update = [per_word, eps](const NodeContext& c) {
    const std::vector<int64_t>& shape = c.input_shape(0);
    const auto n = static_cast<uint64_t>(shape.back());
    const uint64_t rows = n == 0 ? 0 : numel(shape) / n;
    const uint32_t group_rows = n % per_word == 0 ? 1 : 2;
    const float inv_n = n == 0 ? 0.f : static_cast<float>(1.0 / static_cast<double>(n));
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(rows), static_cast<uint32_t>(n), group_rows, 0,
                std::bit_cast<uint32_t>(inv_n), std::bit_cast<uint32_t>(eps), 0, 0};
    l.workgroups = (rows + group_rows - 1) / group_rows;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel,
      steps ? std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                              out, sum, *steps}
            : std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                              out, sum},
      kParamWords, update);
}

runtime::OpKernels add_rms_norm_kernels() { return {"add_rms_norm", {{"add_rms_norm", guard, build}}}; }

}  // namespace wgx::ops::transformer
