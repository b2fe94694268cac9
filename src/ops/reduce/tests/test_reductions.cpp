// sum, mean, amax, amin and argmax against double references: prime sizes, both routes (the one
// taken asserted), keepdim, negative and non-adjacent dims, f16, integer and byte dtypes, long
// outputs split into chunks, symbolic sizes changed between executions.
#include <string>
#include <tuple>
#include <vector>

#include "graph/builder.h"
#include "reduce_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::reduce_ref;
using testing::route_of;
using testing::shared_context;
using testing::to_float;

const std::vector<std::string> kFloatOps{"sum", "mean", "amax", "amin"};

graph::Attrs reduce_attrs(const std::vector<int64_t>& dims, bool keepdim) {
  return {{"dims", dims}, {"keepdim", keepdim}};
}

struct Case {
  const char* name;
  std::vector<int64_t> shape, dims;
  bool keepdim;
  const char* route;
};

// The four float reductions of every case, f32, in one program (each variant compiles once).
TEST(Reductions, FloatOpsMatchDoubleReference) {
  const std::vector<Case> cases{
      {"last_dim", {3, 37, 113}, {-1}, false, "row"},
      {"last_two_dims_merged", {3, 37, 113}, {1, -1}, true, "row"},
      {"all_dims", {3, 37, 113}, {}, false, "row"},
      {"long_rows", {7, 1031}, {1}, true, "row"},
      {"trailing_one_kept", {11, 37, 1}, {-2}, false, "row"},
      {"middle_dim", {3, 37, 113}, {1}, true, "strided"},
      {"non_adjacent_dims", {3, 37, 113}, {0, -1}, false, "strided"},
      {"non_adjacent_strided", {5, 7, 11, 13}, {0, 2}, true, "strided"},
      {"three_runs", {3, 5, 7, 11, 13}, {0, 2, -1}, false, "strided"},
      {"few_long_columns", {1031, 3}, {0}, false, "strided"},
  };
  GraphBuilder b;
  for (const Case& c : cases) {
    auto x = b.input(c.name, DType::f32, graph::Shape(c.shape.begin(), c.shape.end()));
    for (const auto& op : kFloatOps) b.output(op + "." + c.name, b.op1(op, {x}, reduce_attrs(c.dims, c.keepdim)));
  }
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<std::vector<float>> inputs;
  for (const Case& c : cases) {
    size_t n = 1;
    for (int64_t d : c.shape) n *= static_cast<size_t>(d);
    inputs.push_back(random_floats(n, static_cast<uint32_t>(inputs.size()) + 11));
    prog.set_input<float>(c.name, inputs.back(), c.shape);
  }
  prog.execute();
  size_t node = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    for (const auto& op : kFloatOps) {
      const std::string out = op + "." + c.name;
      EXPECT_TRUE(close(prog.read_f32(out), to_float(reduce_ref(op, inputs[i], c.shape, c.dims)))) << out;
      EXPECT_EQ(route_of(prog, node++), c.route) << out;
    }
    // keepdim keeps a 1 for each reduced dim; without it they go.
    const size_t reduced = c.dims.empty() ? c.shape.size() : c.dims.size();
    EXPECT_EQ(prog.output_shape(std::string("sum.") + c.name).size(), c.shape.size() - (c.keepdim ? 0 : reduced));
  }
}

TEST(Reductions, StridedRouteSaysWhyRowIsNot) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {3, 37, 11});
  b.output("y", b.op1("sum", {x}, reduce_attrs({1}, false)));
  Program prog(shared_context(), b.build(), b.weights());
  ASSERT_EQ(route_of(prog, 0), "strided");
  ASSERT_EQ(prog.routes()[0].rejected.size(), 1u);
  EXPECT_EQ(prog.routes()[0].rejected[0], "row: kept dim 2 follows a reduced dim: the reduced elements are strided");
}

