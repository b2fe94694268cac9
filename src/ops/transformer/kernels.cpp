#include "ops/transformer/kernels.h"

#include "ops/common.h"
#include "shaders/transformer_shaders.h"

namespace wgx::ops::transformer {

bool has_variant(const std::string& name) { return shaders::find_transformer(name) != nullptr; }

const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& name,
                                 std::vector<gpu::Binding> bindings) {
  return variant_kernel(ctx, *shaders::find_transformer(name), std::move(bindings));
}

}  // namespace wgx::ops::transformer
