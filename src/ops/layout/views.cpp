// Views: wgx stores every tensor contiguous and row-major, so these ops only give the same bytes
// another shape; output 0 shares input 0's storage and nothing runs.
#include "ops/families.h"

namespace wgx::ops {

void register_views(runtime::KernelRegistry& registry) {
  for (const char* op : {"reshape", "squeeze", "unsqueeze", "contiguous"}) {
    registry.add({op, {}, /*view=*/true, /*in_place=*/false});
  }
}

}  // namespace wgx::ops
