// The transformer ops: rope, swiglu and add_rms_norm, one route each (rope.cpp, swiglu.cpp,
// add_rms_norm.cpp).
#include "ops/families.h"
#include "ops/transformer/kernels.h"

namespace wgx::ops {

void register_transformer(runtime::KernelRegistry& registry) {
  registry.add(transformer::rope_kernels());
  registry.add(transformer::swiglu_kernels());
  registry.add(transformer::add_rms_norm_kernels());
}

}  // namespace wgx::ops
