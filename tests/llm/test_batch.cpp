// llm::Batch (continuous batching) on the demo model's rows graph: a greedy sequence gets the same
// tokens alone as beside others that join and leave at other steps (slots reused), and a seeded
// sampled one repeats; cancel ends a sequence; a full batch, an empty prompt, ids outside the
// vocabulary and a prompt too long for a slot are refused. Why the tokens cannot depend on the
// sequences beside them, with its negative control, is tests/models/test_rows_decoder.cpp's
// (logits bit for bit). Each step on SwiftShader computes whole 64-row tiles: counts stay small.
#include <gtest/gtest.h>

#include <map>

#include "llm/batch.h"
#include "models/decoder.h"
#include "models/model.h"
#include "runtime_test_util.h"

namespace wgx::llm {
namespace {

using runtime::testing::shared_context;

constexpr int64_t kSlots = 4;

struct Demo {
  models::BuiltModel single, rows;
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(WGX_DEMO_MODEL);
  std::unique_ptr<runtime::Program> base, program;
  BatchLimits limits;
  Demo() {
    models::LoadOptions o;
    o.max_seq = 96;
    o.max_prefill = 64;
    single = models::load_hf(WGX_DEMO_MODEL, o);
    rows = models::build_rows_decoder(single, kSlots);
    limits = batch_limits(rows.graph);
    base = std::make_unique<runtime::Program>(shared_context(), single.graph, single.weights);
    program = std::make_unique<runtime::Program>(shared_context(), rows.graph, rows.weights, *base);
  }
};

Demo& demo() {
  static Demo d;
  return d;
}

GenerationOptions greedy(int64_t n) {
  GenerationOptions o;
  o.max_new_tokens = n;
  o.sampling.temperature = 0;
  return o;
}

const std::vector<std::string> kPrompts = {"The meaning of life is", "You will meet", "A friend in need",
                                           "Computers are", "If you want to"};
constexpr int64_t kTokens = 10;

// Runs every step until nothing runs; results by id.
void drain(Batch& b, std::map<uint64_t, GenerationResult>& out) {
  while (b.running() > 0) {
    for (Batch::Finished& f : b.step()) out[f.id] = std::move(f.result);
  }
}

std::vector<int32_t> run_alone(const std::string& prompt, const GenerationOptions& o) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  const uint64_t id = b.add(d.tok.encode(prompt), o);
  std::map<uint64_t, GenerationResult> out;
  drain(b, out);
  return out.at(id).tokens;
}

// Greedy, kTokens each: computed once.
const std::vector<int32_t>& alone(size_t prompt) {
  static std::map<size_t, std::vector<int32_t>> cache;
  if (!cache.count(prompt)) cache[prompt] = run_alone(kPrompts[prompt], greedy(kTokens));
  return cache[prompt];
}

// The prompts beside each other: two start, two join after 3 steps, the rest as slots free up.
std::vector<std::vector<int32_t>> together(const GenerationOptions& o) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  std::vector<uint64_t> ids;
  std::map<uint64_t, GenerationResult> out;
  size_t next = 0;
  auto add = [&] { ids.push_back(b.add(d.tok.encode(kPrompts[next++]), o)); };
  add();
  add();
  for (int i = 0; i < 3; ++i) {
    for (Batch::Finished& f : b.step()) out[f.id] = std::move(f.result);
  }
  while (next < kPrompts.size() || b.running() > 0) {
    while (next < kPrompts.size() && b.free_slots() > 0) add();
    for (Batch::Finished& f : b.step()) out[f.id] = std::move(f.result);
  }
  std::vector<std::vector<int32_t>> tokens;
  for (uint64_t id : ids) tokens.push_back(out.at(id).tokens);
  return tokens;
}

TEST(Batch, AGreedySequenceGetsTheSameTokensAloneAndBesideOthers) {
  const GenerationOptions o = greedy(kTokens);
  const std::vector<std::vector<int32_t>> beside = together(o);
  ASSERT_EQ(beside.size(), kPrompts.size());
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    EXPECT_EQ(beside[i].size(), static_cast<size_t>(kTokens));
    EXPECT_EQ(beside[i], alone(i)) << kPrompts[i];
  }
}

// Alone, a greedy sequence's steps are chained (each submitted before the last one's tokens are
// taken, its tokens fed on the device); beside a sampled sequence (its token picked on the host)
// none is. The tokens are the same either way.
TEST(Batch, ChainedStepsGiveTheTokensOfStepsTakenOneAtATime) {
  Demo& d = demo();
  Batch chained(*d.program, d.tok, d.limits);
  const uint64_t a = chained.add(d.tok.encode(kPrompts[1]), greedy(kTokens));
  std::map<uint64_t, GenerationResult> out;
  drain(chained, out);
  EXPECT_GE(chained.chained_steps(), kTokens - 3);

  Batch apart(*d.program, d.tok, d.limits);
  GenerationOptions sampled;
  sampled.max_new_tokens = kTokens + 2;
  sampled.sampling.temperature = 0.9f;
  sampled.sampling.seed = 3;
  const uint64_t b = apart.add(d.tok.encode(kPrompts[1]), greedy(kTokens));
  apart.add(d.tok.encode(kPrompts[2]), sampled);
  std::map<uint64_t, GenerationResult> out2;
  drain(apart, out2);
  EXPECT_EQ(apart.chained_steps(), 0);
  EXPECT_EQ(out.at(a).tokens, out2.at(b).tokens);
  EXPECT_EQ(out.at(a).tokens.size(), static_cast<size_t>(kTokens));
}

