// Program behaviour, with elementwise adds as the vehicle: dynamic shapes through one built
// program, views, memory reuse, and the build-time and input errors.
#include "graph/builder.h"
#include "graph/error.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Shape;
using testing::bytes_of;
using testing::close;
using testing::random_floats;
using testing::shared_context;

TEST(Program, DynamicShapesResizeWithoutRebuilding) {
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 100);
  auto x = b.input("x", DType::f32, {seq, 64});
  auto w = b.constant("w", DType::f32, {64}, bytes_of(random_floats(64, 8)));
  b.output("y", b.op1("add", {x, w}));
  const graph::Graph g = b.build();
  Program prog(shared_context(), g, b.weights());
  const auto vw = random_floats(64, 8);
  for (int64_t s : {7, 100, 3, 1}) {
    const auto vx = random_floats(static_cast<size_t>(s) * 64, static_cast<uint32_t>(s));
    prog.set_input<float>("x", vx, {s, 64});
    prog.execute();
    std::vector<float> want(vx.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = vx[i] + vw[i % 64];
    EXPECT_EQ(prog.output_shape("y"), (std::vector<int64_t>{s, 64}));
    EXPECT_TRUE(close(prog.read_f32("y"), want)) << "seq " << s;
  }
}

TEST(Program, OneTokenStepsTakeTheirOwnRoute) {
  // A linear over a symbolic row count: the tiled GEMM at max size, the gemv when one row.
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 64);
  auto x = b.input("x", DType::f32, {seq, 37});
  const auto vw = random_floats(11 * 37, 20);
  auto w = b.constant("w", DType::f32, {11, 37}, bytes_of(vw));
  b.output("y", b.op1("linear", {x, w}));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).route, "tiled");
  EXPECT_EQ(prog.routes().at(0).small_route, "gemv");
  for (int64_t s : {1, 20, 1, 64, 1}) {
    const auto vx = random_floats(static_cast<size_t>(s) * 37, static_cast<uint32_t>(100 + s));
    prog.set_input<float>("x", vx, {s, 37});
    prog.execute();
    EXPECT_EQ(prog.last_execute_was_small(), s == 1);
    std::vector<float> want(static_cast<size_t>(s) * 11, 0.f);
    for (int64_t r = 0; r < s; ++r) {
      for (int n = 0; n < 11; ++n) {
        double acc = 0;
        for (int k = 0; k < 37; ++k) acc += double(vx[r * 37 + k]) * vw[n * 37 + k];
        want[r * 11 + n] = static_cast<float>(acc);
      }
    }
    EXPECT_TRUE(close(prog.read_f32("y"), want)) << "seq " << s;
  }
}

TEST(Program, ParamsAreUploadedOnlyWhenTheyChange) {
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 50);
  auto x = b.input("x", DType::f32, {seq, 13});
  auto y = x;
  for (int i = 0; i < 6; ++i) y = b.op1("add", {y, x});
  b.output("y", y);
  Program prog(shared_context(), b.build(), b.weights());
  const auto run = [&](int64_t s) {
    prog.set_input<float>("x", random_floats(static_cast<size_t>(s) * 13, 5), {s, 13});
    prog.execute();
    return prog.param_uploads();
  };
  const size_t first = run(7);
  EXPECT_GE(first, 1u);
  EXPECT_EQ(run(7), first);         // same shapes: nothing to upload
  const size_t changed = run(9);    // six nodes' params change: still one write for the page
  EXPECT_EQ(changed, first + 1);
  std::vector<float> want(9 * 13);
  EXPECT_EQ(prog.read_f32("y").size(), want.size());
}

TEST(Program, ViewsShareStorageAndRunNothing) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {6, 35});
  auto r = b.op1("reshape", {x}, {{"shape", Shape{2, 3, 35}}});
  auto u = b.op1("unsqueeze", {r}, {{"dim", 0}});
  b.output("y", b.op1("add", {u, u}));
  Program prog(shared_context(), b.build(), b.weights());
  ASSERT_EQ(prog.routes().size(), 3u);
  EXPECT_EQ(prog.routes()[0].route, "view");
  EXPECT_EQ(prog.routes()[1].route, "view");
  EXPECT_EQ(prog.routes()[2].route, "binary");
  const auto vx = random_floats(210, 9);
  prog.set_input<float>("x", vx, {6, 35});
  prog.execute();
  EXPECT_EQ(prog.dispatches_per_execute(), 1u);
  std::vector<float> want(vx);
  for (auto& v : want) v *= 2;
  EXPECT_TRUE(close(prog.read_f32("y"), want));
  EXPECT_EQ(prog.output_shape("y"), (std::vector<int64_t>{1, 2, 3, 35}));
}

TEST(Program, RepeatedExecutesRecordTheStepsBackToBack) {
  // execute(n) records the graph n times in one command buffer: (x + w) + w twice gives the same
  // y (nothing accumulates), dispatches_per_execute stays one graph's, and the timestamps show
  // the repeats: 3 x 2 dispatches, each in a pass of its own, or one pass for all of them.
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {3, 64});
  auto w = b.constant("w", DType::f32, {64}, bytes_of(random_floats(64, 8)));
  b.output("y", b.op1("add", {b.op1("add", {x, w}), w}));
  Program prog(shared_context(), b.build(), b.weights());
  const auto vx = random_floats(3 * 64, 5), vw = random_floats(64, 8);
  prog.set_input<float>("x", vx, {3, 64});
  std::vector<float> want(vx.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = (vx[i] + vw[i % 64]) + vw[i % 64];
  prog.execute(3);
  EXPECT_EQ(prog.dispatches_per_execute(), 2u);
  EXPECT_TRUE(close(prog.read_f32("y"), want));
  EXPECT_THROW(prog.execute(0), std::invalid_argument);
  if (!shared_context().features().timestamp_query) GTEST_SKIP() << "no timestamp-query: the timings are not seen";
  prog.set_timing(gpu::Timing::Dispatches);
  prog.execute(3);
  EXPECT_EQ(prog.last_timings().size(), 6u);
  prog.set_timing(gpu::Timing::Passes);
  prog.execute(3);
  EXPECT_EQ(prog.last_timings().size(), 1u);
  EXPECT_TRUE(close(prog.read_f32("y"), want));
}

