// linear (x @ weight^T + bias) in f32 against a double reference: prime sizes, K not a multiple
// of the tile, with and without bias, vec4-aligned rows, both tiles, both routes and the guard
// between them, and M symbolic. Nodes that share a kernel share a program: a pipeline costs
// SwiftShader a second or more to compile.
#include <map>
#include <memory>
#include <tuple>

#include "graph/builder.h"
#include "linalg_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::random_floats;
using testing::shared_context;

// Linear nodes in one graph, each fed by its own input x<i>, checked against the reference.
class Linears {
 public:
  struct Node {
    std::vector<float> w, bias;
    int64_t n, k;
    size_t route_index;  // of the node in Program::routes()
    std::vector<float> x;  // the last input set
    std::vector<int64_t> shape;
  };

  // x's shape may hold syms; `n` outputs per row.
  void add(GraphBuilder& b, const std::string& name, graph::Shape x, int64_t n, bool bias) {
    Node node{random_floats(static_cast<size_t>(n * x.back().value()), seed_++, -1.f, 1.f), {}, n,
              x.back().value(), nodes_.size(), {}, {}};
    std::vector<graph::ValueId> in{b.input(name, DType::f32, x),
                                   b.constant(name + ".w", DType::f32, {n, node.k}, testing::bytes_of(node.w))};
    if (bias) {
      node.bias = random_floats(static_cast<size_t>(n), seed_++);
      in.push_back(b.constant(name + ".b", DType::f32, {n}, testing::bytes_of(node.bias)));
    }
    b.output(name + ".y", b.op1("linear", in));
    nodes_[name] = node;
  }

  // Sets a random x of `shape` (its syms take their values from it) for node `name`.
  void set(Program& prog, const std::string& name, const std::vector<int64_t>& shape) {
    Node& node = nodes_.at(name);
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    node.x = random_floats(static_cast<size_t>(count), seed_++, -1.f, 1.f);
    node.shape = shape;
    prog.set_input<float>(name, node.x, shape);
  }

  // After an execution: node `name`'s output and route.
  void verify(const Program& prog, const std::string& name, const char* route) const {
    SCOPED_TRACE(name);
    const Node& node = nodes_.at(name);
    const testing::Reference want = testing::linear_ref(node.x, node.shape, node.w, node.n, node.bias);
    EXPECT_EQ(prog.output_shape(name + ".y"), want.shape);
    EXPECT_TRUE(testing::within_bound(prog.read_f32(name + ".y"), want, node.k));
    const RouteChoice& choice = prog.routes().at(node.route_index);
    EXPECT_EQ(choice.route, route) << testing::rejected(choice);
  }

  // Sets x of `shape` for `name` alone, executes, verifies.
  void check(Program& prog, const std::string& name, const std::vector<int64_t>& shape, const char* route) {
    set(prog, name, shape);
    prog.execute();
    verify(prog, name, route);
  }

 private:
  std::map<std::string, Node> nodes_;
  uint32_t seed_ = 1;
};

// Prime sizes and symbolic rows share one program (and so its two pipelines).
class LinearF32 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GraphBuilder b;
    nodes_ = std::make_unique<Linears>();
    nodes_->add(b, "m1", {1, 113}, 37, true);
    nodes_->add(b, "m3", {3, 130}, 11, false);
    nodes_->add(b, "m4", {4, 37}, 113, true);
    nodes_->add(b, "x1d", {113}, 3, true);  // 1-D x: one row
    nodes_->add(b, "m11", {11, 113}, 37, true);
    nodes_->add(b, "m37", {37, 130}, 113, false);
    nodes_->add(b, "m113", {113, 37}, 130, true);
    nodes_->add(b, "m130", {130, 11}, 3, true);
    nodes_->add(b, "k1", {37, 1}, 11, false);
    nodes_->add(b, "batch", {2, 3, 113}, 11, true);  // leading dims flatten into M = 6
    // The route is chosen at build time from M's maximum: up to 4 rows take gemv, more the GEMM.
    nodes_->add(b, "decode", {b.sym("step", 1, 4), 113}, 37, true);
    nodes_->add(b, "prefill", {b.sym("seq", 1, 130), 37}, 11, true);
    prog_ = std::make_unique<Program>(shared_context(), b.build(), b.weights());
  }
  static void TearDownTestSuite() {
    prog_.reset();
    nodes_.reset();
  }
  static std::unique_ptr<Linears> nodes_;
  static std::unique_ptr<Program> prog_;
};
std::unique_ptr<Linears> LinearF32::nodes_;
std::unique_ptr<Program> LinearF32::prog_;

TEST_F(LinearF32, PrimeSizesTakeGemvUpToFourRowsAndTheTiledGemmAbove) {
  const std::vector<std::tuple<std::string, std::vector<int64_t>, const char*>> cases{
      {"m1", {1, 113}, "gemv"},    {"m3", {3, 130}, "gemv"},     {"m4", {4, 37}, "gemv"},
      {"x1d", {113}, "gemv"},      {"m11", {11, 113}, "tiled"},  {"m37", {37, 130}, "tiled"},
      {"m113", {113, 37}, "tiled"}, {"m130", {130, 11}, "tiled"}, {"k1", {37, 1}, "tiled"},
      {"batch", {2, 3, 113}, "tiled"}};
  for (const auto& [name, shape, route] : cases) nodes_->set(*prog_, name, shape);
  prog_->execute();
  for (const auto& [name, shape, route] : cases) nodes_->verify(*prog_, name, route);
  // The last route passed over is gemv (quantized-weight routes, tried first, reject a dense weight).
  ASSERT_FALSE(prog_->routes().at(4).rejected.empty());
  EXPECT_EQ(prog_->routes().at(4).rejected.back(), "gemv: M is up to 11; gemv takes M <= 4");
}

TEST_F(LinearF32, SymbolicRowsResizeBetweenExecutions) {
  const std::vector<std::pair<int64_t, int64_t>> rows{{4, 130}, {1, 1}, {3, 37}, {2, 64}, {4, 65}};
  for (const auto& [decode, prefill] : rows) {
    nodes_->set(*prog_, "decode", {decode, 113});
    nodes_->set(*prog_, "prefill", {prefill, 37});
    prog_->execute();
    nodes_->verify(*prog_, "decode", "gemv");
    nodes_->verify(*prog_, "prefill", "tiled");
  }
}

TEST(LinearF32Routes, AlignedRowsLoadVectors) {
  GraphBuilder b;
  Linears l;
  l.add(b, "gemv", {3, 132}, 13, true);  // K % 4 == 0
  l.add(b, "tiled", {37, 132}, 11, true);
  Program prog(shared_context(), b.build(), b.weights());
  l.check(prog, "gemv", {3, 132}, "gemv");
  l.check(prog, "tiled", {37, 132}, "tiled");
}

}  // namespace
}  // namespace wgx::runtime
