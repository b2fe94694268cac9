// llm::Batch (continuous batching) on the demo model's rows graph: a greedy sequence gets the same
// tokens alone as beside others that join and leave at other steps (slots reused), and a seeded
// sampled one repeats, as does one with a repetition penalty (applied on the device, as the host
// applies it); a prompt that extends a finished sequence's context is fed only past the
// rows its slot kept, and gets the tokens a cold batch gives it; cancel ends a sequence; a full
// batch, an empty prompt, ids outside the
// vocabulary and a prompt too long for a slot are refused. Why the tokens cannot depend on the
// sequences beside them, with its negative control, is tests/models/test_rows_decoder.cpp's
// (logits bit for bit). Each step on SwiftShader computes whole 64-row tiles: counts stay small.
#include <gtest/gtest.h>

#include <map>

#include "llm/batch.h"
#include "llm/sampler.h"
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

// In a new batch (its caches cleared).
GenerationResult run_cold(const std::vector<int32_t>& prompt, const GenerationOptions& o) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  const uint64_t id = b.add(prompt, o);
  std::map<uint64_t, GenerationResult> out;
  drain(b, out);
  return out.at(id);
}
std::vector<int32_t> run_alone(const std::string& prompt, const GenerationOptions& o) {
  return run_cold(demo().tok.encode(prompt), o).tokens;
}

// Rows [0, n) of `slot` in every KV cache ([slots, kv heads, max_seq, head_dim]), as stored.
std::vector<std::vector<uint8_t>> slot_rows(int64_t slot, int64_t n) {
  Demo& d = demo();
  std::vector<std::vector<uint8_t>> out;
  for (const graph::MutableBuffer& b : d.rows.graph.buffers) {
    const graph::Shape& s = d.rows.graph.type(b.value).shape;
    if (s.size() != 4) continue;
    const std::vector<uint8_t> all = d.program->read_state_storage(b.name);
    const int64_t heads = s[1].value(), max_seq = s[2].value();
    const size_t row = all.size() / static_cast<size_t>(s[0].value() * heads * max_seq);
    for (int64_t h = 0; h < heads; ++h) {
      const auto at = all.begin() + static_cast<ptrdiff_t>(static_cast<size_t>((slot * heads + h) * max_seq) * row);
      out.emplace_back(at, at + static_cast<ptrdiff_t>(static_cast<size_t>(n) * row));
    }
  }
  return out;
}

std::vector<int32_t> joined(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
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
// taken, its tokens fed on the device); beside a sequence sampled from the whole vocabulary (top_k
// off: its token picked on the host) none is. The tokens are the same either way.
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
// sequence beside it goes on, and one started in its slot right after (its prompt extends the
// ended one's, so it takes that slot and its rows, the step ahead's included) gets the tokens it
// gets alone.
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
  const std::vector<int32_t> ended = joined(d.tok.encode(kPrompts[0]), out.at(x).tokens);
  const std::vector<int32_t> next = joined(ended, d.tok.encode(kPrompts[3]));
  const uint64_t z = b.add(next, greedy(kTokens));
  drain(b, out);
  EXPECT_EQ(out.at(y).tokens, alone(1));
  EXPECT_GE(out.at(z).stats.cached_tokens, static_cast<int64_t>(ended.size()) - 1);
  EXPECT_EQ(out.at(z).tokens, run_cold(next, greedy(kTokens)).tokens);
}

