// Continuous batching over a rows graph (models::build_rows_decoder): up to `slots` sequences,
// each in a KV cache slot of its own. Every step() feeds, in one pass over the weights, the last
// token of each decoding sequence and chunks of new sequences' prompts beside them (decoding rows
// first, then prompts in arrival order up to the step's row limit), so that sequences join and
// leave between steps while the others go on. A step holds 5 to 64 rows (dummy rows fill small
// steps), so that every product runs one kernel plan whatever the step holds: a greedy sequence's
// tokens do not depend on the sequences beside it (tests/models/test_rows_decoder.cpp shows the
// logits bit for bit, and that a one-row step would differ).
//
//   llm::Batch batch(rows_program, tokenizer);
//   const uint64_t id = batch.add(prompt_ids, options, on_token);
//   while (batch.running() > 0) {
//     for (llm::Batch::Finished& f : batch.step()) use(f.id, f.result);
//   }
//
// A sequence's tokens are picked on the device (sample_rows_penalized, each row with its own
// settings: greedy, or drawn from a top_k of 1 to 128 with the seed and the row's position, as
// the generator draws; a repetition penalty against its slot's seen set, which add() fills with
// the prompt and each pick joins), otherwise (a top_k of 0 or above 128 when drawing, or
// host_sampling) on the host from its logits row (llm::Sampler, its own seeded stream). Text,
// callbacks, stop strings and stop reasons are the generator's (llm::Emitter). Where every running sequence decodes with device picks and
// nothing joins or leaves, step() submits the next step, its tokens fed on the device from this
// one's (runtime::Program::feed_from), before it waits for this one's: the host's work between
// steps then overlaps the GPU's. A sequence that ends meanwhile (eos, a stop string, cancel)
// drops the token the step ahead computed for it.
//
// A slot's caches keep the rows of the sequence that ran in it last. add() takes the free slot
// whose kept tokens share the longest prefix with the prompt, where that prefix is more than half
// of them (else the least recently freed slot), and feeds only the tokens after the prefix
// (GenerationStats::cached_tokens): the next turn of a conversation, or prompts that share a
// system prompt. A row's arithmetic does not depend on the step that computed it, so the reply
// is the one a cold prompt gets, bit for bit.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "llm/emitter.h"
#include "llm/generator.h"
#include "llm/sampler.h"
#include "runtime/program.h"

namespace wgx::llm {

struct BatchLimits {
  int64_t slots = 0;     // sequences at once (the caches' first dim)
  int64_t max_seq = 0;   // tokens a slot holds
  int64_t max_rows = 0;  // rows one step feeds
  int64_t picks = 0;     // rows one step gives logits for
  int64_t vocab = 0;
};
// Read from a rows graph: "tokens" [1, rows], "rows" [rows, 2], "logit_rows", "logits",
// "next_tokens", the caches' slots; std::invalid_argument naming what is missing.
BatchLimits batch_limits(const graph::Graph& graph);

class Batch {
 public:
  // The program (of a rows graph) must outlive the batch; its caches are the batch's from now on.
  Batch(runtime::Program& program, std::optional<tokenizer::Tokenizer> tokenizer, BatchLimits limits);

  // Starts a sequence in a free slot; the next steps feed its prompt, after the prefix that the
  // slot's caches hold already (above). Throws std::invalid_argument when no slot is free, the
  // prompt is empty or holds ids outside the vocabulary; ContextFullError when the prompt and
  // max_new_tokens exceed a slot.
  uint64_t add(std::vector<int32_t> prompt, const GenerationOptions& options, TokenCallback on_token = {});
  // Ends a sequence at the next step (StopReason::Cancelled); no effect for an unknown id.
  void cancel(uint64_t id);

  struct Finished {
    uint64_t id = 0;
    GenerationResult result;
  };
  // One step over every running sequence (nothing when none runs); the sequences that ended in it.
  std::vector<Finished> step();

  // Prompt rows before decoding rows in each step (default: decoding first, so that running
  // sequences keep flowing while prompts arrive): every prompt is fed before the sequences
  // decode together, as llama-batched-bench times them (wgx bench --parallel).
  void set_prompts_first(bool on) { prompts_first_ = on; }

  size_t running() const { return sequences_.size(); }
  size_t free_slots() const { return free_.size(); }
  const BatchLimits& limits() const { return limits_; }
  // Rows of the last step: decoding rows and prompt rows.
  int64_t last_decode_rows() const { return last_decode_rows_; }
  int64_t last_prompt_rows() const { return last_prompt_rows_; }
  // Steps submitted ahead of the last one's tokens (chained), since the batch began.
  int64_t chained_steps() const { return chained_steps_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Sequence {
    uint64_t id = 0;
    int32_t slot = 0;
    GenerationOptions options;
    TokenCallback on_token;
    std::vector<int32_t> context;  // prompt and tokens so far
    int64_t fed = 0;               // of them in the slot's cache
    bool device_pick = false;      // picked on the device (next_tokens), else from its logits
    std::optional<Sampler> sampler;
    GenerationResult result;
    std::unique_ptr<Emitter> emitter;
    bool cancelled = false;
    Clock::time_point start, first_token;
  };
  Finished finish(size_t index);

  // A step's rows (tokens, (slot, position) pairs, logit rows) and the sequences it picks for.
  struct Plan {
    std::vector<int32_t> tokens, rows, picks;
    std::vector<int32_t> words, counters;  // each pick's sampling words (8) and counter
    std::vector<int32_t> slots;            // each pick's seen set (its slot, or none)
    std::vector<uint64_t> picked;
    int64_t decode_rows = 0, prompt_rows = 0;
  };
  // A submitted step whose tokens are still to be taken.
  struct Step {
    runtime::AsyncRead next;
    std::optional<runtime::AsyncRead> logits;
    std::vector<uint64_t> picked;
    int64_t decode_rows = 0, prompt_rows = 0;
    // Its next_tokens go to "tokens" on the device: it decodes only, with device picks, a pick
    // per row (dummies included).
    bool fed_on = false;
  };
  Plan plan();                         // the next step from the sequences' state
  Plan chained(const Step& last);      // the step after `last`, its tokens from `last`'s
  void pad(Plan& p, bool with_tokens) const;  // dummy rows (and tokens) and picks up to kMinRows
  static void add_pick(Plan& p, const Sequence& s, int32_t row, int64_t position);
  // Its picks look at a seen set on the device (a repetition penalty, drawn there).
  static bool penalized_on_device(const Sequence& s);
  bool chainable(const Step& s) const;
  Step submit(Plan p, bool chained);
  void take(Step& s, std::vector<Finished>& done);  // its tokens to the sequences
  void drop_cancelled(std::vector<Finished>& done);
  Sequence* find_sequence(uint64_t id) const;
  std::vector<Finished> step_unguarded();

  runtime::Program& program_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  BatchLimits limits_;
  std::vector<std::unique_ptr<Sequence>> sequences_;  // in arrival order
  std::vector<int32_t> free_;  // the least recently freed first
  // Per slot: the tokens whose rows its caches hold, from position 0 (kept while it is free).
  std::vector<std::vector<int32_t>> kept_;
  uint64_t next_id_ = 1;
  int64_t last_decode_rows_ = 0, last_prompt_rows_ = 0;
  bool prompts_first_ = false;
  int64_t chained_steps_ = 0;
  std::optional<Step> in_flight_;  // submitted, its tokens not yet taken
};

}  // namespace wgx::llm
