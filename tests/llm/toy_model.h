// A toy language model that follows models/model.h's contract (input "tokens" [1, seq], sym
// "input_pos", output "logits" [1, vocab], KV caches as mutable buffers), small enough for
// SwiftShader: embedding, one attention layer with RoPE over a KV cache, a residual, the last
// position, an output projection, and the argmax of the last position's logits. Random but fixed
// weights make the logits a deterministic function of the whole context, so a broken cache or a
// wrong position changes the tokens.
// And a tokenizer for it: every printable ASCII character, newline, ChatML's special tokens, and
// the two bytes of "é" as separate tokens (so a character can arrive split).
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "graph/weights.h"
#include "tokenizer/tokenizer.h"

namespace wgx::llm::test {

namespace toy {
constexpr int64_t kMaxSeq = 128;
constexpr int64_t kMaxPrefill = 16;
constexpr int64_t kVocab = 103;
// Token ids: '!'..'~' are 0..93, ' ' 94, '\n' 95.
constexpr int32_t im_start = 96, im_end = 97, endoftext = 98, think = 99, end_think = 100, e_acute_lead = 101,
                  e_acute_trail = 102;
}  // namespace toy

struct ToyModel {
  graph::Graph graph;
  graph::WeightStore weights;
};
// all_logits: "logits" is [1, seq, vocab], every position's (LoadOptions::all_logits).
// next_token: also the output "next_token", i32 [1, 1], the last position's argmax (as the decoder
// builder emits it), which lets the generator pipeline greedy decoding.
// next_token: the argmax, or with `device_sampling` sample_token following an input "sampling",
// or with `device_penalty` too sample_token_penalized with the state "seen_tokens", as the
// decoder builder emits it (models/model.h).
ToyModel toy_model(bool all_logits = false, bool next_token = true, bool device_sampling = false,
                   bool device_penalty = false);

tokenizer::Tokenizer toy_tokenizer();
// Its tokenizer.json and tokenizer_config.json (eos <|im_end|>), for a model folder on disk.
std::string toy_tokenizer_json();
constexpr const char* kToyTokenizerConfig = R"({"eos_token": "<|im_end|>"})";

}  // namespace wgx::llm::test
