// Weights read in row chunks (runtime/split_constants.h): the plan under a binding limit, the
// chunks' bytes (q4gsw's two ranges), and on the GPU the gather and the products over tables of
// 113 rows cut at 41 and 70 (boundaries aligned to nothing), f32, f16 and q4gsw, against the same
// nodes on the whole table and, for f32, a CPU reference. Negative controls: a chunk read one row
// off, and a gather whose ids are offset by one row too many, are caught.
#include <climits>

#include "graph/builder.h"
#include "gpu/error.h"
#include "numeric_test_util.h"
#include "ops/quant/quantize.h"
#include "runtime/program.h"
#include "runtime/split_constants.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::bytes_of;
using testing::close;
using testing::random_floats;
using testing::shared_context;

constexpr int64_t kRows = 113, kCols = 64;
const std::vector<int64_t> kChunks{41, 29, 43};

std::vector<uint8_t> zeros(size_t n) { return std::vector<uint8_t>(n, 0); }

// The constant named `name` in `g`.
const graph::Constant& constant(const graph::Graph& g, const std::string& name) {
  for (const graph::Constant& c : g.constants) {
    if (c.name == name) return c;
  }
  throw std::logic_error("no constant " + name);
}
uint32_t constant_index(const graph::Graph& g, const std::string& name) {
  return static_cast<uint32_t>(&constant(g, name) - g.constants.data());
}

ConstantSplit split_of(const graph::Graph& g, const std::string& name, std::vector<int64_t> rows) {
  ConstantSplit s;
  s.constant = constant_index(g, name);
  s.name = name;
  s.type = g.type(constant(g, name).value);
  s.rows = std::move(rows);
  return s;
}

TEST(SplitConstants, PlanTakesFewestAlignedChunksUnderTheLimit) {
  struct Case {
    DType dtype;
    int64_t rows, cols;
    uint64_t limit;
  };
  for (const Case& c : {Case{DType::f32, 100003, 10, 1 << 20}, Case{DType::f16, 70001, 33, 1 << 20},
                        Case{DType::q4gsw, 90001, 64, 1 << 20}, Case{DType::f32, 1000, 37, 20000}}) {
    GraphBuilder b;
    graph::TensorType type{c.dtype, {c.rows, c.cols}, {}};
    if (c.dtype == DType::q4gsw) type.quant = {32, DType::f16};
    const auto table = b.constant("t", type, zeros(*graph::tensor_bytes(type, {})));
    b.output("y", b.op1("embedding", {table, b.input("ids", DType::i32, {5})}));
    const graph::Graph g = b.build();
    for (bool f16 : {false, true}) {
      const uint64_t whole = constant_storage_bytes(type, f16);
      const std::vector<ConstantSplit> plan = plan_splits(g, c.limit, f16);
      ASSERT_EQ(plan.size(), 1u);
      const std::vector<int64_t>& rows = plan[0].rows;
      int64_t sum = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        graph::TensorType chunk = type;
        chunk.shape[0] = graph::Dim(rows[i]);
        EXPECT_LE(constant_storage_bytes(chunk, f16), c.limit) << i;
        if (i + 1 < rows.size()) {
          EXPECT_EQ(rows[i], rows[0]);
          if (rows[i] >= 256) {
            EXPECT_EQ(rows[i] % 256, 0) << i;
          }
        }
        sum += rows[i];
      }
      EXPECT_EQ(sum, c.rows);
      // One chunk fewer could not hold the rows.
      EXPECT_GT(whole, (rows.size() - 1) * c.limit) << graph::to_string(type);
      EXPECT_TRUE(plan_splits(g, whole, f16).empty());
    }
  }
}

// The error of plan_splits on a graph whose one constant is read by `op`.
std::string refusal(const graph::Shape& shape, const char* op) {
  GraphBuilder b;
  const auto w = b.constant("w", DType::f32, shape, zeros(3200));
  b.output("y", b.op1(op, {w, b.input("x", DType::f32, shape)}));
  const graph::Graph g = b.build();
  EXPECT_TRUE(plan_splits(g, 3200, false).empty());
  try {
    plan_splits(g, 2000, false);
  } catch (const gpu::GpuError& e) {
    EXPECT_EQ(e.kind(), gpu::ErrorKind::OutOfMemory);
    return e.what();
  }
  return "(none)";
}

