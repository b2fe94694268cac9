#include "ops/families.h"

namespace wgx::ops {

// Kernels for this family are not in yet.
void register_transformer(runtime::KernelRegistry&) {}

}  // namespace wgx::ops
