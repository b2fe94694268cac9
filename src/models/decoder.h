// The decoder graph of model.h for Llama 3.x and Qwen3, from a checkpoint's tensors or generated
// ones (WeightSource). The two architectures differ only in data: Qwen3 adds q_norm/k_norm
// (RMSNorm over head_dim, before rope) and takes head_dim from the config. x = embedding(table,
// tokens) in the activations' dtype (the lookup converts), then per layer:
//
//   q, k, v  = linear_qkv(rms_norm(x), [Wq; Wk; Wv])                   layer 0, input_layernorm
//   q, k, v, res = add_rms_norm_linear_qkv(mlp_out, res, input_layernorm, [Wq; Wk; Wv])
//              one node: x + residual (the new res), normalized, then one product
//   q, k, v  = reshape to [1, S, heads, head_dim]                       views
//   a, kc, vc = rope_sdpa_with_kv_cache(q, k, v, k_cache, v_cache[, q_norm, k_norm])   one node:
//              Qwen3's rms_norm of q and k (q_norm, k_norm), rope on both (rotate_half, llama3
//              scaling), k and v written into the caches, which are mutated back in place, and
//              the attention over them; a decode step does it all in flash_decoding's dispatch
//              (two past 128 rows at head_dim 64, 64 at 128), prefill in rope_update_cache's
//              dispatch and sdpa's
//   a        = reshape a to [1, S, heads * head_dim]
//   o        = linear(a, Wo)
//   act, mlp_out, res = add_rms_norm_linear_swiglu_linear(o, res, post_attention_layernorm,
//                     [Wgate; Wup] rows interleaved, Wdown)              q4 weights: one node,
//              act = silu(gate) * up, mlp_out = act @ Wdown (a decode step hands act to the
//              down product in int8)
//   h, res   = add_rms_norm(o, res)                                     f16 / f32 weights
//   mlp_out  = linear(swiglu(linear(h, Wgate), linear(h, Wup)), Wdown)
//
// then add_rms_norm(mlp_out, res; model.norm), the last position only (select) unless
// all_logits, lm_head (the embedding table when tied), and next_token = sample_token_penalized
// of the last position's logits with the "sampling" input's settings and the "seen_tokens" state
// (decoding picks it on the device: model.h).
//
// build_rows_decoder: the same layers over rows of several sequences (continuous batching), below.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/encode.h"
#include "models/model.h"
#include "models/safetensors.h"

namespace wgx::models {

// Where the builder's weights come from: a checkpoint, or a generator (models/synthetic.h).
// tensor(name, shape, why) returns the weight `name` with exactly `shape`, or throws ModelError
// naming the tensor and `why` (where the expected shape comes from).
struct WeightSource {
  std::string origin;  // for the progress line: "/path/to/folder", "random weights (seed 1)"
  std::function<SourceTensor(const std::string& name, const std::vector<int64_t>& shape, const std::string& why)>
      tensor;
};

WeightSource checkpoint_weights(const Checkpoint& checkpoint);  // which must outlive the source
// The same, the source (and every tensor it gives out) keeping the checkpoint open.
WeightSource checkpoint_weights(std::shared_ptr<const Checkpoint> checkpoint);

BuiltModel build_decoder(const ModelConfig& config, const WeightSource& weights, const LoadOptions& options);
BuiltModel build_decoder(const ModelConfig& config, const Checkpoint& checkpoint, const LoadOptions& options);

// The rows graph of a built decoder (continuous batching), reading the same constants (by name,
// no conversion; a Program built with runtime::Program's constants_from shares their buffers).
// A step feeds R rows, each a token of some sequence at (slot, position) = input "rows" [R, 2];
// the KV caches hold `slots` sequences ([slots, kv_heads, max_seq, head_dim]); per layer the
// products are the one-sequence graph's over all rows, the attention rope_update_cache_rows then
// sdpa_rows then linear(Wo). Outputs: "logits" [1, K, vocab] and "next_tokens" [1, K] for the K
// rows that input "logit_rows" names (each sequence's last row of the step; K up to max(slots,
// 64) or the step size), for scoring text too (llm::log_probs); each next token picked as that
// row's words of input "sampling" [K, 8] say, its draw's counter from input "counters" [K],
// after a repetition penalty against the seen set (state "seen_tokens" [slots, ceil(vocab / 32)])
// of the slot that input "pick_slots" [K] names, -1 for none (sample_rows_penalized). Context,
// step size, weight and cache formats are the model's.
BuiltModel build_rows_decoder(const BuiltModel& model, int64_t slots);

}  // namespace wgx::models
