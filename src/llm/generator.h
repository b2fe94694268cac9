// Text generation over a built model graph (models/model.h's contract: input "tokens", sym
// "input_pos", output "logits", KV caches as mutable buffers).
//
//   llm::Generator gen(program, tokenizer, llm::model_limits(graph));
//   llm::GenerationOptions o;
//   o.max_new_tokens = 64;
//   o.eos_ids = {tokenizer.special_tokens().eos.value()};
//   auto r = gen.generate(tokenizer.encode(prompt), o, [](int32_t, std::string_view text) {
//     std::fwrite(text.data(), 1, text.size(), stdout);
//     return true;  // false stops
//   });
//
// The prompt is fed in chunks of at most max_prefill tokens, then one token per step. The KV
// cache persists between calls: the next generate() continues the same sequence (multi-turn
// chat feeds only the new turn), until reset().
//
// Decoding is pipelined where the model and the settings allow it (a "next_token" output,
// models/model.h; GenerationOptions::decode_in_flight says when): the token is picked on the
// device (greedy, or drawn: sample_token_penalized, with a repetition penalty over the context
// where one is asked for), each step feeds the next on the device
// (Program::feed_from), and the host keeps up to GenerationOptions::decode_in_flight steps
// submitted (decode_steps_per_submit of them a submit), collecting each token asynchronously
// while later steps run. Steps submitted past the end (an eos, a stop string, a cancel) are
// discarded: they wrote only cache rows past the context, which the next generate() overwrites
// before anything reads them. Text, callbacks, stop reasons and the context follow the tokens
// exactly as on the synchronous path; greedy tokens are the same, drawn ones come from the
// device's random stream (a hash of the seed and the position) instead of the host's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "llm/sampler.h"
#include "ops/sampling/sample_params.h"
#include "runtime/program.h"
#include "tokenizer/tokenizer.h"

namespace wgx::llm {

struct ModelLimits {
  int64_t max_seq = 0;      // tokens the KV cache holds
  int64_t max_prefill = 0;  // tokens one step may feed
  int64_t vocab = 0;        // logits per token (embedding rows)
  bool next_token = false;  // the graph's pick on the device: output "next_token", i32 [1, 1]
  // next_token follows the input "sampling" (i32 [8], ops/sampling/sample_params.h): greedy or
  // drawn on the device. Without it (.wgx files converted before it existed) next_token is the
  // argmax.
  bool device_sampling = false;
  // With device_sampling, the state "seen_tokens" (i32 [ceil(vocab / 32)]): the device applies a
  // repetition penalty too. Without it (.wgx files converted before it existed) the host does.
  bool device_penalty = false;
};
// Read from the graph: the "tokens" input's length range, the "input_pos" sym's range and the
// "logits" output; and whether "next_token", "sampling" and "seen_tokens" are there (a value of
// one of these names of another type is an error). Throws std::invalid_argument naming what is
// missing.
ModelLimits model_limits(const graph::Graph& graph);

// Whether the device picks the tokens with these settings in such a model: greedy (next_token;
// a repetition penalty needs device_penalty), or drawn (device_sampling, temperature > 0, top_k
// 1 to ops::sampling::kMaxTopK, a repetition penalty needs device_penalty).
bool device_can_pick(const SamplingOptions& sampling, const ModelLimits& limits);
// Whether that pick is drawn (device_can_pick and not greedy).
bool device_can_draw(const SamplingOptions& sampling, const ModelLimits& limits);
// The "sampling" words for these settings (where device_can_pick).
ops::sampling::Words device_words(const SamplingOptions& sampling);
// The "seen_tokens" words for a context: a bit per token (ids outside [0, vocab) left out).
std::vector<int32_t> seen_words(std::span<const int32_t> context, int64_t vocab);

// The prompt and the tokens asked for do not fit in what is left of the context.
class ContextFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GenerationOptions {
  int64_t max_new_tokens = 256;
  SamplingOptions sampling;
  std::vector<int32_t> eos_ids;           // end the reply; not part of the text
  std::vector<std::string> stop_strings;  // end the reply when the text holds one; cut before it
  bool skip_special = false;              // leave special tokens out of the text
  int64_t prefill_chunk = 0;              // tokens per prefill step; 0: the model's max_prefill
  // Steps kept on the device at once where the device picks the tokens (device_can_pick; drawn
  // ones only where sample_on_device holds). 0 decodes synchronously (the logits read back, the
  // token picked on the host). Greedy tokens are the same either way (with a repetition penalty,
  // up to the host dividing by it where the device multiplies by its inverse: an ulp, which
  // decides only exact near-ties); sampled ones come from another random stream (the same
  // distribution).
  int64_t decode_in_flight = 6;
  // Draw sampled tokens on the device where the settings allow it (see decode_in_flight); false
  // keeps the host sampler (any top_k, the host's random stream).
  bool sample_on_device = true;
  // Pipelined steps recorded into one submit (Program::execute_steps), at least 1 (more than
  // decode_in_flight takes decode_in_flight): a new group is submitted once that many of the
  // steps in flight have been collected. Three a submit, six in flight measured ~1% faster than
  // one and three on the H200 (PERFORMANCE.md, 2026-12-01).
  int64_t decode_steps_per_submit = 3;
};

enum class StopReason { Eos, StopString, MaxTokens, Cancelled };
const char* stop_reason_name(StopReason reason);

struct GenerationStats {
  int64_t prompt_tokens = 0;  // fed before the first token
  int64_t cached_tokens = 0;  // of the context before them, already in the cache (not fed again)
  int64_t generated_tokens = 0;
  int64_t prefill_steps = 0;
  double prefill_seconds = 0;      // feeding the prompt, until its logits (pipelined: its next token) are on the host
  double first_token_seconds = 0;  // from the call until the first token is sampled
  double decode_seconds = 0;       // from the first token until the last
  bool pipelined = false;          // tokens picked on the device, steps kept in flight
  bool drawn_on_device = false;    // pipelined and sampled (not greedy)
  size_t dispatches_per_step = 0;  // of the last decode step
  // From the first token until the last: CPU seconds of the process (every thread) and of the
  // calling thread, and the calling thread's seconds in Program::execute by phase.
  double decode_cpu_seconds = 0;
  double decode_thread_cpu_seconds = 0;
  runtime::Program::HostTimes decode_host;
  double prefill_tokens_per_second() const;
  // Tokens fed one at a time (every generated token but the first) per second.
  double decode_tokens_per_second() const;
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // every sampled token, an ending eos included
  std::string text;             // what was emitted: no eos, nothing from a stop string on
  StopReason stop = StopReason::MaxTokens;
  GenerationStats stats;
};

// Called once per sampled token with the text that became final with it: possibly empty (bytes
// of an unfinished character, or text that may begin a stop string, are held back). Valid UTF-8.
// Returning false ends the generation (StopReason::Cancelled).
using TokenCallback = std::function<bool(int32_t token, std::string_view text)>;

class Generator {
 public:
  // The program must outlive the generator; its state is reset here. Without a tokenizer (a
  // synthetic model) generate() takes ids as usual and produces no text.
  Generator(runtime::Program& program, std::optional<tokenizer::Tokenizer> tokenizer, ModelLimits limits);

