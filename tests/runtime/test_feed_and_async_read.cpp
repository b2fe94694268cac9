// Host work off the critical path: feed_from (an output copied into an input on the device at the
// end of every execute), read_async (outputs collected later while more executes are submitted)
// and resize hooks that rerun only for nodes whose SymInts changed, several steps in one submit
// (execute_steps), and a step recorded ahead (prepare). Each behaviour has a negative control
// that would pass if the mechanism did nothing.
#include <deque>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

// next = sum(tokens) + 1, an i32 [1, 1] shaped like a one-token "tokens" [1, seq].
struct Counter {
  GraphBuilder b;
  graph::Graph graph;
  Counter() {
    const auto seq = b.sym("seq", 1, 8);
    const auto tokens = b.input("tokens", DType::i32, {1, seq});
    const auto sum = b.op1("sum", {tokens}, {{"dims", std::vector<int64_t>{1}}, {"keepdim", true}});
    b.output("next", b.op1("add", {sum, b.scalar_int(1)}));
    b.output("sum_f", b.op1("to_copy", {sum}, {{"dtype", "f32"}}));
    b.output("tokens_view", b.op1("reshape", {tokens}, {{"shape", graph::Shape{seq}}}));
    graph = b.build();
  }
};

std::vector<int32_t> next_of(const Program& p) {
  const std::vector<float> v = p.read_f32("next");
  return {v.begin(), v.end()};
}

TEST(Feed, TheNextExecuteReadsWhatTheLastProduced) {
  Counter c;
  Program p(shared_context(), c.graph, c.b.weights());
  const std::vector<int32_t> prompt{1, 2, 3};
  p.set_input<int32_t>("tokens", prompt, {1, 3});
  p.feed_from("tokens", "next");
  EXPECT_EQ(p.feeding("tokens"), std::optional<std::string>("next"));
  p.execute();  // reads the prompt: 1 + 2 + 3 + 1
  EXPECT_EQ(next_of(p), std::vector<int32_t>{7});
  EXPECT_EQ(p.output_shape("tokens_view"), (std::vector<int64_t>{3}));
  // Each execute now reads the one token the last produced: 7 -> 8 -> 9 -> 10.
  for (int32_t want = 8; want <= 10; ++want) {
    p.execute();
    EXPECT_EQ(next_of(p), std::vector<int32_t>{want});
    EXPECT_EQ(p.output_shape("tokens_view"), (std::vector<int64_t>{1}));  // seq was set to 1
  }
  // set_input ends the feed: the host's token is read, every time.
  const std::vector<int32_t> host{100};
  p.set_input<int32_t>("tokens", host, {1, 1});
  EXPECT_EQ(p.feeding("tokens"), std::nullopt);
  for (int i = 0; i < 2; ++i) {
    p.execute();
    EXPECT_EQ(next_of(p), std::vector<int32_t>{101});
  }
}

TEST(Feed, WithoutItTheInputKeepsTheHostValue) {  // the negative control
  Counter c;
  Program p(shared_context(), c.graph, c.b.weights());
  const std::vector<int32_t> prompt{1, 2, 3};
  p.set_input<int32_t>("tokens", prompt, {1, 3});
  for (int i = 0; i < 3; ++i) {
    p.execute();
    EXPECT_EQ(next_of(p), std::vector<int32_t>{7});
  }
  // stop_feed likewise: the value fed last stays, and no new feed happens.
  p.feed_from("tokens", "next");
  p.execute();  // 7, and feeds 7
  p.stop_feed("tokens");
  p.execute();  // 8, feeds nothing
  p.execute();
  EXPECT_EQ(next_of(p), std::vector<int32_t>{8});
}

TEST(Feed, ASymIntChangedUnderAFedInputIsAnError) {
  Counter c;
  Program p(shared_context(), c.graph, c.b.weights());
  const std::vector<int32_t> prompt{1, 2};
  p.set_input<int32_t>("tokens", prompt, {1, 2});
  p.feed_from("tokens", "next");
  p.execute();
  p.set_sym("seq", 4);  // would read three words nobody wrote
  try {
    p.execute();
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'tokens' is fed from 'next'"), std::string::npos) << e.what();
  }
  p.set_sym("seq", 1);  // back to what the feed wrote: fine again
  p.execute();
  EXPECT_EQ(next_of(p), std::vector<int32_t>{5});
}

