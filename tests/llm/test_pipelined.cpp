// Pipelined greedy decoding (the argmax on the device, steps fed on the device and kept in flight)
// must be indistinguishable from the synchronous path: the same tokens, text, callbacks, stop
// reasons and context, including a stop in the middle with steps already submitted past it, the
// last token exactly at the end of the context, and a next turn that continues the KV cache.
// Checked on the toy model, on the demo model (models/demo) and on a synthetic one; and the
// device's argmax against the host's llm::argmax, ties and NaNs included. Sampled decoding drawn
// on the device (sample_token): every token the reference draw of its step's logits, the same
// tokens at every depth and across turns, and the settings the device cannot draw left to the
// host. A repetition penalty on the device (sample_token_penalized): every token the reference
// pick of its step's logits penalized over the context, greedy ones the host's at every depth and
// across turns, and the seen set the context's at the start of every turn.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>

#include "gpu/context.h"
#include "graph/builder.h"
#include "llm/generator.h"
#include "llm/sampler.h"
#include "models/model.h"
#include "models/synthetic.h"
#include "ops/sampling/sample_params.h"
#include "ops/sampling/tests/sample_reference.h"
#include "toy_model.h"

namespace wgx::llm {
namespace {

gpu::Context& context() {
  static std::unique_ptr<gpu::Context> ctx = [] {
    gpu::ContextOptions o = gpu::ContextOptions::from_env();
    o.announce = false;
    return std::make_unique<gpu::Context>(o);
  }();
  return *ctx;
}

// ---- The device's argmax ------------------------------------------------------------------------

// argmax over the last dim of [rows, width] on the device, one value per row.
std::vector<int32_t> device_argmax(const std::vector<float>& x, int64_t rows, int64_t width) {
  graph::GraphBuilder b;
  const auto in = b.input("x", graph::DType::f32, {rows, width});
  b.output("i", b.op1("argmax", {in}, {{"dim", -1}, {"keepdim", true}}));
  runtime::Program p(context(), b.build(), b.weights());
  p.set_input<float>("x", x, {rows, width});
  const runtime::AsyncRead r = p.read_async("i");
  p.execute();
  return r.i32();
}

std::vector<int32_t> host_argmax(const std::vector<float>& x, int64_t rows, int64_t width) {
  std::vector<int32_t> out;
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row(x.data() + r * width, static_cast<size_t>(width));
    out.push_back(argmax(row));
  }
  return out;
}

TEST(DeviceArgmax, EqualsTheHostsOnRandomLogits) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (int64_t width : {int64_t{7}, int64_t{1000}, int64_t{8191}, int64_t{9001}, int64_t{128256}, int64_t{151936}}) {
    const int64_t rows = width > 10000 ? 2 : 5;
    std::vector<float> x(static_cast<size_t>(rows * width));
    for (float& v : x) v = normal(rng);
    EXPECT_EQ(device_argmax(x, rows, width), host_argmax(x, rows, width)) << "width " << width;
  }
}

TEST(DeviceArgmax, TiesGoToTheLowestIndexInEveryChunk) {
  constexpr int64_t kWidth = 128256;  // Llama 3's vocabulary: split over many workgroups
  // Few distinct values: the maximum occurs thousands of times, across every chunk.
  std::vector<float> x(4 * kWidth);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919 + (i >> 7)) % 5);
  // Row 1: one maximum late, and its tie later still, in other chunks; row 2: all equal; row 3:
  // maxima only at the very end.
  std::fill(x.begin() + kWidth, x.begin() + 2 * kWidth, 1.f);
  x[kWidth + 70001] = 9.f;
  x[kWidth + 128255] = 9.f;
  std::fill(x.begin() + 2 * kWidth, x.begin() + 3 * kWidth, -2.5f);
  std::fill(x.begin() + 3 * kWidth, x.begin() + 4 * kWidth, -std::numeric_limits<float>::infinity());
  x[3 * kWidth + kWidth - 2] = 0.f;
  x[3 * kWidth + kWidth - 1] = 0.f;
  const std::vector<int32_t> want = host_argmax(x, 4, kWidth);
  EXPECT_EQ(want, (std::vector<int32_t>{want[0], 70001, 0, static_cast<int32_t>(kWidth - 2)}));
  EXPECT_LT(want[0], 8);
  EXPECT_EQ(device_argmax(x, 4, kWidth), want);
}

