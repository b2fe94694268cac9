// The core op library, one registration function per family (called by register_core_schemas).
#pragma once

#include "graph/op_schema.h"

namespace wgx::graph::schemas {

void register_elementwise(
    OpRegistry& r);  // binary, comparison, logical, unary, where, clamp, to_copy
void register_reductions(OpRegistry& r);  // argmax, amax, amin, sum, mean, softmax, log_softmax
void register_nn(OpRegistry& r);          // rms_norm, layer_norm, embedding, matmul, linear,
                                          // linear_swiglu, conv1d
void register_layout(OpRegistry& r);      // permute, transpose, squeeze, unsqueeze, cat, contiguous
void register_reshape(OpRegistry& r);     // reshape, expand (sizes given as Dims)
void register_indexing(OpRegistry& r);    // slice, select
void register_sampling(OpRegistry& r);    // sample_token, sample_token_penalized
void register_transformer(OpRegistry& r);  // rope, swiglu, add_rms_norm, linear_qkv,
                                           // add_rms_norm_linear_qkv/_swiglu,
                                           // linear_swiglu_linear (and add_rms_norm_), update_cache,
                                           // rope_update_cache, sdpa_with_kv_cache,
                                           // rope_sdpa_with_kv_cache, rope_sdpa_linear,
                                           // rope_update_cache_rows, sdpa_rows, sdpa_rows_linear, attention

}  // namespace wgx::graph::schemas
