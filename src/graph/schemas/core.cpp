#include "graph/op_schema.h"
#include "graph/schemas/families.h"

namespace wgx::graph {

void register_core_schemas(OpRegistry& registry) {
  schemas::register_elementwise(registry);
  schemas::register_reductions(registry);
  schemas::register_nn(registry);
  schemas::register_layout(registry);
  schemas::register_reshape(registry);
  schemas::register_indexing(registry);
  schemas::register_transformer(registry);
  schemas::register_sampling(registry);
}

}  // namespace wgx::graph
