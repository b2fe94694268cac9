#include "ops/linalg/steps.h"

#include <algorithm>

#include "ops/common.h"
#include "shaders/linalg_shaders.h"

namespace wgx::ops::linalg {

gpu::BufferBinding Steps::own(const runtime::NodeContext& ctx, uint64_t bytes, const std::string& what) {
  buffers_.push_back(std::make_unique<gpu::Buffer>(ctx.gpu(), std::max<uint64_t>(bytes, 4), gpu::BufferKind::Storage,
                                                   ctx.label() + " " + what));
  return {buffers_.back().get(), 0, 0};
}

void Steps::resize(const runtime::NodeContext& ctx) {
  for (auto& s : steps_) s->resize(ctx);
}

void Steps::record(gpu::Recorder& rec) {
  for (auto& s : steps_) s->record(rec);
}

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
