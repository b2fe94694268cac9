// swiglu(gate, up) = silu(gate) * up: one elementwise dispatch over equal shapes.
#include <memory>

#include "ops/common.h"
#include "ops/transformer/kernels.h"

namespace wgx::ops::transformer {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

std::string variant_name(const NodeContext& ctx) { return "swiglu." + dtype_label(ctx.input(0).dtype); }

std::string guard(const NodeContext& ctx) {
  if (!has_variant(variant_name(ctx))) return "no variant " + variant_name(ctx);
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& kernel =
      family_kernel(ctx, variant_name(ctx),
                    {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                     gpu::Binding::Storage});
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [per_word](const NodeContext& c) {
    const uint64_t n = numel(c.output_shape(0));
    const uint64_t words = (n + per_word - 1) / per_word;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), 0, 0, 0};
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.output(0).binding()}, 4,
      update);
}

}  // namespace

runtime::OpKernels swiglu_kernels() { return {"swiglu", {{"swiglu", guard, build}}}; }

}  // namespace wgx::ops::transformer
