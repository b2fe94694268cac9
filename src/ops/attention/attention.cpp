// The attention family: update_cache (in place on the cache), rope_update_cache (the optional
// q/k norm, rope and both cache updates in one dispatch, in place on both caches) and
// sdpa_with_kv_cache. sdpa's routes, in preference order:
//   flash_decoding      S == 1 at build time: split-K over the cache, then a combine pass (one
//                       pass while input_pos + 1 <= runtime option sdpa_decode_single_max)
//   k16_streaming_q32   head_dim 64 or 128, runtime option sdpa_query_tile = "32"
//   k16_streaming_q16   head_dim 64 or 128 (the default tile; also where a refused Q32 lands)
//   materialized        anything else: any head_dim, any S
// Each guard is exact (geometry, storages, device limits, workgroup counts) and says why not.
#include "ops/attention/attention.h"
#include "ops/families.h"

namespace wgx::ops {

void register_attention(runtime::KernelRegistry& registry) {
  registry.add({"update_cache", {attention::update_cache_route()}, false, true});
  registry.add({"rope_update_cache", {attention::rope_update_cache_route()}, false,
                attention::rope_update_cache_in_place()});
  registry.add({"sdpa_with_kv_cache",
                {attention::flash_decoding_route(), attention::k16_route(32), attention::k16_route(16),
                 attention::materialized_route()}});
}

}  // namespace wgx::ops