// A finished sequence's slot keeps its rows: a prompt that extends its context (the next turn of
// a conversation) takes that slot, feeds only what follows the kept rows and gets what a cold
// batch gives it, its cache rows bit for bit (a row's arithmetic does not depend on the step
// that computed it); an unrelated prompt in between takes another slot, the least recently
// freed. (Negative control, by hand: a slot that claims one row more than was fed, the last
// token's, leaves that row as it was, and the rows differ from the cold batch's.)
TEST(Batch, ANextTurnFeedsOnlyWhatFollowsTheKeptRowsAndGetsTheColdTokens) {
  Demo& d = demo();
  Batch b(*d.program, d.tok, d.limits);
  std::map<uint64_t, GenerationResult> out;
  const std::vector<int32_t> p0 = d.tok.encode(kPrompts[0]);
  const uint64_t first = b.add(p0, greedy(kTokens));
  drain(b, out);
  EXPECT_EQ(out.at(first).stats.cached_tokens, 0);
  const uint64_t other = b.add(d.tok.encode(kPrompts[2]), greedy(kTokens));
  drain(b, out);
  EXPECT_EQ(out.at(other).stats.cached_tokens, 0) << "an unrelated prompt took the conversation's slot";

  const std::vector<int32_t> p1 = joined(joined(p0, out.at(first).tokens), d.tok.encode(kPrompts[1]));
  const uint64_t turn = b.add(p1, greedy(kTokens));
  drain(b, out);
  const GenerationResult& warm = out.at(turn);
  // Every row but the last token's (picked, never fed) was kept.
  EXPECT_EQ(warm.stats.cached_tokens, static_cast<int64_t>(p0.size() + out.at(first).tokens.size()) - 1);
  EXPECT_EQ(warm.stats.prompt_tokens + warm.stats.cached_tokens, static_cast<int64_t>(p1.size()));
  const int64_t written = static_cast<int64_t>(p1.size()) + kTokens - 1;
  const std::vector<std::vector<uint8_t>> warm_rows = slot_rows(0, written);
  const GenerationResult cold = run_cold(p1, greedy(kTokens));  // slot 0 of a new batch
  EXPECT_EQ(cold.stats.cached_tokens, 0);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_TRUE(warm_rows == slot_rows(0, written)) << "the caches' rows differ from a cold batch's";
  EXPECT_EQ(warm.tokens.size(), static_cast<size_t>(kTokens));

  // The same prompt again: all of it kept but its last token, which gives the logits.
  const uint64_t again = b.add(p1, greedy(kTokens));
  drain(b, out);
  EXPECT_EQ(out.at(again).stats.prompt_tokens, 1);
  EXPECT_EQ(out.at(again).tokens, cold.tokens);
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

// Sampled with a top_k the device draws from (sample_rows): each row's draw hangs on its own
// logits, settings and position only, so the tokens repeat beside others (every prompt in
// `together` draws, from steps of other compositions), differ from the greedy ones and from
// another seed's, and a sequence alone has its steps chained.
TEST(Batch, DrawsOnTheDeviceRepeatBesideOthers) {
  GenerationOptions o;
  o.max_new_tokens = kTokens;
  o.sampling.temperature = 0.9f;
  o.sampling.top_k = 40;
  o.sampling.top_p = 0.95f;
  o.sampling.seed = 7;
  const std::vector<std::vector<int32_t>> a = together(o);
  Demo& d = demo();
  for (size_t i = 0; i < kPrompts.size(); i += 2) {
    Batch b(*d.program, d.tok, d.limits);
    const uint64_t id = b.add(d.tok.encode(kPrompts[i]), o);
    std::map<uint64_t, GenerationResult> out;
    drain(b, out);
    EXPECT_TRUE(out.at(id).stats.drawn_on_device);
    EXPECT_GE(b.chained_steps(), kTokens - 3);
    EXPECT_EQ(a[i], out.at(id).tokens) << kPrompts[i];
  }
  EXPECT_NE(a[0], alone(0)) << "drawn tokens equal the greedy ones: the sampling words did nothing";
  GenerationOptions other = o;
  other.sampling.seed = 8;
  EXPECT_NE(a[0], run_alone(kPrompts[0], other)) << "another seed drew the same tokens";
}

// Greedy with a repetition penalty, on the host: each step of the rows program feeds the rows
// the batch would (at least 5, dummies in no slot), and the token is the argmax of the logits
// after the host's penalty over the context (llm::apply_repetition_penalty, as transformers).
std::vector<int32_t> host_penalized(const std::vector<int32_t>& prompt, float penalty, int64_t n) {
  Demo& d = demo();
  runtime::Program& prog = *d.program;
  prog.reset_state();
  std::vector<int32_t> context = prompt, out;
  int64_t fed = 0;
  const auto vocab = static_cast<size_t>(d.limits.vocab);
  while (static_cast<int64_t>(out.size()) < n) {
    std::vector<int32_t> tokens, rows;
    for (; fed < static_cast<int64_t>(context.size()); ++fed) {
      tokens.push_back(context[static_cast<size_t>(fed)]);
      rows.insert(rows.end(), {0, static_cast<int32_t>(fed)});
    }
    const auto last = static_cast<int32_t>(tokens.size() - 1);
    while (tokens.size() < 5) {
      tokens.push_back(0);
      rows.insert(rows.end(), {static_cast<int32_t>(kSlots), 0});
    }
    const auto r = static_cast<int64_t>(tokens.size());
    prog.set_input<int32_t>("tokens", tokens, {1, r});
    prog.set_input<int32_t>("rows", rows, {r, 2});
    prog.set_input<int32_t>("logit_rows", std::vector<int32_t>(5, last), {5});
    prog.set_input<int32_t>("sampling", std::vector<int32_t>(40, 0), {5, 8});
    prog.set_input<int32_t>("counters", std::vector<int32_t>(5, 0), {5});
    prog.set_input<int32_t>("pick_slots", std::vector<int32_t>(5, -1), {5});
    prog.execute();
    std::vector<float> logits = prog.read_f32("logits");
    logits.resize(vocab);
    apply_repetition_penalty(logits, context, penalty);
    out.push_back(argmax(logits));
    context.push_back(out.back());
  }
  return out;
}

// A repetition penalty applies on the device (each slot's seen set: its prompt, then each pick),
// so a penalized greedy sequence keeps its steps chained, gets the host's penalized tokens
// (host_penalized: the same logits, the penalty applied on the host) and the same tokens beside
// others. Negative control: the penalty changes the tokens (a set that was not read, or not kept
// per slot, would give the plain greedy ones).
TEST(Batch, APenaltyOnTheDeviceGivesTheHostsTokensBesideOthers) {
  GenerationOptions o = greedy(kTokens);
  o.sampling.repetition_penalty = 1.8f;
  const std::vector<std::vector<int32_t>> a = together(o);
  Demo& d = demo();
  int differ = 0;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    const std::vector<int32_t> prompt = d.tok.encode(kPrompts[i]);
    EXPECT_EQ(a[i], host_penalized(prompt, o.sampling.repetition_penalty, kTokens)) << kPrompts[i];
    if (a[i] != alone(i)) ++differ;
  }
  EXPECT_GE(differ, 2) << "the penalty changed too few replies to show it is applied";
  Batch b(*d.program, d.tok, d.limits);
  const uint64_t id = b.add(d.tok.encode(kPrompts[3]), o);
  std::map<uint64_t, GenerationResult> out;
  drain(b, out);
  EXPECT_GE(b.chained_steps(), kTokens - 3);
  EXPECT_EQ(out.at(id).tokens, a[3]);
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