// f16 in and out, packed: rows and columns of odd count, so the last word has a zero tail. The
// f32 accumulation then one rounding is within one f16 ulp (rel 2^-10) of the rounded reference.
TEST(Reductions, F16RowsAndColumns) {
  const std::vector<int64_t> shape{5, 37, 113};
  GraphBuilder b;
  auto x = b.input("x", DType::f16, {5, 37, 113});
  for (const auto& op : kFloatOps) {
    b.output(op + "_row", b.op1(op, {x}, reduce_attrs({-1}, false)));
    b.output(op + "_col", b.op1(op, {x}, reduce_attrs({1}, true)));
  }
  Program prog(shared_context(), b.build(), b.weights());
  const auto h = testing::to_f16(random_floats(5 * 37 * 113, 12));
  const auto vx = testing::from_f16(h);
  prog.set_input<uint16_t>("x", h, shape);
  prog.execute();
  size_t node = 0;
  for (const auto& op : kFloatOps) {
    for (const auto& [suffix, dims, route] : {std::tuple{"_row", std::vector<int64_t>{-1}, "row"},
                                              std::tuple{"_col", std::vector<int64_t>{1}, "strided"}}) {
      const auto want = testing::round_f16(to_float(reduce_ref(op, vx, shape, dims)));
      EXPECT_TRUE(close(prog.read_f32(op + suffix), want, 1e-4, 1.0 / 1024)) << op << suffix;
      EXPECT_EQ(route_of(prog, node++), route) << op << suffix;
    }
  }
  const auto bytes = prog.read_storage("sum_row");  // 185 halves in 93 words
  ASSERT_EQ(bytes.size(), 372u);
  EXPECT_EQ(bytes[370], 0);
  EXPECT_EQ(bytes[371], 0);
}

TEST(Reductions, IntegersAreExact) {
  const std::vector<int64_t> shape{3, 37, 113};
  GraphBuilder b;
  auto x = b.input("x", DType::i32, {3, 37, 113});
  auto wide = b.input("wide", DType::i64, {3, 37, 113});  // computed as i32
  for (const char* op : {"sum", "amax", "amin"}) {
    b.output(std::string(op) + "_row", b.op1(op, {x}, reduce_attrs({-1}, false)));
    b.output(std::string(op) + "_col", b.op1(op, {x}, reduce_attrs({0, 1}, false)));
  }
  b.output("wide_sum", b.op1("sum", {wide}, reduce_attrs({1}, false)));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<int32_t> vi(3 * 37 * 113);
  std::vector<float> vf(vi.size());
  for (size_t i = 0; i < vi.size(); ++i) {
    vi[i] = static_cast<int32_t>((i * 7919) % 20011) - 10000;
    vf[i] = static_cast<float>(vi[i]);
  }
  prog.set_input<int32_t>("x", vi, shape);
  prog.set_input<int64_t>("wide", std::vector<int64_t>(vi.begin(), vi.end()), shape);
  prog.execute();
  EXPECT_EQ(prog.read_f32("wide_sum"), to_float(reduce_ref("sum", vf, shape, {1})));
  EXPECT_EQ(route_of(prog, 6), "strided");
  size_t node = 0;
  for (const char* op : {"sum", "amax", "amin"}) {
    EXPECT_EQ(prog.read_f32(std::string(op) + "_row"), to_float(reduce_ref(op, vf, shape, {-1}))) << op;
    EXPECT_EQ(prog.read_f32(std::string(op) + "_col"), to_float(reduce_ref(op, vf, shape, {0, 1}))) << op;
    EXPECT_EQ(route_of(prog, node++), "row");
    EXPECT_EQ(route_of(prog, node++), "strided");
  }
}

// u8 extremes stay bytes (four per word, zero tail); u8 and bool sums widen to i32.
TEST(Reductions, BytesAndBools) {
  GraphBuilder b;
  auto x = b.input("x", DType::u8, {7, 41});
  auto m = b.input("m", DType::boolean, {7, 41});
  b.output("max", b.op1("amax", {x}, reduce_attrs({-1}, false)));
  b.output("min", b.op1("amin", {x}, reduce_attrs({0}, false)));
  b.output("sum", b.op1("sum", {x}, reduce_attrs({-1}, false)));
  b.output("count", b.op1("sum", {m}, reduce_attrs({0}, false)));
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<uint8_t> vx(7 * 41), vm(7 * 41);
  std::vector<float> fx(vx.size()), fm(vm.size());
  for (size_t i = 0; i < vx.size(); ++i) {
    vx[i] = static_cast<uint8_t>((i * 97 + 13) % 256);
    vm[i] = (i * 31) % 7 < 3;
    fx[i] = vx[i];
    fm[i] = vm[i];
  }
  prog.set_input<uint8_t>("x", vx, {7, 41});
  prog.set_input<uint8_t>("m", vm, {7, 41});
  prog.execute();
  EXPECT_EQ(prog.read_f32("max"), to_float(reduce_ref("amax", fx, {7, 41}, {-1})));
  EXPECT_EQ(prog.read_f32("min"), to_float(reduce_ref("amin", fx, {7, 41}, {0})));
  EXPECT_EQ(prog.read_f32("sum"), to_float(reduce_ref("sum", fx, {7, 41}, {-1})));
  EXPECT_EQ(prog.read_f32("count"), to_float(reduce_ref("sum", fm, {7, 41}, {0})));
  const auto bytes = prog.read_storage("max");  // 7 bytes in 2 words
  ASSERT_EQ(bytes.size(), 8u);
  EXPECT_EQ(bytes[7], 0);
}