// A sequence that a stop string ends while the step ahead runs drops that step's token; the
// sequence beside it goes on, and one started in its slot right after gets the tokens it gets
// alone.
TEST(Batch, ASequenceEndingWhileAStepIsAheadFreesItsSlotCleanly) {
  Demo& d = demo();
  const std::vector<int32_t>& ref = alone(0);
  GenerationOptions o = greedy(40);
  o.stop_strings = {d.tok.decode(std::vector<int32_t>{ref[4]})};
  Batch b(*d.program, d.tok, d.limits);
  const uint64_t x = b.add(d.tok.encode(kPrompts[0]), o);
  const uint64_t y = b.add(d.tok.encode(kPrompts[1]), greedy(kTokens));
  std::map<uint64_t, GenerationResult> out;
  while (!out.count(x)) {
    for (Batch::Finished& f : b.step()) out[f.id] = std::move(f.result);
  }
  EXPECT_GT(b.chained_steps(), 0);
  EXPECT_EQ(out.at(x).stop, StopReason::StopString);
  EXPECT_GE(out.at(x).tokens.size(), 2u) << "it ended before a step ran ahead of it";
  const uint64_t z = b.add(d.tok.encode(kPrompts[3]), greedy(kTokens));
  drain(b, out);
  EXPECT_EQ(out.at(y).tokens, alone(1));
  EXPECT_EQ(out.at(z).tokens, alone(3));
}

TEST(Batch, SeededSamplingRepeatsBesideOthers) {
  GenerationOptions o;
  o.max_new_tokens = kTokens;
  o.sampling.temperature = 0.9f;
  o.sampling.seed = 7;
  const std::vector<std::vector<int32_t>> a = together(o);
  EXPECT_EQ(a[0], run_alone(kPrompts[0], o));
  EXPECT_NE(a[0], alone(0)) << "drawn tokens equal the greedy ones: the sampling setting did nothing";
}

TEST(Batch, CancelEndsASequenceAndFreesItsSlot) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  const uint64_t id = b.add(d.tok.encode(kPrompts[0]), greedy(40));
  b.step();
  b.step();
  b.cancel(id);
  const std::vector<Batch::Finished> done = b.step();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, id);
  EXPECT_EQ(done[0].result.stop, StopReason::Cancelled);
  EXPECT_EQ(done[0].result.tokens.size(), 2u);  // one a step: the prompt's, then the next
  EXPECT_EQ(b.free_slots(), static_cast<size_t>(kSlots));
}

// By default a step feeds decoding rows first (running sequences keep flowing); with
// set_prompts_first a new prompt takes the rows first (wgx bench --parallel: every prompt before
// the decoding). Either way the greedy tokens are the same.
TEST(Batch, PromptsFirstFeedsAPromptBeforeTheDecodingRows) {
  Demo& d = demo();
  const int64_t step_rows = std::min<int64_t>(d.limits.max_rows, 64);  // the most a step feeds
  std::vector<int32_t> longer;
  while (static_cast<int64_t>(longer.size()) <= step_rows) {
    const std::vector<int32_t> part = d.tok.encode(" Once upon a time, in a land far away, there lived a wise king.");
    longer.insert(longer.end(), part.begin(), part.end());
  }
  ASSERT_LE(static_cast<int64_t>(longer.size()) + 2, d.limits.max_seq);
  for (const bool first : {false, true}) {
    SCOPED_TRACE(first ? "prompts first" : "decoding first");
    Batch b(*d.program, d.tok, d.limits);
    b.set_prompts_first(first);
    const uint64_t a = b.add(d.tok.encode(kPrompts[0]), greedy(kTokens));
    b.step();  // A's prompt: A decodes from now on
    b.add(longer, greedy(2));
    b.step();
    EXPECT_EQ(b.last_decode_rows(), first ? 0 : 1);
    EXPECT_EQ(b.last_prompt_rows(), first ? step_rows : step_rows - 1);
    std::map<uint64_t, GenerationResult> out;
    drain(b, out);
    EXPECT_EQ(out.at(a).tokens, alone(0));
  }
}

TEST(Batch, RefusesWhatItCannotRun) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  const std::vector<int32_t> p = d.tok.encode(kPrompts[0]);
  EXPECT_THROW(b.add({}, greedy(4)), std::invalid_argument);
  EXPECT_THROW(b.add({1, 2, 999999}, greedy(4)), std::invalid_argument);
  EXPECT_THROW(b.add(p, greedy(96)), ContextFullError);
  for (int64_t i = 0; i < kSlots; ++i) b.add(p, greedy(4));
  EXPECT_THROW(b.add(p, greedy(4)), std::invalid_argument);
  std::map<uint64_t, GenerationResult> out;
  drain(b, out);
  EXPECT_EQ(out.size(), static_cast<size_t>(kSlots));
  for (const auto& [id, r] : out) EXPECT_EQ(r.tokens, out.begin()->second.tokens);
}

}  // namespace
}  // namespace wgx::llm