TEST(SplitConstants, PlanRefusesWhatCannotBeReadInChunks) {
  const std::string mul = refusal({100, 8}, "mul");
  EXPECT_NE(mul.find("constant 'w'"), std::string::npos) << mul;
  EXPECT_NE(mul.find("(mul) reads it as input 0"), std::string::npos) << mul;
  const std::string vector = refusal({800}, "add");
  EXPECT_NE(vector.find("not a matrix"), std::string::npos) << vector;
}

TEST(SplitConstants, Q4ChunksHoldTheirRowsNibblesAndScales) {
  const auto w = random_floats(kRows * kCols, 3, -1.f, 1.f);
  const auto bytes = ops::quantize_q4gsw(w.data(), kRows, kCols, 32, DType::f16);
  const auto whole = ops::dequantize_q4gsw(bytes, kRows, kCols, 32, DType::f16);
  GraphBuilder b;
  const graph::TensorType type{DType::q4gsw, {kRows, kCols}, {32, DType::f16}};
  const auto t = b.constant("t", type, bytes);
  b.output("y", b.op1("embedding", {t, b.input("ids", DType::i32, {5})}));
  graph::Graph g = b.build();
  const graph::WeightStore store = split_constants(g, b.weights(), std::vector{split_of(g, "t", kChunks)});
  int64_t first = 0;
  for (int64_t rows : kChunks) {
    const std::string name = "t[" + std::to_string(first) + ":" + std::to_string(first + rows) + "]";
    const auto span = store.bytes(constant(g, name).data);
    const auto got = ops::dequantize_q4gsw({span.begin(), span.end()}, rows, kCols, 32, DType::f16);
    auto want = [&](int64_t from) {
      return std::vector<float>(whole.begin() + from * kCols, whole.begin() + (from + rows) * kCols);
    };
    EXPECT_EQ(got, want(first)) << name;
    // Negative control: the rows one further on are other values.
    if (first + rows < kRows) {
      EXPECT_NE(got, want(first + 1)) << name;
    }
    first += rows;
  }
}

// One program holding, for each table kind, the same nodes on copies of one table: whole, split,
// and for f32 and f16 split with the second chunk's rows one row off ("off"); and an f32 gather
// whose second chunk is asked for ids one row too far ("ids_off"). Pipelines are compiled per
// program, and SwiftShader takes up to a second for one.
struct ChunkedProgram {
  std::vector<float> table, bias, ids_x5, x5, x1, r1, norm;
  std::vector<int32_t> ids;
  std::unique_ptr<Program> prog;
};

constexpr const char* kKinds[] = {"f32", "f16", "q4"};