// Values from a small set, so most rows and columns hold ties: the first index must win.
TEST(Reductions, ArgmaxTakesTheFirstMaximum) {
  const std::vector<int64_t> shape{3, 37, 113};
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {3, 37, 113});
  auto h = b.input("h", DType::f16, {3, 37, 113});
  auto n = b.input("n", DType::i32, {3, 37, 113});
  const std::vector<std::tuple<std::string, graph::ValueId, int64_t, bool>> cases{
      {"f32_last", x, -1, false}, {"f32_first", x, 0, true}, {"f32_middle", x, 1, false},
      {"f16_last", h, 2, true},   {"f16_middle", h, -2, false}, {"i32_last", n, -1, false},
      {"i32_first", n, -3, false}};
  for (const auto& [name, in, dim, keepdim] : cases) {
    b.output(name, b.op1("argmax", {in}, {{"dim", dim}, {"keepdim", keepdim}}));
  }
  Program prog(shared_context(), b.build(), b.weights());
  std::vector<float> vf(3 * 37 * 113);
  std::vector<int32_t> vi(vf.size());
  for (size_t i = 0; i < vf.size(); ++i) {
    vi[i] = static_cast<int32_t>((i * 7919 + (i >> 5)) % 9) - 4;
    vf[i] = static_cast<float>(vi[i]) * 0.25f;
  }
  prog.set_input<float>("x", vf, shape);
  prog.set_input<uint16_t>("h", testing::to_f16(vf), shape);
  prog.set_input<int32_t>("n", vi, shape);
  prog.execute();
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [name, in, dim, keepdim] = cases[i];
    EXPECT_EQ(prog.read_f32(name), to_float(reduce_ref("argmax", vf, shape, {dim}))) << name;
    EXPECT_EQ(route_of(prog, i), dim == -1 || dim == 2 ? "row" : "strided") << name;
  }
  EXPECT_EQ(prog.output_shape("f16_last"), (std::vector<int64_t>{3, 37, 1}));
}

// Few outputs over 8192 or more elements are split into chunks of partials, which the last
// workgroup of the dispatch merges (one dispatch a node), or with reduce_split_merge off a second
// dispatch (a diagnostic: the default takes it past 16,384 partials only): the same merge in the
// same order, so the same bits; ties across chunks must still give the first index. A value that
// is neither on nor off is refused.
TEST(Reductions, LongOutputsSplitIntoChunks) {
  GraphBuilder b;
  auto rows = b.input("rows", DType::f32, {2, 9001});
  auto cols = b.input("cols", DType::f32, {9001, 3});
  auto half = b.input("half", DType::f16, {3, 37, 113});
  b.output("argmax", b.op1("argmax", {rows}, {{"dim", -1}, {"keepdim", false}}));
  b.output("amin", b.op1("amin", {rows}, reduce_attrs({1}, true)));
  b.output("sum", b.op1("sum", {cols}, reduce_attrs({0}, false)));
  b.output("mean", b.op1("mean", {half}, reduce_attrs({}, false)));
  const graph::Graph g = b.build();
  Program prog(shared_context(), g, b.weights());
  Program two(shared_context(), g, b.weights(), {{"reduce_split_merge", "off"}});
  std::vector<float> vr(2 * 9001);
  for (size_t i = 0; i < vr.size(); ++i) vr[i] = static_cast<float>((i * 7919) % 13);  // max 12, many times
  const auto vc = random_floats(9001 * 3, 70);
  const auto h = testing::to_f16(random_floats(3 * 37 * 113, 71));
  for (Program* p : {&prog, &two}) {
    p->set_input<float>("rows", vr, {2, 9001});
    p->set_input<float>("cols", vc, {9001, 3});
    p->set_input<uint16_t>("half", h, {3, 37, 113});
    p->execute();
  }
  EXPECT_EQ(prog.dispatches_per_execute(), 4u);  // one per node
  EXPECT_EQ(two.dispatches_per_execute(), 8u);   // two per node
  for (const char* out : {"argmax", "amin", "sum", "mean"}) EXPECT_EQ(prog.read_f32(out), two.read_f32(out)) << out;
  EXPECT_EQ(prog.read_f32("argmax"), to_float(reduce_ref("argmax", vr, {2, 9001}, {-1})));
  EXPECT_EQ(prog.read_f32("amin"), to_float(reduce_ref("amin", vr, {2, 9001}, {1})));
  EXPECT_TRUE(close(prog.read_f32("sum"), to_float(reduce_ref("sum", vc, {9001, 3}, {0}))));
  const auto mean = testing::round_f16(to_float(reduce_ref("mean", testing::from_f16(h), {3, 37, 113}, {})));
  EXPECT_TRUE(close(prog.read_f32("mean"), mean, 1e-4, 1.0 / 1024));
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 2), "strided");
  try {
    Program bad(shared_context(), g, b.weights(), {{"reduce_split_merge", "maybe"}});
    ADD_FAILURE() << "a bad reduce_split_merge was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("runtime option reduce_split_merge is 'maybe'; it takes on | off"),
              std::string::npos)
        << e.what();
  }
}

