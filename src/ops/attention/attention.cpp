// The attention family: update_cache (in place on the cache), rope_update_cache (the optional
// q/k norm, rope and both cache updates in one dispatch, in place on both caches),
// sdpa_with_kv_cache, rope_sdpa_with_kv_cache (rope_update_cache then sdpa_with_kv_cache as
// one node: rope_sdpa.cpp) and rope_sdpa_linear (that and the output projection as one node:
// rope_sdpa_linear.cpp); for continuous batching (a step of rows of several sequences, each at
// its own cache slot and position) rope_update_cache_rows and sdpa_rows, one route each
// (rope_update_cache.cpp, sdpa_rows.cpp). sdpa's routes, in preference order:
//   flash_decoding      S == 1 at build time: split-K over the cache, its chunks merged by the
//                       dispatch's last workgroup per kv head (one pass while input_pos + 1 <=
//                       runtime option sdpa_decode_single_max)
//   k16_streaming_q32   head_dim 64 or 128, runtime option sdpa_query_tile = "32"
//   k16_streaming_q16   head_dim 64 or 128 (the default tile; also where a refused Q32 lands)
//   materialized        anything else: any head_dim, any S
// attention (non-causal: every query row over all T rows of k and v) takes k16_streaming_q32,
// k16_streaming_q16 and materialized, their kernels told input_pos = T and kv_len = T.
// Each guard is exact (geometry, storages, device limits, workgroup counts) and says why not.
#include <stdexcept>

#include "ops/attention/attention.h"
#include "ops/families.h"

namespace wgx::ops {

namespace attention {

std::vector<runtime::Route> sdpa_routes() {
  return {flash_decoding_route(), k16_route(32), k16_route(16), materialized_route()};
}

std::vector<runtime::Route> attention_routes() {
  return {k16_route(32, false), k16_route(16, false), materialized_route(false)};
}

}  // namespace attention

void register_attention(runtime::KernelRegistry& registry) {
  registry.add({"update_cache", {attention::update_cache_route()}, false, true});
  registry.add({"rope_update_cache", {attention::rope_update_cache_route()}, false,
                attention::rope_update_cache_in_place()});
  registry.add({"rope_update_cache_rows", {attention::rope_update_cache_rows_route()}, false,
                attention::rope_update_cache_in_place()});
  registry.add({"sdpa_with_kv_cache", attention::sdpa_routes()});
  registry.add({"sdpa_rows", {attention::sdpa_rows_route()}});
  registry.add({"attention", attention::attention_routes()});
  // One-token steps rotate inside flash_decoding's kernels; otherwise the two ops' routes.
  std::vector<runtime::Route> fused{attention::rope_flash_decoding_route()};
  for (runtime::Route& sdpa : attention::sdpa_routes()) {
    fused.push_back(attention::rope_then_sdpa_route(std::move(sdpa)));
  }
  // The attention and its output projection: linear's routes (linalg's and quant's, registered
  // before this family) run the projection.
  const runtime::OpKernels* linear = registry.find("linear");
  if (!linear) throw std::logic_error("rope_sdpa_linear needs linear's routes registered first");
  registry.add({"rope_sdpa_linear", attention::rope_sdpa_linear_routes(fused, linear->routes), false,
                attention::rope_update_cache_in_place()});
  registry.add({"sdpa_rows_linear", attention::sdpa_rows_linear_routes(linear->routes)});
  registry.add({"rope_sdpa_with_kv_cache", std::move(fused), false, attention::rope_update_cache_in_place()});
}

}  // namespace wgx::ops
