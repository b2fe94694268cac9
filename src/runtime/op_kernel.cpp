#include "runtime/op_kernel.h"

#include "graph/error.h"
#include "runtime/param_arena.h"

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
    : kernel_(kernel), arena_(ctx.params()), update_(std::move(update)), label_(ctx.label()) {
  const ParamArena::Slot slot = arena_.allocate(static_cast<uint32_t>(std::max<size_t>(param_words, 1) * 4));
  slot_page_ = slot.page;
  slot_offset_ = slot.offset;
  slot_bytes_ = slot.bytes;
  buffers.insert(buffers.begin(), arena_.binding(slot));
  group_ = gpu::BindGroup(ctx.gpu(), kernel, buffers, label_);
}

void DispatchExec::resize(const NodeContext& ctx) {
  Launch launch = update_(ctx);
  workgroups_ = launch.workgroups;
  if (!launch.params.empty()) {
    arena_.write({slot_page_, slot_offset_, slot_bytes_}, launch.params.data(),
                 static_cast<uint32_t>(launch.params.size() * 4));
  }
}

void DispatchExec::record(gpu::Recorder& rec) {
  if (workgroups_ > 0) rec.dispatch(kernel_, group_, workgroups_, label_);
}

}  // namespace wgx::runtime