TEST(Feed, MismatchesAreClearErrors) {
  Counter c;
  Program p(shared_context(), c.graph, c.b.weights());
  auto fails = [&](std::string_view in, std::string_view out, const std::string& says) {
    try {
      p.feed_from(in, out);
      ADD_FAILURE() << "feed_from(" << in << ", " << out << ") should have thrown";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  fails("nope", "next", "no input named 'nope'");
  fails("tokens", "nope", "no output named 'nope'");
  fails("tokens", "sum_f", "the input is i32, the output f32");
  fails("tokens", "tokens_view", "the input has rank 2, the output 1");
  EXPECT_EQ(p.feeding("tokens"), std::nullopt);  // nothing armed by the failures

  GraphBuilder b;
  const auto seq = b.sym("seq", 1, 4);
  const auto x = b.input("x", DType::f32, {2, seq});
  const auto big = b.input("big", DType::f32, {2, 8});
  b.output("same", b.op1("reshape", {x}, {{"shape", graph::Shape{2, seq}}}));
  b.output("wide", b.op1("add", {big, big}));
  b.output("three", b.op1("add", {b.input("t", DType::f32, {3, 4}), b.scalar(1.0)}));
  Program q(shared_context(), b.build(), b.weights());
  try {
    q.feed_from("x", "wide");
    ADD_FAILURE() << "a larger output must not feed a smaller input";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds up to 64 bytes, the input's storage 32"), std::string::npos)
        << e.what();
  }
  try {
    q.feed_from("x", "three");
    ADD_FAILURE() << "a fixed dim must match";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dim 0 is fixed at 2, the output's is 3"), std::string::npos) << e.what();
  }
  try {
    q.feed_from("x", "same");
    ADD_FAILURE() << "a view of the input shares its storage";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shares the input's storage"), std::string::npos) << e.what();
  }
}

// acc <- acc + x; the output is the new acc.
graph::Graph accumulator(GraphBuilder& b) {
  const auto acc = b.mutable_buffer("acc", DType::f32, {3, 5});
  const auto x = b.input("x", DType::f32, {3, 5});
  const auto sum = b.op1("add", {acc, x});
  b.mutate(acc, sum);
  b.output("acc", sum);
  b.output("step", b.op1("mul", {x, x}));
  return b.build();
}

TEST(AsyncRead, SeveralStepsInFlightGiveWhatSynchronousReadsGive) {
  GraphBuilder b;
  const graph::Graph g = accumulator(b);
  constexpr int kSteps = 9;
  std::vector<std::vector<float>> sync_acc, sync_step;
  {
    Program p(shared_context(), g, b.weights());
    for (int i = 0; i < kSteps; ++i) {
      p.set_input<float>("x", random_floats(15, 40 + i), {3, 5});
      p.execute();
      sync_acc.push_back(p.read_f32("acc"));
      sync_step.push_back(p.read_f32("step"));
    }
  }
  for (size_t in_flight : {size_t{1}, size_t{3}, Program::kMaxReadsInFlight}) {
    Program p(shared_context(), g, b.weights());
    std::deque<std::pair<AsyncRead, AsyncRead>> reads;
    std::vector<std::vector<float>> got_acc, got_step;
    for (int i = 0; i < kSteps; ++i) {
      p.set_input<float>("x", random_floats(15, 40 + i), {3, 5});
      reads.emplace_back(p.read_async("acc"), p.read_async("step"));
      p.execute();
      if (reads.size() == in_flight) {
        got_acc.push_back(reads.front().first.f32());
        got_step.push_back(reads.front().second.f32());
        reads.pop_front();
      }
    }
    for (; !reads.empty(); reads.pop_front()) {
      got_acc.push_back(reads.front().first.f32());
      EXPECT_EQ(reads.front().first.shape(), (std::vector<int64_t>{3, 5}));
      got_step.push_back(reads.front().second.f32());
    }
    ASSERT_EQ(got_acc.size(), sync_acc.size());
    for (int i = 0; i < kSteps; ++i) {
      EXPECT_EQ(got_acc[i], sync_acc[i]) << "step " << i << ", " << in_flight << " in flight";
      EXPECT_EQ(got_step[i], sync_step[i]) << "step " << i << ", " << in_flight << " in flight";
    }
  }
}

TEST(AsyncRead, BecomesReadyWithoutBlockingAndKeepsItsValue) {
  GraphBuilder b;
  Program p(shared_context(), accumulator(b), b.weights());
  const auto x = random_floats(15, 3);
  p.set_input<float>("x", x, {3, 5});
  const AsyncRead r = p.read_async("step");
  EXPECT_FALSE(r.ready());  // nothing submitted yet
  p.execute();
  for (int polls = 0; !r.ready(); ++polls) ASSERT_LT(polls, 1000000) << "never became ready";
  std::vector<float> want(15);
  for (size_t i = 0; i < 15; ++i) want[i] = x[i] * x[i];
  EXPECT_TRUE(close(r.f32(), want));
  EXPECT_TRUE(close(r.f32(), want));  // taken once, kept
  const AsyncRead copy = r;
  EXPECT_TRUE(close(copy.f32(), want));
}

TEST(AsyncRead, MisuseIsAClearError) {
  GraphBuilder b;
  Program p(shared_context(), accumulator(b), b.weights());
  p.set_input<float>("x", random_floats(15, 3), {3, 5});
  EXPECT_THROW(p.read_async("nope"), std::invalid_argument);
  const AsyncRead early = p.read_async("acc");
  try {
    early.f32();
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no execute() has run since read_async()"), std::string::npos) << e.what();
  }
  p.execute();
  EXPECT_THROW(early.i32(), std::logic_error);  // an f32 output
  EXPECT_EQ(early.f32().size(), 15u);
  // Outstanding reads are bounded; dropping one frees its staging buffer.
  std::vector<AsyncRead> held;
  for (size_t i = 0; i < Program::kMaxReadsInFlight; ++i) held.push_back(p.read_async("step"));
  EXPECT_THROW(p.read_async("step"), std::logic_error);
  EXPECT_NO_THROW(p.read_async("acc"));  // another output has its own
  p.execute();
  held.pop_back();
  const AsyncRead again = p.read_async("step");
  p.execute();
  EXPECT_EQ(again.f32().size(), 15u);
  held.clear();  // dropped uncollected: their maps are cancelled
  // A read dropped before any execute is simply not filled.
  { const AsyncRead dropped = p.read_async("step"); }
  const AsyncRead kept = p.read_async("step");
  p.execute();
  EXPECT_EQ(kept.f32().size(), 15u);
}

TEST(AsyncRead, OutlivingItsProgramIsAnErrorNotACrash) {
  GraphBuilder b;
  const graph::Graph g = accumulator(b);
  AsyncRead taken, pending;
  {
    Program p(shared_context(), g, b.weights());
    p.set_input<float>("x", random_floats(15, 3), {3, 5});
    taken = p.read_async("acc");
    pending = p.read_async("step");
    p.execute();
    EXPECT_EQ(taken.f32().size(), 15u);
  }
  EXPECT_EQ(taken.f32().size(), 15u);  // taken while the program lived
  EXPECT_THROW(pending.f32(), std::logic_error);
}

TEST(Resize, OnlyNodesThatSeeAChangedSymIntRerun) {
  GraphBuilder b;
  const auto pos = b.sym_value(b.sym("pos", 0, 100));
  const auto seq = b.sym("seq", 1, 4);
  const auto x = b.input("x", DType::f32, {seq, 8});
  const auto twice = b.op1("add", {x, x});    // sees seq
  const auto fixed = b.input("w", DType::f32, {8});
  const auto w2 = b.op1("mul", {fixed, fixed});  // sees no SymInt
  const auto shifted = b.op1("add", {twice, pos});  // sees seq and pos
  b.output("y", b.op1("add", {shifted, w2}));  // sees seq
  Program p(shared_context(), b.build(), b.weights());
  const auto vx = random_floats(16, 5), vw = random_floats(8, 6);
  p.set_input<float>("x", vx, {2, 8});
  p.set_input<float>("w", vw, {8});
  auto want = [&](int64_t ps) {
    std::vector<float> y(16);
    for (size_t i = 0; i < 16; ++i) y[i] = 2 * vx[i] + static_cast<float>(ps) + vw[i % 8] * vw[i % 8];
    return y;
  };
  p.set_sym("pos", 3);
  p.execute();
  const size_t first = p.resize_count();
  EXPECT_EQ(first, 4u);  // every node once
  EXPECT_TRUE(close(p.read_f32("y"), want(3)));
  p.execute();
  EXPECT_EQ(p.resize_count(), first);  // nothing changed
  p.set_sym("pos", 9);
  p.execute();
  EXPECT_EQ(p.resize_count(), first + 1);  // only the node with the Sym input
  EXPECT_TRUE(close(p.read_f32("y"), want(9)));
  p.set_input<float>("x", vx, {2, 8});  // the same shape: nothing to rerun
  p.execute();
  EXPECT_EQ(p.resize_count(), first + 1);
}

// A decode loop in miniature: next = sum(tokens) + input_pos + 1 (the position through a Sym
// input, which its node uploads in its resize hook), fed back into "tokens"; and a state that
// keeps every step's token at its position (update_cache, whose params hold the position).
struct Stepper {
  GraphBuilder b;
  graph::Graph graph;
  static constexpr int64_t kRows = 16;
  Stepper() {
    const auto seq = b.sym("seq", 1, 4);
    const auto pos = b.sym_value(b.sym("input_pos", 0, kRows - 1));
    const auto tokens = b.input("tokens", DType::i32, {1, seq});
    const auto sum = b.op1("sum", {tokens}, {{"dims", std::vector<int64_t>{1}}, {"keepdim", true}});
    b.output("next", b.op1("add", {b.op1("add", {sum, pos}), b.scalar_int(1)}));
    const auto cache = b.mutable_buffer("cache", DType::f32, {1, 1, kRows, 1});
    const auto value = b.op1("reshape", {b.op1("to_copy", {tokens}, {{"dtype", "f32"}})}, {{"shape", graph::Shape{1, seq, 1, 1}}});
    b.mutate(cache, b.op1("update_cache", {cache, value, pos}));
    graph = b.build();
  }
};

// What the steps give: the prompt at position 0, then `steps` decode steps from position
// prompt.size(), each a read of "next"; the cache after them.
struct Stepped {
  std::vector<int32_t> next;
  std::vector<float> cache;
};

// The host's own account of the same: each step's token is the last one's next.
Stepped expected(const std::vector<int32_t>& prompt, int steps) {
  Stepped e;
  e.cache.assign(Stepper::kRows, 0.0f);
  int32_t sum = 0;
  for (size_t i = 0; i < prompt.size(); ++i) {
    sum += prompt[i];
    e.cache[i] = static_cast<float>(prompt[i]);
  }
  int32_t token = sum + 1;  // the prompt's step at position 0
  e.next.push_back(token);
  for (int k = 0; k < steps; ++k) {
    const auto pos = static_cast<int32_t>(prompt.size()) + k;
    e.cache[static_cast<size_t>(pos)] = static_cast<float>(token);
    token = token + pos + 1;
    e.next.push_back(token);
  }
  return e;
}

// The prompt, then `steps` decode steps, `per_submit` of them at a time (execute_steps).
Stepped run_steps(const RuntimeOptions& options, const std::vector<int32_t>& prompt, int steps, int per_submit) {
  Stepper s;
  Program p(shared_context(), s.graph, s.b.weights(), options);
  p.set_input<int32_t>("tokens", prompt, {1, static_cast<int64_t>(prompt.size())});
  p.set_sym("input_pos", 0);
  p.feed_from("tokens", "next");
  std::vector<AsyncRead> reads{p.read_async("next")};
  p.execute();
  Stepped got;
  got.next.push_back(reads.back().i32().at(0));
  reads.clear();
  const auto start = static_cast<int64_t>(prompt.size());
  for (int done = 0; done < steps;) {
    const int n = std::min(per_submit, steps - done);
    p.set_sym("input_pos", start + done);
    reads.push_back(p.read_async("next"));
    p.execute_steps(n, [&](int k) {
      p.set_sym("input_pos", start + done + k);
      reads.push_back(p.read_async("next"));
    });
    for (const AsyncRead& r : reads) got.next.push_back(r.i32().at(0));
    reads.clear();
    done += n;
  }
  got.cache = p.read_state_f32("cache");
  return got;
}

// Several steps in one submit give what one step a submit gives: each step's position reaches
// its params (update_cache's row) and its Sym input (next) in order with the steps, and each
// read holds its own step's value. Negative control: with the later steps' params and uploads
// as queue writes (recorded_params = off, which land before the command buffer runs), the same
// check fails.
TEST(ExecuteSteps, GiveWhatOneStepASubmitGives) {
  const std::vector<int32_t> prompt{1, 2, 3};
  constexpr int kSteps = 11;
  const Stepped want = expected(prompt, kSteps);
  for (int per_submit : {1, 2, 4, 8}) {
    const Stepped got = run_steps({}, prompt, kSteps, per_submit);
    EXPECT_EQ(got.next, want.next) << per_submit << " steps a submit";
    EXPECT_EQ(got.cache, want.cache) << per_submit << " steps a submit";
  }
  const Stepped broken = run_steps({{"recorded_params", "off"}}, prompt, kSteps, 4);
  EXPECT_NE(broken.next, want.next);
  EXPECT_NE(broken.cache, want.cache);
}

// A throw before a later step submits nothing: the reads of the steps recorded fail, and the
// params those steps staged (never uploaded) do not linger: the next execute runs right.
TEST(ExecuteSteps, AThrowBeforeALaterStepSubmitsNothing) {
  Stepper s;
  Program p(shared_context(), s.graph, s.b.weights());
  const std::vector<int32_t> prompt{4, 5};
  p.set_input<int32_t>("tokens", prompt, {1, 2});
  p.set_sym("input_pos", 0);
  p.execute();
  p.feed_from("tokens", "next");
  p.set_sym("input_pos", 2);
  const AsyncRead first = p.read_async("next");
  try {
    p.execute_steps(3, [&](int k) {
      p.set_sym("input_pos", 2 + k);
      if (k == 2) throw std::runtime_error("stop here");
    });
    FAIL() << "expected the throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "stop here");
  }
  EXPECT_THROW(first.i32(), std::runtime_error);
  // Nothing ran: the cache holds the prompt only, and a new step from the host's token is right.
  std::vector<float> cache(Stepper::kRows, 0.0f);
  cache[0] = 4;
  cache[1] = 5;
  EXPECT_EQ(p.read_state_f32("cache"), cache);
  const std::vector<int32_t> token{10};
  p.set_input<int32_t>("tokens", token, {1, 1});
  p.set_sym("input_pos", 2);
  p.execute();
  EXPECT_EQ(next_of(p), std::vector<int32_t>{10 + 2 + 1});
  cache[2] = 10;
  EXPECT_EQ(p.read_state_f32("cache"), cache);
  EXPECT_THROW(p.execute_steps(0, {}), std::invalid_argument);
  EXPECT_THROW(p.execute_steps(2, {}), std::invalid_argument);
}

// prepare() records the next step while the last runs; the host then picks the token (as a
// sampled decode does), writes it and executes: the same values as recording it then, and the
// prepared recording is what ran. A SymInt changed after prepare() (the negative control: the
// recording would write the cache row at the old position) or an input of another shape (the
// first step after the prompt) makes execute() record anew, and the values are still right.
TEST(Prepare, RecordedAheadGivesWhatExecuteGives) {
  Stepper s;
  Program p(shared_context(), s.graph, s.b.weights());
  Program ref(shared_context(), s.graph, s.b.weights());
  const std::vector<int32_t> prompt{1, 2, 3};
  for (Program* q : {&p, &ref}) {
    q->set_input<int32_t>("tokens", prompt, {1, 3});
    q->set_sym("input_pos", 0);
    q->execute();
  }
  int64_t pos = 3;
  for (int step = 0; step < 6; ++step, ++pos) {
    // The host's pick from the last step's output, then the step at `pos`.
    const std::vector<int32_t> token{next_of(ref).at(0) % 7 + 1};
    ASSERT_EQ(next_of(p), next_of(ref)) << "step " << step;
    p.set_sym("input_pos", step == 4 ? pos + 1 : pos);  // step 4 prepares the wrong position
    p.prepare();
    if (step == 4) p.set_sym("input_pos", pos);
    p.set_input<int32_t>("tokens", token, {1, 1});
    p.execute();
    // Step 0 was prepared while "tokens" still held the prompt (seq 3): recorded anew as well.
    EXPECT_EQ(p.last_execute_was_prepared(), step != 0 && step != 4) << "step " << step;
    ref.set_input<int32_t>("tokens", token, {1, 1});
    ref.set_sym("input_pos", pos);
    ref.execute();
    EXPECT_FALSE(ref.last_execute_was_prepared());
  }
  EXPECT_EQ(next_of(p), next_of(ref));
  EXPECT_EQ(p.read_state_f32("cache"), ref.read_state_f32("cache"));
  // An input of another shape after prepare(): recorded anew.
  p.set_sym("input_pos", pos);
  p.prepare();
  const std::vector<int32_t> two{4, 5};
  p.set_input<int32_t>("tokens", two, {1, 2});
  p.execute();
  EXPECT_FALSE(p.last_execute_was_prepared());
  EXPECT_EQ(next_of(p), std::vector<int32_t>{4 + 5 + static_cast<int32_t>(pos) + 1});
}

}  // namespace
}  // namespace wgx::runtime
