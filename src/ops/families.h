// One registration function per op family (each defined in its folder); register.cpp calls them.
#pragma once

#include "runtime/op_kernel.h"

namespace wgx::ops {

void register_binary(runtime::KernelRegistry& registry);      // elementwise/
void register_unary(runtime::KernelRegistry& registry);       // unary/
void register_reductions(runtime::KernelRegistry& registry);  // reduce/
void register_linalg(runtime::KernelRegistry& registry);      // linalg/
// quant/: q4gsw routes for linear and embedding (added to linalg's), linear_qkv. After linalg.
void register_quant(runtime::KernelRegistry& registry);
void register_layout(runtime::KernelRegistry& registry);      // layout/
void register_transformer(runtime::KernelRegistry& registry);  // transformer/: rope, swiglu, add_rms_norm
// attention/: update_cache, rope_update_cache, sdpa_with_kv_cache, rope_sdpa_with_kv_cache,
// rope_sdpa_linear, sdpa_rows, sdpa_rows_linear, rope_update_cache_rows, attention (non-causal)
void register_attention(runtime::KernelRegistry& registry);
void register_sampling(runtime::KernelRegistry& registry);  // sampling/: sample_token(_penalized)

}  // namespace wgx::ops
