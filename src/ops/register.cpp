// Every op family, registered with the runtime's kernel registry. Adding a family: one line here
// and a folder with a family.cmake (see CMakeLists.txt).
#include "ops/families.h"

namespace wgx::runtime {

// Defined here, not in the runtime, so that the runtime library does not depend on the ops.
const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_all_ops(r);
    return r;
  }();
  return registry;
}

void register_all_ops(KernelRegistry& registry) {
  ops::register_binary(registry);
  ops::register_unary(registry);
  ops::register_reductions(registry);
  ops::register_linalg(registry);
  ops::register_quant(registry);
  ops::register_layout(registry);
  ops::register_transformer(registry);
  ops::register_attention(registry);
  ops::register_sampling(registry);
}

}  // namespace wgx::runtime
