// The routes of the reduce family, registered by reduce.cpp.
#pragma once

#include "runtime/op_kernel.h"

namespace wgx::ops::reduce {

// sum, mean, amax, amin, argmax (reductions.cpp).
runtime::Route reduction_row_route();      // the reduced dims form x's trailing contiguous run
runtime::Route reduction_strided_route();  // any dims

// softmax, log_softmax (softmax.cpp).
runtime::Route softmax_row_route();      // over the last dim (dims after it of size 1)
runtime::Route softmax_strided_route();  // over any dim

// rms_norm, layer_norm over the last dim (rownorm.cpp).
runtime::Route norm_row_route();

}  // namespace wgx::ops::reduce
