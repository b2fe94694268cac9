// where(cond, a, b): its route, registered by register_unary.
#pragma once

#include "runtime/op_kernel.h"

namespace wgx::ops {

runtime::Route where_route();

}  // namespace wgx::ops
