// Helpers shared by the op families: variant names by dtype, kernels from generated shader
// tables, broadcasting strides, scalar inputs materialized as one-element tensors, and
// executables made of several dispatches with their scratch buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/kernel.h"
#include "runtime/op_kernel.h"
#include "shaders/shader_variant.h"

namespace wgx::ops {

// The dtype label variants use for a storage: "f32", "f16", "i32", "bool", "u8".
std::string dtype_label(graph::DType compute_dtype);

// A variant's full WGSL: the variant's directive lines (enable, requires, diagnostic), then
// `prelude` (WGSL the host makes for a kernel, e.g. FixedParams::wgsl()), then the rest of the
// variant. WGSL that templates share is not a prelude: they #include it (src/shaders/lib).
std::string variant_source(const shaders::ShaderVariant& variant, std::string_view prelude = {});

// The pipeline for one generated variant (compiled once per program), from variant_source, with
// the values of its override constants (part of the pipeline's key).
const gpu::Kernel& variant_kernel(const runtime::NodeContext& ctx, const shaders::ShaderVariant& variant,
                                  std::vector<gpu::Binding> bindings, std::string_view prelude = {},
                                  std::vector<std::pair<std::string, double>> constants = {});

// A kernel's params that stay fixed for a node, as pipeline constants (ops/README.md): its params
// struct's u32 `fields` and the `prefix` of their accessors. wgsl() declares, per field f,
// `override F_C: u32` (F: f in capitals) and `fn <prefix>f() -> u32`, which returns F_C:
// prepended to the kernel's template, which reads those fields only through the accessors.
// constants() sets the fields to `values` (in the fields' order): a kernel built for one node.
// The params still carry the fields; one kernel for every node, reading them from params,
// measured slower (ops/README.md).
struct FixedParams {
  std::string_view prefix;
  std::vector<std::string_view> fields;
  std::string wgsl() const;
  void constants(std::vector<std::pair<std::string, double>>& out, const std::vector<uint32_t>& values) const;
};

// Element strides of an input of shape `in` broadcast to `out` (right-aligned): 0 along
// broadcast dims, packed into 8 slots (rank <= 8).
std::vector<uint32_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

uint64_t numel(const std::vector<int64_t>& shape);

// An input that is a tensor already, or a Scalar/Sym input held in a one-element buffer of
// `dtype` (owned by the returned holder). A Sym's value changes between executions: call
// refresh() from the resize hook.
struct InputBinding {
  gpu::BufferBinding binding;
  std::shared_ptr<gpu::Buffer> owned;
  std::vector<int64_t> scalar_shape;  // {} for a scalar: broadcasts everywhere
  size_t input = 0;
  graph::DType dtype = graph::DType::f32;

  // Re-uploads a Sym input's current value (a no-op for tensors and constant scalars).
  void refresh(const runtime::NodeContext& ctx) const;
};
InputBinding bind_input(const runtime::NodeContext& ctx, size_t i, graph::DType dtype);

// "" when every tensor input and output has rank <= 8 and fewer than 2^32 elements at max.
std::string check_rank_and_size(const runtime::NodeContext& ctx);

// "" when the device binds at least `count` storage buffers per shader stage (a kernel's).
std::string storage_buffers_guard(const runtime::NodeContext& ctx, uint32_t count);

// The executable part of an op that updates inputs where they lie (registered in_place with these
// pairs: caches, the seen set of sample_token_penalized): before its dispatch, every updated
// input whose output is not that same storage (no mutation, or the planner had to keep the old
// contents) is copied there whole, so the dispatch only ever writes what changes.
class InPlaceExec : public runtime::NodeExec {
 public:
  InPlaceExec(const runtime::NodeContext& ctx, const runtime::InPlace& updates,
              std::unique_ptr<runtime::NodeExec> dispatch);
  void resize(const runtime::NodeContext& ctx) override { dispatch_->resize(ctx); }
  void record(gpu::Recorder& rec) override;

 private:
  std::vector<std::pair<runtime::TensorRef, runtime::TensorRef>> copies_;  // (input, output)
  std::unique_ptr<runtime::NodeExec> dispatch_;
};

// An executable part made of several steps (dispatches, usually) resized and recorded in the
// order added, and the scratch buffers they use. WebGPU orders the storage accesses of
// successive dispatches, so a step sees what the steps before it wrote. A family whose steps
// are not all run every time derives from this and overrides resize/record.
class Steps : public runtime::NodeExec {
 public:
  void add(std::unique_ptr<runtime::NodeExec> step) { steps_.push_back(std::move(step)); }
  // A zeroed device buffer of at least `bytes` that lives as long as this exec (so as long as
  // the bind groups of its steps).
  gpu::BufferBinding own(const runtime::NodeContext& ctx, uint64_t bytes, const std::string& what);
  // Scratch used only between this node's own dispatches (runtime::ScratchPool): shared with
  // every other node's scratch, so it must be written before it is read in every execute.
  static gpu::BufferBinding scratch(const runtime::NodeContext& ctx, uint64_t bytes) { return ctx.scratch(bytes); }

  void resize(const runtime::NodeContext& ctx) override;
  void record(gpu::Recorder& rec) override;

 private:
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;  // declared first: outlives the steps that bind them
  std::vector<std::unique_ptr<runtime::NodeExec>> steps_;
};

// The executable part of a route built on a view of its node (runtime::OperandMap: a fused op
// running the route of an op it fuses), resized through the same view, which it keeps.
class ViewedExec : public runtime::NodeExec {
 public:
  ViewedExec(std::shared_ptr<const runtime::OperandMap> operands, std::unique_ptr<runtime::NodeExec> exec)
      : operands_(std::move(operands)), exec_(std::move(exec)) {}
  void resize(const runtime::NodeContext& ctx) override { exec_->resize(runtime::NodeContext(ctx, *operands_)); }
  void record(gpu::Recorder& rec) override { exec_->record(rec); }

 private:
  std::shared_ptr<const runtime::OperandMap> operands_;
  std::unique_ptr<runtime::NodeExec> exec_;
};

// `build` (a route's) run for `ctx`'s node seen through `operands`.
std::unique_ptr<runtime::NodeExec> build_viewed(const decltype(runtime::Route::build)& build,
                                                const runtime::NodeContext& ctx, runtime::OperandMap operands);

// The first of `routes` whose guard takes `view` (a fused node seen as an op it fuses), or
// nullopt with each route's reason added to `why`.
std::optional<runtime::Route> first_route(const runtime::NodeContext& view, const std::vector<runtime::Route>& routes,
                                          std::string& why);

}  // namespace wgx::ops