ChunkedProgram& chunked_program() {
  static ChunkedProgram* p = [] {
    auto* s = new ChunkedProgram;
    s->table = random_floats(kRows * kCols, 1, -1.f, 1.f);
    s->bias = random_floats(kRows, 2);
    s->x5 = random_floats(5 * kCols, 4);
    s->x1 = random_floats(kCols, 5);
    s->r1 = random_floats(kCols, 6);
    s->norm = random_floats(kCols, 7, 0.7f, 1.3f);
    // Every row once, and ids around each boundary and outside the table.
    for (int32_t i = 0; i < kRows; ++i) s->ids.push_back(static_cast<int32_t>((i * 37) % kRows));
    for (int32_t i : {40, 41, 42, 69, 70, 71, 112, 0, -1, 113, INT_MIN, INT_MAX}) s->ids.push_back(i);

    GraphBuilder b;
    const auto ids = b.input("ids", DType::i32, {static_cast<int64_t>(s->ids.size())});
    const auto bias = b.constant("bias", DType::f32, {kRows}, bytes_of(s->bias));
    for (const char* kind : kKinds) {
      const std::string k = kind;
      const DType act = k == "f16" ? DType::f16 : DType::f32;
      const auto x5 = b.input("x5." + k, act, {5, kCols});
      const auto x1 = b.input("x1." + k, act, {1, kCols});
      const auto r1 = b.input("r1." + k, act, {1, kCols});
      const auto norm = b.constant("norm." + k, act == DType::f16 ? DType::f16 : DType::f32, {kCols},
                                   act == DType::f16 ? testing::bytes_of(testing::to_f16(s->norm)) : bytes_of(s->norm));
      for (const char* copy : {"whole", "split", "off", "ids_off"}) {
        const std::string name = k + "." + copy;
        if ((k == "q4" && name.ends_with("off")) || (k == "f16" && name.ends_with("ids_off"))) continue;
        graph::ValueId t;
        if (k == "q4") {
          t = b.constant(name, {DType::q4gsw, {kRows, kCols}, {32, DType::f16}},
                         ops::quantize_q4gsw(s->table.data(), kRows, kCols, 32, DType::f16));
        } else if (k == "f16") {
          t = b.constant(name, DType::f16, {kRows, kCols}, testing::bytes_of(testing::to_f16(s->table)));
        } else {
          t = b.constant(name, DType::f32, {kRows, kCols}, bytes_of(s->table));
        }
        b.output("gather." + name, b.op1("embedding", {t, ids}, {}, "gather." + name));
        if (name.ends_with("ids_off")) continue;
        b.output("linear." + name, b.op1("linear", {x5, t}, {}, "linear." + name));
        b.output("norm_linear." + name,
                 b.op("add_rms_norm_linear", {x1, r1, norm, t}, {{"eps", 1e-5}}, "norm_linear." + name)[0]);
        if (k == "f32") b.output("biased." + name, b.op1("linear", {x5, t, bias}, {}, "biased." + name));
      }
    }
    graph::Graph g = b.build();
    std::vector<ConstantSplit> splits;
    for (const char* name : {"f32.split", "f16.split", "q4.split", "f32.off", "f16.off", "f32.ids_off"}) {
      splits.push_back(split_of(g, name, kChunks));
    }
    graph::WeightStore store = split_constants(g, b.weights(), splits);
    g.constants[constant_index(g, "f32.off[41:70]")].data.offset += kCols * 4;
    g.constants[constant_index(g, "f16.off[41:70]")].data.offset += kCols * 2;
    for (const graph::Node& n : g.nodes) {
      if (n.label == "gather.f32.ids_off[41:70].ids") g.values.at(n.inputs[1]).scalar_i += 1;
    }
    s->prog = std::make_unique<Program>(shared_context(), std::move(g), store);
    return s;
  }();
  return *p;
}

// Runs the program once; the outputs stay to be read.
ChunkedProgram& run_chunked() {
  ChunkedProgram& s = chunked_program();
  static bool ran = false;
  if (!ran) {
    Program& p = *s.prog;
    p.set_input<int32_t>("ids", s.ids, {static_cast<int64_t>(s.ids.size())});
    for (const char* kind : kKinds) {
      const std::string k = kind;
      auto set = [&](const std::string& name, const std::vector<float>& v, std::vector<int64_t> shape) {
        if (k == "f16") {
          p.set_input<uint16_t>(name, testing::to_f16(v), std::move(shape));
        } else {
          p.set_input<float>(name, v, std::move(shape));
        }
      };
      set("x5." + k, s.x5, {5, kCols});
      set("x1." + k, s.x1, {1, kCols});
      set("r1." + k, s.r1, {1, kCols});
    }
    p.execute();
    ran = true;
  }
  return s;
}

// The route of the node labelled `label`.
std::string route_of(const Program& p, const std::string& label) {
  for (const RouteChoice& r : p.routes()) {
    if (r.label == label) return r.route + (r.small_route.empty() ? "" : ", " + r.small_route);
  }
  return "(no node " + label + ")";
}

