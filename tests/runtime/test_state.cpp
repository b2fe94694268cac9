// Persistent state: a mutable buffer accumulates across executions (written in place or through
// a copy), mutation-only values are not outputs, reset clears it, write_state replaces it (write_state_at a part). The negative control, a fresh
// program per step, must diverge: it proves the accumulation is real.
#include <algorithm>
#include <string>
#include <vector>

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

// acc <- acc + x (acc_first: acc is input 0, which lets the add write into the buffer itself).
graph::Graph accumulator(GraphBuilder& b, bool acc_first, bool also_output) {
  auto acc = b.mutable_buffer("acc", DType::f32, {5, 7});
  auto x = b.input("x", DType::f32, {5, 7});
  auto sum = acc_first ? b.op1("add", {acc, x}) : b.op1("add", {x, acc});
  b.mutate(acc, sum);
  if (also_output) b.output("sum", sum);
  b.output("twice", b.op1("add", {x, x}));
  return b.build();
}

class State : public ::testing::TestWithParam<bool> {};

TEST_P(State, AccumulatesAcrossExecutionsAndResets) {
  GraphBuilder b;
  Program prog(shared_context(), accumulator(b, GetParam(), false), b.weights());
  EXPECT_EQ(prog.mutation_copies(), 1u);  // add reads acc: its result is copied back
  std::vector<float> total(35, 0.f);
  for (int step = 0; step < 4; ++step) {
    const auto x = random_floats(35, 100 + step);
    for (size_t i = 0; i < 35; ++i) total[i] += x[i];
    prog.set_input<float>("x", x, {5, 7});
    prog.execute();
  }
  EXPECT_TRUE(close(prog.read_state_f32("acc"), total));
  EXPECT_THROW(prog.read_f32("acc"), std::invalid_argument);  // mutation-only: not an output
  prog.reset_state();
  EXPECT_EQ(prog.read_state_f32("acc"), std::vector<float>(35, 0.f));
}

INSTANTIATE_TEST_SUITE_P(AccumulatorOperandOrder, State, ::testing::Bool(),
                         [](const auto& tp) { return tp.param ? "AccFirst" : "AccSecond"; });

TEST(State, AValueThatDoesNotReadTheBufferIsWrittenIntoItsStorage) {
  GraphBuilder b;
  auto last = b.mutable_buffer("last", DType::f32, {3, 11});
  auto x = b.input("x", DType::f32, {3, 11});
  b.mutate(last, b.op1("add", {x, x}));
  b.output("y", b.op1("mul", {x, x}));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.mutation_copies(), 0u);  // aliased: the add writes into "last" itself
  const auto vx = random_floats(33, 12);
  prog.set_input<float>("x", vx, {3, 11});
  prog.execute();
  std::vector<float> want(vx);
  for (auto& v : want) v *= 2;
  EXPECT_TRUE(close(prog.read_state_f32("last"), want));
}

TEST(State, AMutationThatIsAlsoAnOutputIsReturned) {
  GraphBuilder b;
  Program prog(shared_context(), accumulator(b, true, true), b.weights());
  const auto x = random_floats(35, 7);
  prog.set_input<float>("x", x, {5, 7});
  prog.execute();
  prog.execute();
  std::vector<float> want(x);
  for (auto& v : want) v *= 2;
  EXPECT_TRUE(close(prog.read_f32("sum"), want));
}

// write_state replaces the whole buffer before the next execute, which then accumulates onto it;
// a wrong size or an unknown name is refused, the buffer unchanged.
TEST(State, WriteStateSetsTheBufferForTheNextExecute) {
  GraphBuilder b;
  Program prog(shared_context(), accumulator(b, true, false), b.weights());
  const auto x = random_floats(35, 3);
  prog.set_input<float>("x", x, {5, 7});
  prog.execute();
  const auto start = random_floats(35, 4);
  prog.write_state<float>("acc", start);
  EXPECT_EQ(prog.read_state_f32("acc"), start);
  prog.execute();
  std::vector<float> want(start);
  for (size_t i = 0; i < want.size(); ++i) want[i] += x[i];
  EXPECT_TRUE(close(prog.read_state_f32("acc"), want));
  try {
    prog.write_state<float>("acc", std::vector<float>(34, 1.f));
    ADD_FAILURE() << "a short write was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'acc' (f32[5, 7]) needs 140 bytes, got 136"), std::string::npos) << e.what();
  }
  EXPECT_THROW(prog.write_state<float>("nope", start), std::invalid_argument);
  EXPECT_TRUE(close(prog.read_state_f32("acc"), want));
}

