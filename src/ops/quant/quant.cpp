#include "ops/families.h"

namespace wgx::ops {

// Kernels for this family are not in yet.
void register_quant(runtime::KernelRegistry&) {}

}  // namespace wgx::ops