// One program, the row count and the reduced length symbolic, changed between executions
// (growing and shrinking, which also changes the lanes per row).
TEST(Reductions, SymbolicSizesChangeBetweenExecutions) {
  GraphBuilder b;
  auto rows = b.sym("rows", 1, 64);
  auto len = b.sym("len", 0, 4000);
  auto x = b.input("x", DType::f32, {rows, 113});
  auto y = b.input("y", DType::f32, {3, len});
  b.output("row_sum", b.op1("sum", {x}, reduce_attrs({-1}, false)));
  b.output("col_max", b.op1("amax", {x}, reduce_attrs({0}, true)));
  b.output("mean", b.op1("mean", {y}, reduce_attrs({1}, false)));
  b.output("sum", b.op1("sum", {y}, reduce_attrs({-1}, true)));
  b.output("total", b.op1("sum", {y}, reduce_attrs({}, false)));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(route_of(prog, 0), "row");
  EXPECT_EQ(route_of(prog, 1), "strided");
  EXPECT_EQ(route_of(prog, 2), "row");
  uint32_t seed = 20;
  // len 3000 makes 9000 elements to sum in total: split into chunks (merged in the same
  // dispatch); the others are not.
  for (const auto& [r, n] : {std::pair<int64_t, int64_t>{5, 113}, {37, 3000}, {2, 7}}) {
    const auto vx = random_floats(static_cast<size_t>(r) * 113, seed++);
    const auto vy = random_floats(3 * static_cast<size_t>(n), seed++);
    prog.set_input<float>("x", vx, {r, 113});
    prog.set_input<float>("y", vy, {3, n});
    prog.execute();
    EXPECT_TRUE(close(prog.read_f32("row_sum"), to_float(reduce_ref("sum", vx, {r, 113}, {-1})))) << r;
    EXPECT_TRUE(close(prog.read_f32("col_max"), to_float(reduce_ref("amax", vx, {r, 113}, {0})))) << r;
    EXPECT_TRUE(close(prog.read_f32("mean"), to_float(reduce_ref("mean", vy, {3, n}, {1})))) << n;
    EXPECT_TRUE(close(prog.read_f32("sum"), to_float(reduce_ref("sum", vy, {3, n}, {1})))) << n;
    EXPECT_TRUE(close(prog.read_f32("total"), to_float(reduce_ref("sum", vy, {3, n}, {})))) << n;
    EXPECT_EQ(prog.dispatches_per_execute(), 5u) << n;
  }
  // Reducing nothing: the sum is 0 and the mean NaN, as in PyTorch.
  prog.set_input<float>("y", std::vector<float>{}, {3, 0});
  prog.execute();
  EXPECT_EQ(prog.read_f32("sum"), std::vector<float>(3, 0.f));
  for (float v : prog.read_f32("mean")) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace wgx::runtime