TEST(DeviceArgmax, SkipsNaNsAsTheHostDoes) {
  constexpr int64_t kWidth = 20000;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(3 * kWidth);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) * 0.5f;
  // NaNs where each lane starts, and around the maxima; row 2 has a NaN at index 0 only.
  for (size_t i = 0; i < x.size(); i += 37) x[i] = nan;
  x[kWidth + 0] = nan;
  x[2 * kWidth] = nan;
  x[2 * kWidth + 1] = -1.f;
  const std::vector<int32_t> want = host_argmax(x, 3, kWidth);
  EXPECT_EQ(device_argmax(x, 3, kWidth), want);
}

// ---- Generation -----------------------------------------------------------------------------------

struct Outcome {
  GenerationResult result;
  std::vector<int32_t> context;
  std::vector<std::pair<int32_t, std::string>> calls;
};

// One generate() with a callback that records its calls and cancels after `cancel_after`.
// Pipelined decoding's depth: steps in flight and steps a submit ({0, 1}: synchronous).
struct Depth {
  int64_t in_flight = 0, per_submit = 1;
  std::string text() const {
    return std::to_string(in_flight) + " in flight, " + std::to_string(per_submit) + " a submit";
  }
};

Outcome run(Generator& g, const std::vector<int32_t>& prompt, GenerationOptions o, Depth depth,
            int cancel_after = -1) {
  o.decode_in_flight = depth.in_flight;
  o.decode_steps_per_submit = depth.per_submit;
  Outcome out;
  out.result = g.generate(prompt, o, [&](int32_t token, std::string_view text) {
    out.calls.emplace_back(token, std::string(text));
    return cancel_after < 0 || static_cast<int>(out.calls.size()) < cancel_after;
  });
  out.context = g.context();
  return out;
}

void expect_same(const Outcome& got, const Outcome& want, const std::string& what) {
  EXPECT_EQ(got.result.tokens, want.result.tokens) << what;
  EXPECT_EQ(got.result.text, want.result.text) << what;
  EXPECT_EQ(got.result.stop, want.result.stop) << what;
  EXPECT_EQ(got.calls, want.calls) << what;
  EXPECT_EQ(got.context, want.context) << what;
  EXPECT_EQ(got.result.stats.prompt_tokens, want.result.stats.prompt_tokens) << what;
  EXPECT_EQ(got.result.stats.prefill_steps, want.result.stats.prefill_steps) << what;
  EXPECT_EQ(got.result.stats.generated_tokens, want.result.stats.generated_tokens) << what;
}

GenerationOptions greedy(int64_t n) {
  GenerationOptions o;
  o.max_new_tokens = n;
  o.sampling.temperature = 0;
  return o;
}

// A conversation: turns fed one after the other to one generator.
struct Turn {
  std::vector<int32_t> prompt;
  GenerationOptions options;
  int cancel_after = -1;
};

std::vector<Outcome> converse(Generator& g, const std::vector<Turn>& turns, Depth depth) {
  g.reset();
  std::vector<Outcome> out;
  for (const Turn& t : turns) out.push_back(run(g, t.prompt, t.options, depth, t.cancel_after));
  return out;
}

// Steps in flight (and a submit) to compare with the synchronous path: from one to all of them,
// and several a submit (more than in flight: as many as in flight), on the toy model; the default on the larger ones (SwiftShader is slow).
constexpr auto kMost = static_cast<int64_t>(runtime::Program::kMaxReadsInFlight);
const std::vector<Depth> kEveryDepth{{1, 1}, {2, 1}, {3, 1}, {kMost, 1}, {2, 2}, {4, 4}, {kMost, 3}, {kMost, 4}, {2, 3}};
const std::vector<Depth> kDefaultDepth{{GenerationOptions{}.decode_in_flight, GenerationOptions{}.decode_steps_per_submit}};

