#include "runtime/op_kernel.h"

#include "graph/error.h"

namespace wgx::runtime {

void KernelRegistry::add(OpKernels kernels) {
  const std::string op = kernels.op;
  if (!ops_.emplace(op, std::move(kernels)).second) {
    throw graph::GraphError("kernels for op '" + op + "' registered twice");
  }
}

void KernelRegistry::prepend_routes(std::string_view op, std::vector<Route> routes) {
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    throw graph::GraphError("no kernels registered for op '" + std::string(op) + "' to add routes to");
  }
  it->second.routes.insert(it->second.routes.begin(), std::make_move_iterator(routes.begin()),
                           std::make_move_iterator(routes.end()));
}

const OpKernels* KernelRegistry::find(std::string_view op) const {
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> names;
  for (const auto& [name, k] : ops_) names.push_back(name);
  return names;
}

DispatchExec::DispatchExec(const NodeContext& ctx, const gpu::Kernel& kernel,
                           std::vector<gpu::BufferBinding> buffers, size_t param_words, Update update)
    : kernel_(kernel),
      params_(ctx.gpu(), std::max<size_t>(param_words, 1) * 4, gpu::BufferKind::Uniform, ctx.label() + " params"),
      update_(std::move(update)),
      label_(ctx.label()),
      gpu_(ctx.gpu()) {
  buffers.insert(buffers.begin(), gpu::BufferBinding{&params_, 0, 0});
  group_ = gpu::BindGroup(ctx.gpu(), kernel, buffers, label_);
}

void DispatchExec::resize(const NodeContext& ctx) {
  Launch launch = update_(ctx);
  workgroups_ = launch.workgroups;
  if (!launch.params.empty()) {
    gpu::upload(gpu_, params_, 0, launch.params.data(), std::min<uint64_t>(launch.params.size() * 4, params_.size()));
  }
}

void DispatchExec::record(gpu::Recorder& rec) {
  if (workgroups_ > 0) rec.dispatch(kernel_, group_, workgroups_, label_);
}

}  // namespace wgx::runtime
