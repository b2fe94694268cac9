// Whisper's two graphs, from a Hugging Face folder's weights (WhisperForConditionalGeneration).
//
// The encoder runs once per 30 s window:
//   inputs   "features"  f32 [1, n_mels, 3000]     the window's log-mel spectrogram (audio/mel.h)
//   x        = gelu(conv1d(features, conv1, padding 1))          [1, d, 3000]
//   x        = gelu(conv1d(x, conv2, stride 2, padding 1))       [1, d, 1500]
//   x        = x^T + embed_positions                            [1, 1500, d]
//   per layer (pre-norm):  x += out_proj(attention(layer_norm(x)))   every position sees every other
//                          x += fc2(gelu(fc1(layer_norm(x))))
//   outputs  "encoder"               f32 [1, 1500, d]   layer_norm(x)
//            "layers.<i>.cross_k"    f32 [1, heads, 1500, head_dim]  per decoder layer: the
//            "layers.<i>.cross_v"    cross-attention's keys and values (k_proj has no bias),
//                                    computed once per window
//
// The decoder runs a step per token (or a few tokens at once: the window's prompt):
//   inputs   "tokens" i32 [1, seq], "positions" i32 [1, seq] (input_pos + 0 .. seq - 1)
//   syms     "seq" in [1, max_target_positions], "input_pos" in [0, max_target_positions - 1]
//   state    "layers.<i>.k_cache", "layers.<i>.v_cache"  [1, heads, max_target_positions, head_dim]
//            "layers.<i>.cross_k", "layers.<i>.cross_v"  the encoder's outputs of the same names,
//                                    written once per window (runtime::Program::write_state)
//   x        = embed_tokens[tokens] (* sqrt(d) with scale_embedding) + embed_positions[positions]
//   per layer:  x += out_proj(causal self-attention over the cache)
//               x += out_proj(attention over cross_k / cross_v)
//               x += fc2(gelu(fc1(layer_norm(x))))
//   outputs  "logits" f32 [1, vocab]  the last position's (or [1, seq, vocab] with all_logits),
//            against embed_tokens (proj_out is tied to it)
//
// Activations are f32. Weights are f32, or q4 for every product (WeightFormat::Q4: the linear
// layers of both parts, their x rounded to int8 in chunks of 32 where many rows multiply at once);
// the stem, the norms and the embedding tables (the token table is also the output projection)
// stay f32. Attention that is not over the cache (the encoder's, and cross-attention) is the
// non-causal op `attention`.
#pragma once

#include <filesystem>

#include "graph/graph.h"
#include "graph/weights.h"
#include "models/decoder.h"
#include "models/model.h"
#include "models/whisper_config.h"

namespace wgx::models {

struct WhisperLoadOptions {
  WeightFormat weights = WeightFormat::F32;  // F32, or Q4 for the products
  uint32_t q4_group_size = 32;
  bool half_kv_cache = false;  // f16 self-attention cache
  bool all_logits = false;     // logits for every position of a step, not only the last
  ProgressFn progress;
};

struct BuiltWhisper {
  WhisperConfig config;
  graph::Graph encoder, decoder;
  graph::WeightStore encoder_weights, decoder_weights;
};

BuiltWhisper build_whisper(const WhisperConfig& config, const WeightSource& weights, const WhisperLoadOptions& options);
BuiltWhisper load_whisper(const std::filesystem::path& dir, const WhisperLoadOptions& options = {});

// The names the encoder's outputs and the decoder's states share, layer by layer.
std::string whisper_cross_k(int64_t layer);
std::string whisper_cross_v(int64_t layer);
// The decoder's self-attention caches, layer by layer (beam search copies them between programs).
std::string whisper_self_k(int64_t layer);
std::string whisper_self_v(int64_t layer);

}  // namespace wgx::models
