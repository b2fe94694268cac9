// The decoder graph of model.h for Llama 3.x and Qwen3, from a checkpoint's tensors. The two
// architectures differ only in data: Qwen3 adds q_norm/k_norm (RMSNorm over head_dim, before
// rope) and takes head_dim from the config. Per layer:
//
//   h, res   = rms_norm(x) (layer 0) | add_rms_norm(mlp_out, res)      input_layernorm
//   q, k, v  = linear_qkv(h, [Wq; Wk; Wv])                              one product
//   q, k, v  = reshape to [1, S, heads, head_dim]                       views
//   q, k     = rms_norm(q; q_norm), rms_norm(k; k_norm)                 Qwen3 only
//   q, k     = rope(q), rope(k)                                         rotate_half, llama3 scaling
//   kc, vc   = update_cache(k_cache, k), update_cache(v_cache, v)       mutated back in place
//   a        = sdpa_with_kv_cache(q, kc, vc) -> reshape [1, S, heads * head_dim]
//   h, res   = add_rms_norm(linear(a, Wo), res)                         post_attention_layernorm
//   mlp_out  = linear(swiglu(linear(h, Wgate), linear(h, Wup)), Wdown)
//
// then add_rms_norm(mlp_out, res; model.norm), the last position only (select) unless
// all_logits, and lm_head (the embedding table when tied).
#pragma once

#include "models/model.h"
#include "models/safetensors.h"

namespace wgx::models {

BuiltModel build_decoder(const ModelConfig& config, const Checkpoint& checkpoint, const LoadOptions& options);

}  // namespace wgx::models