// Every turn the same pipelined (with each number of steps in flight) as synchronously, and
// pipelined where it should be.
void expect_pipelining_changes_nothing(Generator& g, const std::vector<Turn>& turns, const std::string& what,
                                       const std::vector<Depth>& depths = kEveryDepth) {
  const std::vector<Outcome> sync = converse(g, turns, {0, 1});
  for (const Outcome& o : sync) EXPECT_FALSE(o.result.stats.pipelined) << what;
  for (const Depth& depth : depths) {
    const std::vector<Outcome> piped = converse(g, turns, depth);
    ASSERT_EQ(piped.size(), sync.size());
    for (size_t i = 0; i < sync.size(); ++i) {
      const std::string label = what + ", turn " + std::to_string(i) + ", " + depth.text();
      expect_same(piped[i], sync[i], label);
      EXPECT_EQ(piped[i].result.stats.pipelined, turns[i].options.max_new_tokens > 0) << label;
    }
  }
}

// Settings the device does not pick with: asked to keep steps in flight, the generator decodes
// one step at a time, exactly as synchronously (from a reset conversation).
void expect_on_the_host(Generator& g, const std::vector<int32_t>& prompt, const GenerationOptions& o,
                        const std::string& what) {
  g.reset();
  const Outcome a = run(g, prompt, o, {3, 1});
  EXPECT_FALSE(a.result.stats.pipelined) << what;
  g.reset();
  expect_same(a, run(g, prompt, o, {0, 1}), what);
}

// The first token of `tokens` at index >= 2 that did not occur before it: as an eos, it stops a
// run in the middle.
int32_t novel_token(const std::vector<int32_t>& tokens) {
  for (size_t k = 2; k < tokens.size(); ++k) {
    const auto end = tokens.begin() + static_cast<ptrdiff_t>(k);
    if (std::find(tokens.begin(), end, tokens[k]) == end) return tokens[k];
  }
  return tokens.back();
}

// The scenarios every model goes through: a free run, an eos in the middle then a next turn, a
// stop string then a next turn, a cancel then a next turn, chunked prefill, one token, and a last
// token exactly at the end of the context.
void check_model(Generator& g, const std::vector<int32_t>& prompt, const std::vector<int32_t>& next_prompt,
                 const std::string& what, const std::vector<Depth>& depths = kEveryDepth) {
  const Outcome free_run = run(g, prompt, greedy(20), {0, 1});
  g.reset();
  ASSERT_EQ(free_run.result.tokens.size(), 20u);
  expect_pipelining_changes_nothing(g, {{prompt, greedy(20)}}, what + ": free run", depths);

  GenerationOptions eos = greedy(20);
  eos.eos_ids = {novel_token(free_run.result.tokens)};
  expect_pipelining_changes_nothing(g, {{prompt, eos}, {next_prompt, greedy(8)}}, what + ": eos, then a next turn",
                                    depths);

  GenerationOptions stop = greedy(20);
  const std::string& text = free_run.result.text;
  if (text.size() > 8) stop.stop_strings = {text.substr(text.size() / 2, 2)};
  expect_pipelining_changes_nothing(g, {{prompt, stop}, {next_prompt, greedy(6)}},
                                    what + ": stop string, then a next turn", depths);

  expect_pipelining_changes_nothing(g, {{prompt, greedy(20), 5}, {next_prompt, greedy(5)}},
                                    what + ": cancelled, then a next turn", depths);

  GenerationOptions chunked = greedy(6);
  chunked.prefill_chunk = 3;
  expect_pipelining_changes_nothing(
      g, {{prompt, chunked}, {next_prompt, greedy(1)}, {prompt, greedy(0)}, {next_prompt, greedy(4)}},
      what + ": chunked prefill, one token, none", depths);

  // The context exactly full: the last token lands on its last position, and nothing is
  // submitted past it.
  const int64_t room =
      g.limits().max_seq - static_cast<int64_t>(prompt.size()) - static_cast<int64_t>(next_prompt.size()) - 4;
  expect_pipelining_changes_nothing(g, {{prompt, greedy(4)}, {next_prompt, greedy(room)}},
                                    what + ": context exactly full", depths);
  EXPECT_EQ(g.remaining(), 0) << what;
}

