// rownorm.wgsl (rows normalized over their length) for softmax, log_softmax, rms_norm and
// layer_norm, shared by their row routes.
#pragma once

#include <memory>
#include <string>

#include "runtime/op_kernel.h"

namespace wgx::ops::reduce {

// "" when rownorm.wgsl has the node's op and dtype and the device and sizes fit.
std::string rownorm_guard(const runtime::NodeContext& ctx);

// x viewed as [rows, n] with n = x's size at `dim`; every dim after `dim` must have size 1.
// Inputs 1 and 2, where present, are the weight and the bias; attr `eps` where present.
std::unique_ptr<runtime::NodeExec> build_rownorm(const runtime::NodeContext& ctx, size_t dim);

}  // namespace wgx::ops::reduce
