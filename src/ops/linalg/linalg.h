// Internal to src/ops/linalg: the routes of each op, defined in products.cpp and embedding.cpp.
#pragma once

#include <vector>

#include "runtime/op_kernel.h"

namespace wgx::ops::linalg {

// matmul (linear = false) or linear (true): "gemv" for few rows, then "tiled".
std::vector<runtime::Route> product_routes(bool linear);
std::vector<runtime::Route> embedding_routes();

}  // namespace wgx::ops::linalg