// The toy model's program, built once per suite: its next_token the argmax, or with
// `device_sampling` sample_token (with `device_penalty` sample_token_penalized).
template <bool device_sampling, bool device_penalty = false>
class ToySuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ToyModel model = test::toy_model(false, true, device_sampling, device_penalty);
    limits_ = model_limits(model.graph);
    program_ = std::make_unique<runtime::Program>(context(), std::move(model.graph), model.weights);
  }
  static void TearDownTestSuite() { program_.reset(); }
  Generator make() { return Generator(*program_, test::toy_tokenizer(), limits_); }
  static std::vector<int32_t> encode(const std::string& text) { return test::toy_tokenizer().encode(text); }

  static inline std::unique_ptr<runtime::Program> program_;
  static inline ModelLimits limits_;
};

class PipelinedToy : public ToySuite<false> {};

TEST_F(PipelinedToy, GivesExactlyTheSynchronousTokens) {
  EXPECT_TRUE(limits_.next_token);
  Generator g = make();
  check_model(g, encode("Hello world"), encode(" and again?"), "toy");
}

TEST_F(PipelinedToy, TheContextLimitErrorIsUnchanged) {
  Generator g = make();
  const auto prompt = encode("0123456789");
  for (int64_t in_flight : {0, 3}) {
    GenerationOptions o = greedy(test::toy::kMaxSeq - 9);
    o.decode_in_flight = in_flight;
    try {
      g.generate(prompt, o);
      FAIL() << "expected ContextFullError";
    } catch (const ContextFullError& e) {
      EXPECT_NE(std::string(e.what()).find("holds 128 tokens"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(g.context().empty());
  }
  GenerationOptions bad = greedy(4);
  bad.decode_in_flight = -1;
  EXPECT_THROW(g.generate(prompt, bad), std::invalid_argument);
  bad.decode_in_flight = static_cast<int64_t>(runtime::Program::kMaxReadsInFlight) + 1;
  EXPECT_THROW(g.generate(prompt, bad), std::invalid_argument);
  bad.decode_in_flight = 3;
  for (int64_t per_submit : {int64_t{0}, kMost + 1}) {
    bad.decode_steps_per_submit = per_submit;
    try {
      g.generate(prompt, bad);
      ADD_FAILURE() << per_submit << " steps a submit";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("decode_steps_per_submit must be in [1, 8]"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(g.context().empty());
}

TEST_F(PipelinedToy, OnlyGreedyDecodingWithoutPenaltyIsPipelined) {
  Generator g = make();
  const auto prompt = encode("Sampling");
  GenerationOptions sampled;
  sampled.max_new_tokens = 12;
  sampled.sampling.temperature = 0.8f;
  sampled.sampling.seed = 3;
  GenerationOptions penalized = greedy(12);
  penalized.sampling.repetition_penalty = 1.3f;
  for (const GenerationOptions& o : {sampled, penalized}) expect_on_the_host(g, prompt, o, "not greedy");
  // The negative control: the penalty changes greedy tokens, so a pipelined (penalty-blind) path
  // taken by mistake would show.
  g.reset();
  const Outcome plain = run(g, prompt, greedy(12), {3, 1});
  EXPECT_TRUE(plain.result.stats.pipelined);
  g.reset();
  EXPECT_NE(run(g, prompt, penalized, {3, 1}).result.tokens, plain.result.tokens);
}

TEST_F(PipelinedToy, ModelsWithoutNextTokenDecodeSynchronously) {
  test::ToyModel model = test::toy_model(false, false);
  const ModelLimits limits = model_limits(model.graph);
  EXPECT_FALSE(limits.next_token);
  runtime::Program program(context(), std::move(model.graph), model.weights);
  Generator without(program, test::toy_tokenizer(), limits);
  Generator with = make();
  const auto prompt = encode("No next token");
  const Outcome a = run(without, prompt, greedy(10), {3, 1});
  EXPECT_FALSE(a.result.stats.pipelined);
  expect_same(a, run(with, prompt, greedy(10), {3, 1}), "without next_token");
}

TEST_F(PipelinedToy, EveryPositionsLogitsGraphPipelinesToo) {
  test::ToyModel model = test::toy_model(true);
  const ModelLimits limits = model_limits(model.graph);
  runtime::Program program(context(), std::move(model.graph), model.weights);
  Generator all(program, test::toy_tokenizer(), limits);
  check_model(all, encode("Every position."), encode(" More."), "toy with all logits");
}

TEST(PipelinedDemo, GivesExactlyTheSynchronousTokens) {
  models::LoadOptions o;
  o.max_seq = 48;
  o.max_prefill = 16;
  models::BuiltModel m = models::load_hf(WGX_DEMO_MODEL, o);
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(WGX_DEMO_MODEL);
  const ModelLimits limits = model_limits(m.graph);
  ASSERT_TRUE(limits.next_token);
  runtime::Program program(context(), std::move(m.graph), m.weights);
  Generator g(program, tok, limits);
  const std::vector<int32_t> prompt = tok.encode("The meaning of life is");
  const std::vector<int32_t> next = tok.encode(" Also, a fortune:");
  check_model(g, prompt, next, "demo", kDefaultDepth);
  // The demo model's own eos, as `wgx run` uses it.
  GenerationOptions eos = greedy(14);
  eos.eos_ids = {tok.special_tokens().eos.value()};
  expect_pipelining_changes_nothing(g, {{prompt, eos}, {next, eos}}, "demo with its eos", kDefaultDepth);
}

TEST(PipelinedSynthetic, GivesExactlyTheSynchronousTokens) {
  models::LoadOptions o;
  o.max_seq = 56;
  o.max_prefill = 8;
  models::BuiltModel m = models::build_decoder(*models::synthetic_config("demo-tiny"), models::synthetic_weights(7), o);
  const ModelLimits limits = model_limits(m.graph);
  ASSERT_TRUE(limits.next_token);
  runtime::Program program(context(), std::move(m.graph), m.weights);
  // The demo tokenizer covers the synthetic vocabulary (512 of its 2048 ids) for the text.
  Generator g(program, tokenizer::Tokenizer::load(WGX_DEMO_MODEL), limits);
  Rng rng(11);
  std::vector<int32_t> prompt, next;
  for (int i = 0; i < 13; ++i) prompt.push_back(static_cast<int32_t>(rng.next() % 512));
  for (int i = 0; i < 5; ++i) next.push_back(static_cast<int32_t>(rng.next() % 512));
  check_model(g, prompt, next, "synthetic demo-tiny", kDefaultDepth);
}

// ---- Sampling on the device ----------------------------------------------------------------------

GenerationOptions drawn(int64_t n, uint64_t seed) {
  GenerationOptions o;
  o.max_new_tokens = n;
  o.sampling.temperature = 0.9f;
  o.sampling.top_k = 40;
  o.sampling.top_p = 0.95f;
  o.sampling.min_p = 0.02f;
  o.sampling.seed = seed;
  return o;
}

class DeviceSampling : public ToySuite<true> {};

// Replays a generation one step at a time from a reset state: the prompt, then each generated
// token but the last; `each(i, pos, logits)` gets the logits that token i was picked from, at the
// step's input_pos.
void replay(runtime::Program& p, const std::vector<int32_t>& prompt, const std::vector<int32_t>& tokens,
            const std::function<void(size_t i, int64_t pos, const std::vector<float>& logits)>& each) {
  p.reset_state();
  std::vector<int32_t> feed = prompt;
  int64_t pos = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    p.set_input<int32_t>("tokens", feed, {1, static_cast<int64_t>(feed.size())});
    p.set_sym("input_pos", pos);
    p.execute();
    each(i, pos, p.read_f32("logits"));
    pos += static_cast<int64_t>(feed.size());
    feed = {tokens[i]};
  }
}

// The generated tokens replayed one step at a time: each must be the reference's draw from that
// step's logits with the step's input_pos as the random stream's index (unless the draw lies
// within rounding of a boundary).
TEST_F(DeviceSampling, EveryTokenIsTheReferenceDrawOfItsStepsLogits) {
  ASSERT_TRUE(limits_.device_sampling);
  Generator g = make();
  const std::vector<int32_t> prompt = encode("On device");  // one prefill step
  const GenerationOptions o = drawn(40, 5);
  const GenerationResult r = g.generate(prompt, o);
  ASSERT_TRUE(r.stats.pipelined);
  ASSERT_TRUE(r.stats.drawn_on_device);
  ASSERT_EQ(r.tokens.size(), 40u);
  const ops::sampling::Words w = device_words(o.sampling);
  program_->set_input<int32_t>("sampling", w, {8});
  int checked = 0;
  replay(*program_, prompt, r.tokens, [&](size_t i, int64_t pos, const std::vector<float>& logits) {
    const auto want = ops::sampling::testing::reference_draw(logits, w, static_cast<uint32_t>(pos));
    if (want.margin >= 1e-4) {
      ++checked;
      EXPECT_EQ(r.tokens[i], want.token) << "position " << pos;
    }
  });
  EXPECT_GE(checked, 36);
  std::set<int32_t> distinct(r.tokens.begin(), r.tokens.end());
  EXPECT_GT(distinct.size(), 5u);  // drawn, not a greedy run
}

// A draw depends only on the logits, the settings and the position: every depth gives the same
// tokens, stops and context, over turns with an eos, a stop string and a cancel.
TEST_F(DeviceSampling, TheTokensAreTheSameAtEveryDepthAndAcrossTurns) {
  Generator g = make();
  const auto prompt = encode("Hello world");
  const auto next = encode(" and again?");
  const Outcome free_run = run(g, prompt, drawn(20, 9), {1, 1});
  GenerationOptions eos = drawn(20, 9);
  eos.eos_ids = {novel_token(free_run.result.tokens)};
  GenerationOptions stop = drawn(20, 10);
  if (free_run.result.text.size() > 8) stop.stop_strings = {free_run.result.text.substr(6, 2)};
  const std::vector<Turn> turns{{prompt, eos}, {next, drawn(8, 11)}, {prompt, stop}, {next, drawn(20, 12), 5}};
  const std::vector<Outcome> base = converse(g, turns, {1, 1});
  for (const Depth& depth : {Depth{3, 1}, Depth{kMost, 3}, Depth{2, 2}}) {
    const std::vector<Outcome> got = converse(g, turns, depth);
    for (size_t i = 0; i < turns.size(); ++i) {
      expect_same(got[i], base[i], "turn " + std::to_string(i) + ", " + depth.text());
      EXPECT_TRUE(got[i].result.stats.drawn_on_device);
    }
  }
  EXPECT_EQ(base[0].result.stop, StopReason::Eos);
  EXPECT_EQ(base[3].result.stop, StopReason::Cancelled);
}

TEST_F(DeviceSampling, SeedsGiveTheirOwnStreams) {
  Generator g = make();
  const auto prompt = encode("Seeds");
  const auto first = run(g, prompt, drawn(24, 21), {3, 1}).result.tokens;
  g.reset();
  EXPECT_EQ(run(g, prompt, drawn(24, 21), {3, 1}).result.tokens, first);
  g.reset();
  EXPECT_NE(run(g, prompt, drawn(24, 22), {3, 1}).result.tokens, first);
}

// top_k off or above the bound, a repetition penalty, or sample_on_device false: the host
// samples, one step at a time, exactly as it does synchronously. Greedy after a drawn run is the
// argmax again (the words are set every call: a stale draw would show).
TEST_F(DeviceSampling, SettingsTheDeviceCannotDrawStayOnTheHost) {
  Generator g = make();
  const auto prompt = encode("Host");
  GenerationOptions off = drawn(12, 3), big = drawn(12, 3), penalty = drawn(12, 3), host = drawn(12, 3);
  off.sampling.top_k = 0;
  big.sampling.top_k = ops::sampling::kMaxTopK + 1;
  penalty.sampling.repetition_penalty = 1.2f;
  host.sample_on_device = false;
  for (const GenerationOptions& o : {off, big, penalty, host}) expect_on_the_host(g, prompt, o, "on the host");
  g.reset();
  const Outcome sampled = run(g, prompt, drawn(12, 3), {3, 1});
  EXPECT_TRUE(sampled.result.stats.drawn_on_device);
  g.reset();
  const Outcome greedy_run = run(g, prompt, greedy(12), {3, 1});
  EXPECT_TRUE(greedy_run.result.stats.pipelined);
  EXPECT_FALSE(greedy_run.result.stats.drawn_on_device);
  g.reset();
  expect_same(greedy_run, run(g, prompt, greedy(12), {0, 1}), "greedy after drawn");
  EXPECT_NE(greedy_run.result.tokens, sampled.result.tokens);
}

// ---- A repetition penalty on the device -----------------------------------------------------------

class DevicePenalty : public ToySuite<true, true> {};

GenerationOptions with_penalty(GenerationOptions o, float penalty) {
  o.sampling.repetition_penalty = penalty;
  return o;
}

// Replayed one step at a time, each generated token (greedy and drawn, a penalty and an
// encouragement) is the reference's pick from that step's logits penalized over the context so
// far: the prompt and the tokens before it. The negative control: penalized over the generated
// tokens alone (the prompt left out of the seen set), the reference picks otherwise in many steps.
TEST_F(DevicePenalty, EveryTokenIsTheReferencePickOfItsPenalizedLogits) {
  using ops::sampling::testing::penalize;
  using ops::sampling::testing::reference_draw;
  ASSERT_TRUE(limits_.device_penalty);
  Generator g = make();
  const std::vector<int32_t> prompt = encode("Penalty, penalty");  // one prefill step
  int blind_total = 0;
  for (const float penalty : {1.8f, 0.6f}) {
    for (const bool greedy_pick : {true, false}) {
      const std::string what = std::string(greedy_pick ? "greedy" : "drawn") + ", penalty " + std::to_string(penalty);
      const GenerationOptions o = with_penalty(greedy_pick ? greedy(30) : drawn(30, 17), penalty);
      g.reset();
      const GenerationResult r = g.generate(prompt, o);
      ASSERT_TRUE(r.stats.pipelined) << what;
      EXPECT_EQ(r.stats.drawn_on_device, !greedy_pick) << what;
      ASSERT_EQ(r.tokens.size(), 30u) << what;
      const ops::sampling::Words w = device_words(o.sampling);
      program_->set_input<int32_t>("sampling", ops::sampling::greedy_words(), {8});  // its picks unused here
      int checked = 0;
      std::vector<int32_t> context = prompt, generated;
      replay(*program_, prompt, r.tokens, [&](size_t i, int64_t pos, const std::vector<float>& logits) {
        const auto at = static_cast<uint32_t>(pos);
        const auto want = reference_draw(penalize(logits, context, w), w, at);
        const auto blind = reference_draw(penalize(logits, generated, w), w, at);
        if (blind.token != want.token) ++blind_total;
        if (want.margin >= 1e-4) {
          ++checked;
          EXPECT_EQ(r.tokens[i], want.token) << what << ", position " << pos;
        }
        context.push_back(r.tokens[i]);
        generated.push_back(r.tokens[i]);
      });
      EXPECT_GE(checked, 26) << what;
    }
  }
  EXPECT_GE(blind_total, 20);  // 31 of the 120 steps
}

// Greedy with a penalty picks on the device what the host's sampler picks (the context's tokens
// penalized), at every depth, over turns that end with an eos, a stop string and a cancel while
// steps past the end were in flight (their picks joined the seen set, which the next turn
// writes again). The penalty changes the tokens (it is not ignored).
TEST_F(DevicePenalty, GreedyWithAPenaltyGivesTheHostsTokensAtEveryDepthAndAcrossTurns) {
  Generator g = make();
  const auto prompt = encode("Hello world");
  const auto next = encode(" and again?");
  const Outcome free_run = run(g, prompt, with_penalty(greedy(20), 1.5f), {0, 1});
  g.reset();
  EXPECT_NE(run(g, prompt, greedy(20), {3, 1}).result.tokens, free_run.result.tokens);
  GenerationOptions eos = with_penalty(greedy(20), 1.5f);
  eos.eos_ids = {novel_token(free_run.result.tokens)};
  GenerationOptions stop = with_penalty(greedy(20), 1.5f);
  if (free_run.result.text.size() > 8) stop.stop_strings = {free_run.result.text.substr(6, 2)};
  expect_pipelining_changes_nothing(g,
                                    {{prompt, eos},
                                     {next, with_penalty(greedy(8), 1.5f)},
                                     {prompt, stop},
                                     {next, with_penalty(greedy(20), 1.5f), 5},
                                     {next, with_penalty(greedy(10), 0.7f)}},
                                    "greedy with a penalty");
}

// The seen set after a turn cancelled with steps in flight holds their picks too (so a stale set
// would be wrong); the next turn writes the context's before its first pick, so after a one-token
// turn (nothing past it submitted) the set is exactly the context's tokens.
TEST_F(DevicePenalty, EachTurnStartsFromTheContextsSeenSet) {
  Generator g = make();
  auto seen_now = [&] {
    const std::vector<uint8_t> bytes = program_->read_state_storage("seen_tokens");
    std::vector<int32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    return words;
  };
  const Outcome cancelled = run(g, encode("Stale picks"), with_penalty(drawn(30, 4), 1.4f), {kMost, 4}, 3);
  ASSERT_EQ(cancelled.result.stop, StopReason::Cancelled);
  EXPECT_NE(seen_now(), seen_words(g.context(), limits_.vocab)) << "no step ran past the cancel";
  const Outcome one = run(g, encode(" next"), with_penalty(drawn(1, 5), 1.4f), {kMost, 4});
  ASSERT_TRUE(one.result.stats.pipelined);
  EXPECT_EQ(seen_now(), seen_words(g.context(), limits_.vocab));
}

// A model without the seen set (converted before it existed) leaves a penalty to the host, as
// DeviceSampling.SettingsTheDeviceCannotDrawStayOnTheHost shows; with it, only top_k off or past
// the bound and sample_on_device false do.
TEST_F(DevicePenalty, OnlySettingsTheDeviceCannotDrawStayOnTheHost) {
  Generator g = make();
  const auto prompt = encode("Host");
  GenerationOptions off = with_penalty(drawn(12, 3), 1.2f), big = off, host = off;
  off.sampling.top_k = 0;
  big.sampling.top_k = ops::sampling::kMaxTopK + 1;
  host.sample_on_device = false;
  for (const GenerationOptions& o : {off, big, host}) expect_on_the_host(g, prompt, o, "on the host");
  g.reset();
  EXPECT_TRUE(run(g, prompt, with_penalty(drawn(12, 3), 1.2f), {3, 1}).result.stats.drawn_on_device);
}

}  // namespace
}  // namespace wgx::llm
