// Reductions (sum, mean, amax, amin, argmax), softmax and log_softmax, and the row norms
// (rms_norm, layer_norm): each op with its routes in preference order.
#include "ops/families.h"
#include "ops/reduce/routes.h"

namespace wgx::ops {

void register_reductions(runtime::KernelRegistry& registry) {
  using namespace reduce;
  for (const char* op : {"sum", "mean", "amax", "amin", "argmax"}) {
    registry.add({op, {reduction_row_route(), reduction_strided_route()}});
  }
  for (const char* op : {"softmax", "log_softmax"}) {
    registry.add({op, {softmax_row_route(), softmax_strided_route()}});
  }
  for (const char* op : {"rms_norm", "layer_norm"}) registry.add({op, {norm_row_route()}});
}

}  // namespace wgx::ops
