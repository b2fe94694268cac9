// A language model as wgx runs it: its configuration (from Hugging Face config.json), and the
// graph + weights the builders emit for the runtime. One graph serves prefill and decode:
//
//   inputs   "tokens"     i32 [1, seq]              seq: SymInt in [1, max_prefill]
//            "sampling"   i32 [8]                   how next_token is picked: the words of
//                                                   ops/sampling/sample_params.h (all 0: greedy)
//   syms     "input_pos"  position of tokens[0]     in [0, max_seq - 1]
//   outputs  "logits"     f32 [1, vocab]            the last token's (or [1, seq, vocab] with
//                                                   LoadOptions::all_logits, for parity tests)
//            "next_token" i32 [1, 1]                the last token's logits' pick on the device
//                                                   (sample_token_penalized): greedy (the first
//                                                   largest), or drawn after top-k, top-p and
//                                                   min-p with a random number from the seed
//                                                   and input_pos; a repetition penalty first
//                                                   where the words ask for one
//   state    "layers.<i>.k_cache", "layers.<i>.v_cache"  [1, kv_heads, max_seq, head_dim]
//            "seen_tokens" i32 [ceil(vocab / 32)]   the tokens the penalty applies to, a bit each:
//                                                   the host writes the context's
//                                                   (Program::write_state), every pick adds its
//                                                   own
//
// A step feeds only the new tokens and input_pos; the KV cache persists in the graph.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"
#include "models/progress.h"

namespace wgx::models {

enum class Architecture { Llama, Qwen3 };

struct RopeScaling {  // Llama 3.1 "llama3" rope_scaling; absent for plain RoPE
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position = 8192;
};

struct ModelConfig {
  Architecture architecture = Architecture::Llama;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // hidden_size / num_heads unless config.json says otherwise (Qwen3)
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 0;
  std::optional<int32_t> bos_token_id;
  std::vector<int32_t> eos_token_ids;  // config.json / generation_config.json
};

enum class WeightFormat { Q4, F16, F32 };

struct LoadOptions {
  WeightFormat weights = WeightFormat::Q4;
  uint32_t q4_group_size = 32;
  bool half_kv_cache = true;   // f16 cache (packed in u32 where shader-f16 is missing)
  int64_t max_seq = 4096;      // KV cache rows; clamped to max_position_embeddings
  int64_t max_prefill = 512;   // the most tokens one step may feed
  bool all_logits = false;     // logits for every position, not only the last
  // Scales of q4gsw weights: f16 halves their bytes (4.5 bits per weight instead of 5). The
  // embedding lookup writes its rows in the activations' dtype whatever the scales' (its dtype
  // attribute).
  graph::DType q4_scale_dtype = graph::DType::f16;
  ProgressFn progress;         // told each layer as it is converted (models/progress.h)
  // A diagnostic (wgx bench --shared-layers): every layer reads layer 0's products' weights, so a
  // decode step's weights fit the GPU's L2 cache: what caching weights could give at most.
  bool share_layer_weights = false;
  // The matrices' bytes are made later (BuiltModel::later), so that the caller can compile the
  // program while the host converts them; norm weights are made at once.
  bool defer_weights = false;
};

// Activations are f32, except with WeightFormat::F16, where they are f16 (kernels compute in f32)
// because the dense products take weights of x's dtype; norm weights then are f16 as well.

struct BuiltModel {
  ModelConfig config;
  graph::Graph graph;
  graph::WeightStore weights;
  // With LoadOptions::defer_weights: the constants whose bytes are still to be made, in the
  // graph's order. make() returns graph.constants[constant]'s bytes (reading the checkpoint,
  // which it keeps open; throws ModelError as a load would); its blob in `weights` stays empty:
  // the bytes go to a runtime::Program built with LaterWeights.
  struct LaterConstant {
    uint32_t constant = 0;
    std::function<std::vector<uint8_t>()> make;
  };
  std::vector<LaterConstant> later;
};

// Reads config.json (+ generation_config.json) and the safetensors weights in `dir` (a single
// model.safetensors or shards through model.safetensors.index.json) and emits the graph above.
// Throws ModelError (models/error.h) naming the file and tensor or field for a checkpoint it
// cannot use: malformed files, missing tensors, shapes that do not match the config.
BuiltModel load_hf(const std::filesystem::path& dir, const LoadOptions& options = {});

}  // namespace wgx::models
