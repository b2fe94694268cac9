// The linear-algebra family: matmul, linear (tiled GEMM and few-row GEMV routes) and embedding.
#include "ops/families.h"
#include "ops/linalg/linalg.h"

namespace wgx::ops {

void register_linalg(runtime::KernelRegistry& registry) {
  registry.add({"matmul", linalg::product_routes(false)});
  registry.add({"linear", linalg::product_routes(true)});
  registry.add({"embedding", linalg::embedding_routes()});
}

}  // namespace wgx::ops