TEST(SplitConstants, GatherOverChunksIsTheWholeTablesGather) {
  ChunkedProgram& s = run_chunked();
  const Program& p = *s.prog;
  for (const char* kind : kKinds) {
    const std::string k = kind;
    // Each id's row from one chunk, zeros from the others: the same bits.
    EXPECT_EQ(p.read_storage("gather." + k + ".split"), p.read_storage("gather." + k + ".whole")) << k;
    EXPECT_EQ(route_of(p, "gather." + k + ".split[70:113]"), route_of(p, "gather." + k + ".whole")) << k;
  }
  std::vector<float> want;
  for (int32_t id : s.ids) {
    for (int64_t d = 0; d < kCols; ++d) want.push_back(id >= 0 && id < kRows ? s.table[id * kCols + d] : 0.f);
  }
  EXPECT_EQ(p.read_f32("gather.f32.split"), want);
  // Negative controls: a chunk one row off, and ids offset one row too many, give other rows.
  EXPECT_FALSE(close(p.read_f32("gather.f32.off"), want));
  EXPECT_NE(p.read_f32("gather.f16.off"), p.read_f32("gather.f16.whole"));
  EXPECT_FALSE(close(p.read_f32("gather.f32.ids_off"), want));
}

TEST(SplitConstants, ProductsOverChunksAreTheWholeTablesProducts) {
  ChunkedProgram& s = run_chunked();
  const Program& p = *s.prog;
  for (const char* kind : kKinds) {
    const std::string k = kind;
    for (std::string op : {"linear.", "norm_linear.", "biased."}) {
      if (op == "biased." && k != "f32") continue;
      const std::string whole = op + k + ".whole", split = op + k + ".split";
      // The same kernels at fewer columns, each column's sum as before.
      EXPECT_TRUE(close(p.read_f32(split), p.read_f32(whole))) << split;
      EXPECT_EQ(route_of(p, split + "[41:70]"), route_of(p, whole)) << split;
      // Negative control: the columns of a chunk one row off differ.
      if (k != "q4") {
        EXPECT_FALSE(close(p.read_f32(op + k + ".off"), p.read_f32(whole))) << split;
      }
    }
  }
  const auto want = testing::linear_dots(s.x5, 5, kCols, s.table, kRows, s.bias);
  EXPECT_TRUE(testing::within_dot_bound(p.read_f32("biased.f32.split"), want.values, want.magnitude, kCols + 1, false));
}

TEST(SplitConstants, ProgramShowsTheSplitAndAddsNothingWithoutOne) {
  GraphBuilder b;
  const auto t = b.constant("t", DType::f32, {kRows, kCols}, bytes_of(random_floats(kRows * kCols, 9)));
  b.output("y", b.op1("embedding", {t, b.input("ids", DType::i32, {3})}, {}, "embed"));
  const graph::Graph g = b.build();
  // Under the limit: the graph as given, one node.
  const Program plain(shared_context(), g, b.weights());
  EXPECT_TRUE(plain.splits().empty());
  EXPECT_EQ(plain.routes().size(), 1u);
  EXPECT_EQ(plain.describe().find("split"), std::string::npos);
  // Over a device's limit of 12,000 bytes (28,928 for the table; 46 rows fit): 3 chunks.
  gpu::Context& small = testing::device_like(true, 0, 12000);
  ASSERT_EQ(small.limits().max_storage_buffer_binding_size, 12000u);
  Program split(small, g, b.weights());
  ASSERT_EQ(split.splits().size(), 1u);
  EXPECT_EQ(split.splits()[0].rows, (std::vector<int64_t>{38, 38, 37}));
  EXPECT_NE(split.describe().find("split  t f32[113, 64] (28.2 KiB, over the 11.7 KiB binding limit): 3 row chunks "
                                  "[0:38] [38:76] [76:113]"),
            std::string::npos)
      << split.describe();
  EXPECT_EQ(route_of(split, "embed[76:113]"), "gather");
  const std::vector<int32_t> ids{37, 38, 112};
  split.set_input<int32_t>("ids", ids, {3});
  split.execute();
  std::vector<float> want;
  const auto table = random_floats(kRows * kCols, 9);
  for (int32_t id : ids) want.insert(want.end(), table.begin() + id * kCols, table.begin() + (id + 1) * kCols);
  EXPECT_EQ(split.read_f32("y"), want);
}

}  // namespace
}  // namespace wgx::runtime