TEST(Program, LongStepsAreSubmittedInParts) {
  // y = x + w + w + ... (60 dependent adds). At seq > 1 (outside the one-token class) the step
  // goes to the GPU in parts of 16, 32 and the rest: three submits, the same bits as the program
  // that times its passes (the control: a timed execute keeps one command buffer, one submit), and
  // an asynchronous read armed before it collects the result. At seq = 1 (one-token steps,
  // pipelined) one submit.
  constexpr int kAdds = 60;
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 8);
  auto x = b.input("x", DType::f32, {seq, 64});
  const auto vw = random_floats(64, 8);
  auto w = b.constant("w", DType::f32, {64}, bytes_of(vw));
  graph::ValueId y = x;
  for (int i = 0; i < kAdds; ++i) y = b.op1("add", {y, w});
  b.output("y", y);
  const graph::Graph g = b.build();
  Program parts(shared_context(), g, b.weights());
  Program whole(shared_context(), g, b.weights());
  whole.set_timing(gpu::Timing::Passes);
  for (int64_t s : {5, 1, 8}) {
    SCOPED_TRACE("seq " + std::to_string(s));
    const auto vx = random_floats(static_cast<size_t>(s) * 64, static_cast<uint32_t>(s));
    std::vector<float> want(vx);
    for (int i = 0; i < kAdds; ++i) {
      for (size_t j = 0; j < want.size(); ++j) want[j] += vw[j % 64];
    }
    parts.set_input<float>("x", vx, {s, 64});
    whole.set_input<float>("x", vx, {s, 64});
    AsyncRead read = parts.read_async("y");
    parts.execute();
    whole.execute();
    EXPECT_EQ(parts.dispatches_per_execute(), static_cast<size_t>(kAdds));
    EXPECT_EQ(parts.submits_per_execute(), s == 1 ? 1u : 3u);
    EXPECT_EQ(whole.submits_per_execute(), 1u);
    EXPECT_TRUE(close(parts.read_f32("y"), want));
    EXPECT_EQ(parts.read_f32("y"), whole.read_f32("y"));
    EXPECT_EQ(read.f32(), whole.read_f32("y"));
  }
}

TEST(Program, IntermediatesReuseMemory) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {1024});
  graph::ValueId v = x;
  for (int i = 0; i < 8; ++i) v = b.op1("add", {v, x});
  b.output("y", v);
  Program prog(shared_context(), b.build(), b.weights());
  // Eight node outputs of 4 KiB, but at most two are alive at once.
  EXPECT_EQ(prog.memory().unplanned, 8u * 4096);
  EXPECT_EQ(prog.memory().intermediates, 2u * 4096);
  const auto vx = random_floats(1024, 10);
  prog.set_input<float>("x", vx, {1024});
  prog.execute();
  std::vector<float> want(vx);
  for (auto& w : want) w *= 9;
  EXPECT_TRUE(close(prog.read_f32("y"), want));
}

TEST(Program, OpWithoutKernelsIsABuildErrorNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {4, 4});
  b.output("y", b.op1("add", {x, x}, {}, "the.add"));
  const KernelRegistry empty;
  try {
    Program prog(shared_context(), b.build(), b.weights(), {}, empty);
    FAIL() << "built a program with an op that has no kernels";
  } catch (const graph::GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("the.add"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no kernels for op 'add'"), std::string::npos) << e.what();
  }
}

TEST(Program, NoFittingRouteListsWhyEachWasRejected) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {5});
  b.output("y", b.op1("add", {x, x}, {}, "picky.add"));
  KernelRegistry picky;
  auto never = [](const char* why) { return [why](const NodeContext&) { return std::string(why); }; };
  picky.add({"add", {{"tiled", never("K is not a multiple of 64"), nullptr},
                     {"general", never("needs rank 2"), nullptr}}});
  try {
    Program prog(shared_context(), b.build(), b.weights(), {}, picky);
    FAIL() << "built a node no route accepts";
  } catch (const graph::GraphError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("picky.add"), std::string::npos) << what;
    EXPECT_NE(what.find("tiled: K is not a multiple of 64"), std::string::npos) << what;
    EXPECT_NE(what.find("general: needs rank 2"), std::string::npos) << what;
  }
}

TEST(Program, BadInputsAreClearErrors) {
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 8);
  auto x = b.input("x", DType::f32, {seq, 4});
  b.output("y", b.op1("add", {x, x}));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<float> v(40);
  EXPECT_THROW(prog.set_input<float>("x", v, {10, 4}), std::invalid_argument);  // seq > 8
  EXPECT_THROW(prog.set_input<float>("x", v, {2, 5}), std::invalid_argument);   // dim 1 is 4
  EXPECT_THROW(prog.set_input<float>("x", v, {2, 4}), std::invalid_argument);   // 40 floats for 8
  EXPECT_THROW(prog.set_input<float>("nope", v, {10, 4}), std::invalid_argument);
  EXPECT_THROW(prog.set_sym("seq", 0), std::invalid_argument);
}

}  // namespace
}  // namespace wgx::runtime
