// Internal to src/ops/linalg: the routes of each op, defined in products.cpp, embedding.cpp and
// conv1d.cpp.
#pragma once

#include <vector>

#include "runtime/op_kernel.h"

namespace wgx::ops::linalg {

// matmul (linear = false) or linear (true): "gemv" for few rows, then "tiled".
std::vector<runtime::Route> product_routes(bool linear);
std::vector<runtime::Route> embedding_routes();
// conv1d: "im2col_gemm" for long reductions over many positions, then "direct".
std::vector<runtime::Route> conv1d_routes();

}  // namespace wgx::ops::linalg
