// The conversion step that ends a linalg product computed in f32 for f16 storage. The product's
// executable part is ops::Steps (ops/common.h): the product, then this step.
#pragma once

#include <memory>

#include "gpu/buffer.h"
#include "runtime/op_kernel.h"

namespace wgx::ops::linalg {

// Packs the f32 values in `from` into output 0 of the node, f16 storage.
std::unique_ptr<runtime::NodeExec> to_f16_step(const runtime::NodeContext& ctx, gpu::BufferBinding from);

}  // namespace wgx::ops::linalg
