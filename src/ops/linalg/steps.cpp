#include "ops/linalg/steps.h"

#include "ops/common.h"
#include "shaders/linalg_shaders.h"

namespace wgx::ops::linalg {

std::unique_ptr<runtime::NodeExec> to_f16_step(const runtime::NodeContext& ctx, gpu::BufferBinding from) {
  constexpr uint64_t kWorkgroupSize = 256;  // to_f16.variants.toml
  const gpu::Kernel& kernel = variant_kernel(ctx, *shaders::find_linalg("to_f16"),
                                             {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  auto update = [](const runtime::NodeContext& c) {
    const uint64_t n = numel(c.output_shape(0));
    runtime::DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), 0, 0, 0};
    l.workgroups = ((n + 1) / 2 + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<runtime::DispatchExec>(ctx, kernel, std::vector<gpu::BufferBinding>{from, ctx.output(0).binding()},
                                                 4, update);
}

}  // namespace wgx::ops::linalg
