// matmul in f32 against a double reference with torch.matmul's rules: broadcast batch dims,
// 1-D operands, a shared right operand folded into the rows, prime sizes, vec4-aligned rows,
// symbolic K and N (attention over a growing cache), and both routes.
#include <map>

#include "graph/builder.h"
#include "linalg_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::random_floats;
using testing::shared_context;

// matmul nodes in one graph with inputs <name>.a and <name>.b, checked against the reference.
class Matmuls {
 public:
  void add(GraphBuilder& b, const std::string& name, graph::Shape a, graph::Shape bs) {
    b.output(name, b.op1("matmul", {b.input(name + ".a", DType::f32, a), b.input(name + ".b", DType::f32, bs)}));
    index_[name] = index_.size();
  }

  // Sets random operands of the given shapes (syms take their values from them).
  void set(Program& prog, const std::string& name, const std::vector<int64_t>& a, const std::vector<int64_t>& bs) {
    Operands& o = operands_[name];
    o = {random_floats(count(a), seed_++, -1.f, 1.f), random_floats(count(bs), seed_++, -1.f, 1.f), a, bs};
    prog.set_input<float>(name + ".a", o.a, a);
    prog.set_input<float>(name + ".b", o.b, bs);
  }

  // After an execution: node `name`'s output and route.
  void verify(const Program& prog, const std::string& name, const char* route) const {
    SCOPED_TRACE(name);
    const Operands& o = operands_.at(name);
    const testing::Reference want = testing::matmul_ref(o.a, o.a_shape, o.b, o.b_shape);
    EXPECT_EQ(prog.output_shape(name), want.shape);
    EXPECT_TRUE(testing::within_bound(prog.read_f32(name), want, o.a_shape.back()));
    const RouteChoice& choice = prog.routes().at(index_.at(name));
    EXPECT_EQ(choice.route, route) << testing::rejected(choice);
  }

 private:
  static size_t count(const std::vector<int64_t>& shape) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
  struct Operands {
    std::vector<float> a, b;
    std::vector<int64_t> a_shape, b_shape;
  };
  std::map<std::string, size_t> index_;
  std::map<std::string, Operands> operands_;
  uint32_t seed_ = 100;
};

TEST(MatmulF32, BroadcastsBatchesAtPrimeSizesWithSymbolicInnerAndOuterSizes) {
  GraphBuilder b;
  Matmuls mm;
  mm.add(b, "bcast", {2, 1, 37, 113}, {3, 113, 11});  // batch [2, 3] from [2, 1] and [3]
  mm.add(b, "fold", {3, 11, 13}, {13, 37});           // one b for all: 33 rows
  mm.add(b, "col", {5, 37}, {37});                    // 1-D b: N = 1, removed again
  mm.add(b, "row", {113}, {2, 113, 11});              // 1-D a: M = 1, a broadcast over the batch
  mm.add(b, "decode", {5, 1, 130}, {5, 130, 37});     // batched, one row each
  mm.add(b, "dot", {37}, {37});                       // 0-D result
  // Decode attention over a cache of `len` positions: scores = q @ k^T, then scores @ v.
  const auto len = b.sym("len", 1, 130);
  mm.add(b, "scores", {4, 1, 16}, {4, 16, len});  // N symbolic
  mm.add(b, "mix", {4, 1, len}, {4, len, 16});    // K symbolic
  Program prog(shared_context(), b.build(), b.weights());
  mm.set(prog, "bcast", {2, 1, 37, 113}, {3, 113, 11});
  mm.set(prog, "fold", {3, 11, 13}, {13, 37});
  mm.set(prog, "col", {5, 37}, {37});
  mm.set(prog, "row", {113}, {2, 113, 11});
  mm.set(prog, "decode", {5, 1, 130}, {5, 130, 37});
  mm.set(prog, "dot", {37}, {37});
  for (int64_t n : {130, 37, 1}) {
    mm.set(prog, "scores", {4, 1, 16}, {4, 16, n});
    mm.set(prog, "mix", {4, 1, n}, {4, n, 16});
    prog.execute();
    mm.verify(prog, "scores", "gemv");
    mm.verify(prog, "mix", "gemv");
  }
  mm.verify(prog, "bcast", "tiled");
  mm.verify(prog, "fold", "tiled");
  mm.verify(prog, "col", "tiled");
  mm.verify(prog, "row", "gemv");
  mm.verify(prog, "decode", "gemv");
  mm.verify(prog, "dot", "gemv");
}

TEST(MatmulF32, AlignedRowsLoadVectors) {
  GraphBuilder b;
  Matmuls mm;
  mm.add(b, "tiled", {2, 37, 36}, {2, 36, 40});  // K and N multiples of 4
  mm.add(b, "gemv", {3, 36}, {2, 36, 44});
  Program prog(shared_context(), b.build(), b.weights());
  mm.set(prog, "tiled", {2, 37, 36}, {2, 36, 40});
  mm.set(prog, "gemv", {3, 36}, {2, 36, 44});
  prog.execute();
  mm.verify(prog, "tiled", "tiled");
  mm.verify(prog, "gemv", "gemv");
}

}  // namespace
}  // namespace wgx::runtime
