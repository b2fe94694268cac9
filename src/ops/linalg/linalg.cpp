// The linear-algebra family: matmul, linear (tiled GEMM and few-row GEMV routes), embedding and
// conv1d.
#include "ops/families.h"
#include "ops/linalg/linalg.h"

namespace wgx::ops {

void register_linalg(runtime::KernelRegistry& registry) {
  registry.add({"matmul", linalg::product_routes(false)});
  registry.add({"linear", linalg::product_routes(true)});
  registry.add({"embedding", linalg::embedding_routes()});
  registry.add({"conv1d", linalg::conv1d_routes()});
}

}  // namespace wgx::ops
