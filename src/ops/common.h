// Helpers shared by the op families: variant names by dtype, kernels from generated shader
// tables, broadcasting strides, and scalar inputs materialized as one-element tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/kernel.h"
#include "runtime/op_kernel.h"
#include "shaders/shader_variant.h"

namespace wgx::ops {

// The dtype label variants use for a storage: "f32", "f16", "i32", "bool", "u8".
std::string dtype_label(graph::DType compute_dtype);

// The pipeline for one generated variant (compiled once per program).
const gpu::Kernel& variant_kernel(const runtime::NodeContext& ctx, const shaders::ShaderVariant& variant,
                                  std::vector<gpu::Binding> bindings);

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

}  // namespace wgx::ops