  // Feeds `prompt` after the conversation so far and samples up to max_new_tokens. Throws
  // ContextFullError (before feeding anything) when the conversation, the prompt and
  // max_new_tokens exceed max_seq; std::invalid_argument for ids outside the vocabulary.
  GenerationResult generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                            const TokenCallback& on_token = {});

  // Forgets the conversation and clears the KV cache.
  void reset();
  // Keeps the first `tokens` of the conversation (fewer than it has: no change). The cache rows
  // past them are left as they are: they lie past the context and are overwritten before
  // anything reads them.
  void truncate(size_t tokens);
  // The program's cache no longer holds this conversation (another generator used the program):
  // the next generate() feeds all of it again.
  void forget_cache() { fed_ = 0; }
  // The conversation becomes `tokens`, none of them in the cache (the next generate() feeds them
  // all): what a caller restores after a generate() that failed.
  void restore(std::vector<int32_t> tokens) {
    context_ = std::move(tokens);
    fed_ = 0;
  }

  // The conversation so far: prompts and sampled tokens. The last sampled token is fed at the
  // start of the next generate().
  const std::vector<int32_t>& context() const { return context_; }
  // Tokens the context still has room for.
  int64_t remaining() const { return limits_.max_seq - static_cast<int64_t>(context_.size()); }
  const ModelLimits& limits() const { return limits_; }

 private:
  // Feeds ids (positions fed_ ...) in steps of at most `chunk`; returns the last token's logits.
  std::vector<float> feed(std::span<const int32_t> ids, int64_t chunk, int64_t* steps);
  // The same steps, the last one armed for pipelined decoding: it feeds "next_token" into
  // "tokens" and reads it asynchronously (the first generated token). With `seen`, the device's
  // seen set is written before that step (the earlier steps' picks, unused, joined it).
  runtime::AsyncRead feed_pipelined(std::span<const int32_t> ids, int64_t chunk, int64_t* steps,
                                    const std::vector<int32_t>* seen);

  runtime::Program& program_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  ModelLimits limits_;
  std::vector<int32_t> context_;
  int64_t fed_ = 0;  // tokens of context_ in the KV cache
};

}  // namespace wgx::llm
