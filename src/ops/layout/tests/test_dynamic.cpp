// One program run at several values of a symbolic size: every route recomputes its params, copy
// ranges and dispatch sizes from the current shapes (negative starts and indices count from the
// current end).
#include "layout_test_util.h"

namespace wgx::runtime {
namespace {

using graph::GraphBuilder;
using graph::Shape;
using namespace layout_test;

TEST(LayoutDynamic, FollowsASymbolicSizeBetweenExecutions) {
  GraphBuilder b;
  const graph::SymId seq = b.sym("seq", 2, 40);
  auto h = b.input("h", DType::f16, {seq, 7});
  auto h2 = b.input("h2", DType::f16, {seq, 3});
  auto k = b.input("k", DType::boolean, {seq, 1});
  auto f = b.input("f", DType::f32, {1, seq, 6});
  auto out = [&](const char* name, const char* op, std::vector<graph::ValueId> in, graph::Attrs attrs) {
    b.output(name, b.op1(op, std::move(in), std::move(attrs), name));
  };
  out("transpose", "transpose", {h}, {{"dim0", 0}, {"dim1", 1}});
  out("inner", "slice", {h}, {{"start", 1}, {"end", -1}});
  out("last_h", "select", {h}, {{"dim", 0}, {"index", -1}});
  out("cat_cols", "cat", {h, h2}, {{"dim", -1}});
  out("cat_rows", "cat", {h, h}, {{"dim", 0}});
  out("expand", "expand", {k}, {{"sizes", Shape{-1, 5}}});
  out("last_f", "select", {f}, {{"dim", 1}, {"index", -1}});
  out("tail_f", "slice", {f}, {{"dim", 1}, {"start", -2}});
  Program prog(testing::shared_context(), b.build(), b.weights());
  EXPECT_EQ(route_of(prog, "last_f").route, "copy");
  EXPECT_EQ(route_of(prog, "tail_f").route, "copy");
  EXPECT_EQ(route_of(prog, "last_h").route, "gather");
  EXPECT_EQ(route_of(prog, "cat_rows").route, "gather");

  uint32_t seed = 300;
  for (int64_t n : {40, 17, 2, 29}) {
    SCOPED_TRACE("seq = " + std::to_string(n));
    const HostTensor hh = random_tensor(DType::f16, {n, 7}, seed++);
    const HostTensor hh2 = random_tensor(DType::f16, {n, 3}, seed++);
    const HostTensor hk = random_tensor(DType::boolean, {n, 1}, seed++);
    const HostTensor hf = random_tensor(DType::f32, {1, n, 6}, seed++);
    set_input(prog, "h", hh);
    set_input(prog, "h2", hh2);
    set_input(prog, "k", hk);
    set_input(prog, "f", hf);
    prog.execute();
    auto check = [&](const char* name, const HostTensor& in, std::vector<int64_t> shape,
                     const std::function<Index(const Index&)>& source) {
      ASSERT_EQ(prog.output_shape(name), shape) << name;
      EXPECT_TRUE(same_bits(read_bits(prog, name, in.dtype), reference(in, shape, source))) << name;
    };
    check("transpose", hh, {7, n}, [](const Index& c) { return Index{c[1], c[0]}; });
    check("inner", hh, {n - 2, 7}, [](const Index& c) { return Index{1 + c[0], c[1]}; });
    check("last_h", hh, {7}, [n](const Index& c) { return Index{n - 1, c[0]}; });
    check("expand", hk, {n, 5}, [](const Index& c) { return Index{c[0], 0}; });
    check("last_f", hf, {1, 6}, [n](const Index& c) { return Index{0, n - 1, c[1]}; });
    check("tail_f", hf, {1, 2, 6}, [n](const Index& c) { return Index{0, n - 2 + c[1], c[2]}; });
    // The cats: columns [n, 7 + 3] and rows [2n, 7], from two sources each.
    std::vector<uint32_t> cols, rows = hh.bits;
    for (int64_t r = 0; r < n; ++r) {
      cols.insert(cols.end(), hh.bits.begin() + r * 7, hh.bits.begin() + r * 7 + 7);
      cols.insert(cols.end(), hh2.bits.begin() + r * 3, hh2.bits.begin() + r * 3 + 3);
    }
    rows.insert(rows.end(), hh.bits.begin(), hh.bits.end());
    EXPECT_TRUE(same_bits(read_bits(prog, "cat_cols", DType::f16), cols));
    EXPECT_TRUE(same_bits(read_bits(prog, "cat_rows", DType::f16), rows));
  }
}

}  // namespace
}  // namespace wgx::runtime
