// Models with random weights at the geometry of real ones, built in process: decode speed can be
// measured without the checkpoint (no files, no tokenizer: prompts are random token ids).
//
//   llama-3.2-1b  vocab 128256, hidden 2048, 16 layers, 32 heads over 8 kv heads of 64, ffn 8192,
//                 rope theta 500000 with llama3 scaling, tied embeddings
//   qwen3-0.6b    vocab 151936, hidden 1024, 28 layers, 16 heads over 8 kv heads of 128, ffn 3072,
//                 rope theta 1000000, tied embeddings, q/k norm
//   demo-tiny     a Llama small enough for SwiftShader: vocab 512, hidden 64, 2 layers, 4 heads
//                 over 2 kv heads of 16, ffn 128
//
//   models::LoadOptions o;
//   models::BuiltModel m = models::build_decoder(*models::synthetic_config("qwen3-0.6b"),
//                                                models::synthetic_weights(1), o);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/decoder.h"
#include "models/model.h"

namespace wgx::models {

std::vector<std::string> synthetic_names();
// Nothing for a name synthetic_names() does not list.
std::optional<ModelConfig> synthetic_config(const std::string& name);

// Weights drawn as tools/hf_reference/make_tiny.py draws them, but uniform where it draws normal
// (the same spread, far cheaper): products at 1/sqrt(fan_in), the embedding at 1, norms in
// [0.7, 1.3], so every part of the model shows in the logits. Each row has its own stream from
// (seed, tensor name, row): the same seed gives the same weights on any number of threads.
WeightSource synthetic_weights(uint64_t seed);

}  // namespace wgx::models