// write_state_at replaces a run of elements, the rest kept; a run past the end is refused, the
// buffer unchanged.
TEST(State, WriteStateAtSetsPartOfTheBuffer) {
  GraphBuilder b;
  Program prog(shared_context(), accumulator(b, true, false), b.weights());
  const auto start = random_floats(35, 5);
  prog.write_state<float>("acc", start);
  const auto part = random_floats(9, 6);
  prog.write_state_at<float>("acc", 20, part);
  std::vector<float> want(start);
  std::copy(part.begin(), part.end(), want.begin() + 20);
  EXPECT_EQ(prog.read_state_f32("acc"), want);
  prog.write_state_at<float>("acc", 35, std::vector<float>{});  // nothing, at the end
  try {
    prog.write_state_at<float>("acc", 30, part);
    ADD_FAILURE() << "a run past the end was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds 140 bytes: 36 from element 30 do not fit"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(prog.write_state_at<float>("acc", 36, std::vector<float>{}), std::invalid_argument);
  EXPECT_EQ(prog.read_state_f32("acc"), want);
}

// copy_to_state: one program's output becomes another's state on the GPU (Whisper's encoder ->
// decoder), which the next execute of the target then reads; a state never copied stays zero
// (the control), and a buffer of another size is refused.
TEST(State, CopyToStateHandsAnOutputToAnotherProgram) {
  GraphBuilder a;
  auto x = a.input("x", DType::f32, {5, 7});
  a.output("twice", a.op1("add", {x, x}));
  a.output("short", a.op1("slice", {x}, {{"dim", 1}, {"end", 6}}));
  Program source(shared_context(), a.build(), a.weights());
  GraphBuilder t;
  Program target(shared_context(), accumulator(t, true, true), t.weights());
  const auto xs = random_floats(35, 5);
  source.set_input<float>("x", xs, {5, 7});
  source.execute();
  const std::vector<float> zeros(35, 0.f);
  EXPECT_EQ(target.read_state_f32("acc"), zeros);  // control: nothing copied yet
  source.copy_to_state("twice", target, "acc");
  std::vector<float> want(35);
  for (size_t i = 0; i < want.size(); ++i) want[i] = 2 * xs[i];
  EXPECT_TRUE(close(target.read_state_f32("acc"), want));
  target.set_input<float>("x", xs, {5, 7});
  target.execute();
  for (size_t i = 0; i < want.size(); ++i) want[i] += xs[i];
  EXPECT_TRUE(close(target.read_f32("sum"), want));
  try {
    source.copy_to_state("short", target, "acc");
    ADD_FAILURE() << "an output of another size was copied";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit mutable buffer 'acc'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(source.copy_to_state("twice", target, "nope"), std::invalid_argument);
}

// copy_state: one program's state becomes another's (beam search forking a hypothesis's
// caches); the source keeps its own, the next execute of each goes on from its copy, and a
// buffer of another size is refused.
TEST(State, CopyStateForksAState) {
  GraphBuilder a, c;
  Program source(shared_context(), accumulator(a, true, true), a.weights());
  Program fork(shared_context(), accumulator(c, true, true), c.weights());
  const auto x1 = random_floats(35, 6), x2 = random_floats(35, 7);
  source.set_input<float>("x", x1, {5, 7});
  source.execute();
  const std::vector<float> zeros(35, 0.f);
  EXPECT_EQ(fork.read_state_f32("acc"), zeros);  // control: nothing copied yet
  source.copy_state("acc", fork, "acc");
  EXPECT_TRUE(close(fork.read_state_f32("acc"), x1));
  fork.set_input<float>("x", x2, {5, 7});
  fork.execute();
  source.set_input<float>("x", x1, {5, 7});
  source.execute();
  std::vector<float> forked(35), kept(35);
  for (size_t i = 0; i < 35; ++i) {
    forked[i] = x1[i] + x2[i];
    kept[i] = 2 * x1[i];
  }
  EXPECT_TRUE(close(fork.read_state_f32("acc"), forked));
  EXPECT_TRUE(close(source.read_state_f32("acc"), kept));
  GraphBuilder d;
  auto small = d.mutable_buffer("small", DType::f32, {5, 6});
  d.mutate(small, d.op1("add", {small, d.input("x", DType::f32, {5, 6})}));
  Program other(shared_context(), d.build(), d.weights());
  try {
    source.copy_state("acc", other, "small");
    ADD_FAILURE() << "a buffer of another size was copied";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit mutable buffer 'small'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(source.copy_state("acc", fork, "nope"), std::invalid_argument);
}

TEST(State, FreshProgramPerStepDiverges) {
  // Negative control: without the persistent buffer carrying over, the result is only the last x.
  std::vector<float> persistent, fresh;
  {
    GraphBuilder b;
    Program prog(shared_context(), accumulator(b, true, true), b.weights());
    for (int step = 0; step < 3; ++step) {
      prog.set_input<float>("x", random_floats(35, 200 + step), {5, 7});
      prog.execute();
    }
    persistent = prog.read_f32("sum");
  }
  for (int step = 0; step < 3; ++step) {
    GraphBuilder b;
    Program prog(shared_context(), accumulator(b, true, true), b.weights());
    prog.set_input<float>("x", random_floats(35, 200 + step), {5, 7});
    prog.execute();
    fresh = prog.read_f32("sum");
  }
  EXPECT_FALSE(close(persistent, fresh));
}

}  // namespace
}  // namespace wgx::runtime
