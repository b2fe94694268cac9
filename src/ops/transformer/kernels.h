// What the transformer family's routes share: their kernels (generated variants) and the ops'
// route tables.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/kernel.h"
#include "runtime/op_kernel.h"

namespace wgx::ops::transformer {

// Every variant's @workgroup_size (SwiftShader allows 256 invocations).
constexpr uint32_t kWorkgroupSize = 256;

// True when the family has a variant of that name.
bool has_variant(const std::string& name);
// The pipeline of a variant (compiled once per program).
const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& name,
                                 std::vector<gpu::Binding> bindings);

runtime::OpKernels rope_kernels();          // rope.cpp
runtime::OpKernels swiglu_kernels();        // swiglu.cpp
runtime::OpKernels add_rms_norm_kernels();  // add_rms_norm.cpp

// add_rms_norm's dispatch for a node whose inputs 0..2 are x, residual and the norm weight
// (add_rms_norm itself, and the quant family's add_rms_norm_ products, which normalize into
// scratch this way wherever their product kernel has no prologue): the normalized x into `out`
// and x + residual into `sum`, both of x's shape and dtype. With `steps` (q8: the last dim a
// multiple of 32), `out` takes the normalized x in int8 chunks of 32 instead, as q8_chunks.wgsl
// writes them for q4_gemm's int8 variant (8 words per chunk), and `steps` their steps.
std::unique_ptr<runtime::NodeExec> add_rms_norm_dispatch(const runtime::NodeContext& ctx, gpu::BufferBinding out,
                                                         gpu::BufferBinding sum,
                                                         std::optional<gpu::BufferBinding> steps = std::nullopt);

}  // namespace wgx::ops::transformer
