// permute, transpose, slice, select and expand against CPU references at prime sizes, for every
// storage dtype (f32, i32, packed f16, bytes) with odd tails, negative dims and indices, strided
// slices and broadcasting; and which of the copy/gather routes each node takes.
#include "layout_test_util.h"

namespace wgx::runtime {
namespace {

using graph::GraphBuilder;
using graph::Shape;
using namespace layout_test;

class LayoutOps : public ::testing::TestWithParam<DType> {};

TEST_P(LayoutOps, MoveBitsAtPrimeSizes) {
  const DType dt = GetParam();
  GraphBuilder b;
  auto x = b.input("x", dt, {3, 37, 11});
  auto z = b.input("z", dt, {1, 37, 1});
  auto out = [&](const char* name, const char* op, graph::ValueId in, graph::Attrs attrs) {
    b.output(name, b.op1(op, {in}, std::move(attrs), name));
  };
  out("permute", "permute", x, {{"dims", Ints{1, -1, 0}}});
  out("transpose", "transpose", x, {{"dim0", 0}, {"dim1", -1}});
  out("slice_step", "slice", x, {{"dim", 1}, {"start", 2}, {"end", -3}, {"step", 3}});
  out("slice_last", "slice", x, {{"dim", -1}, {"start", -7}, {"step", 2}});
  out("slice_rows", "slice", x, {{"dim", 0}, {"start", 1}, {"end", 3}});
  out("select_mid", "select", x, {{"dim", 1}, {"index", -5}});
  out("select_row", "select", x, {{"dim", 0}, {"index", -1}});
  out("expand", "expand", z, {{"sizes", Shape{2, 3, -1, 5}}});
  Program prog(testing::shared_context(), b.build(), b.weights());
  const HostTensor hx = random_tensor(dt, {3, 37, 11}, 11), hz = random_tensor(dt, {1, 37, 1}, 12);
  set_input(prog, "x", hx);
  set_input(prog, "z", hz);
  prog.execute();

  struct Case {
    const char* name;
    std::vector<int64_t> shape;
    std::function<Index(const Index&)> source;
    const HostTensor* in;
  };
  const std::vector<Case> cases{
      {"permute", {37, 11, 3}, [](const Index& c) { return Index{c[2], c[0], c[1]}; }, &hx},
      {"transpose", {11, 37, 3}, [](const Index& c) { return Index{c[2], c[1], c[0]}; }, &hx},
      {"slice_step", {3, 11, 11}, [](const Index& c) { return Index{c[0], 2 + 3 * c[1], c[2]}; }, &hx},
      {"slice_last", {3, 37, 4}, [](const Index& c) { return Index{c[0], c[1], 4 + 2 * c[2]}; }, &hx},
      {"slice_rows", {2, 37, 11}, [](const Index& c) { return Index{1 + c[0], c[1], c[2]}; }, &hx},
      {"select_mid", {3, 11}, [](const Index& c) { return Index{c[0], 32, c[1]}; }, &hx},
      {"select_row", {37, 11}, [](const Index& c) { return Index{2, c[0], c[1]}; }, &hx},
      {"expand", {2, 3, 37, 5}, [](const Index& c) { return Index{0, c[2], 0}; }, &hz},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(prog.output_shape(c.name), c.shape) << c.name;
    EXPECT_TRUE(same_bits(read_bits(prog, c.name, dt), reference(*c.in, c.shape, c.source))) << c.name;
    // Dim-0 rows of 407 elements are whole words only for 4-byte elements.
    const std::string name = c.name;
    const bool copy = word_sized(dt) && (name == "slice_rows" || name == "select_row");
    EXPECT_EQ(route_of(prog, c.name).route, copy ? "copy" : "gather") << c.name;
  }
  if (!word_sized(dt)) {
    EXPECT_NE(testing::rejected(route_of(prog, "slice_rows")).find("4-byte words"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, LayoutOps, ::testing::ValuesIn(kDTypes), dtype_param_name);

// The copy route takes exactly the nodes whose bytes form aligned ranges (or the whole tensor)
// and refuses the rest, which the gather kernel then runs: both give the reference.
TEST(LayoutRoutes, CopyOnlyWhereRangesAreWholeWords) {
  GraphBuilder b;
  auto u = b.input("u", DType::u8, {5, 12});
  auto v = b.input("v", DType::boolean, {5, 7});
  auto h = b.input("h", DType::f16, {1, 9, 1, 6});
  auto out = [&](const char* name, const char* op, graph::ValueId in, graph::Attrs attrs) {
    b.output(name, b.op1(op, {in}, std::move(attrs), name));
  };
  out("u_rows", "slice", u, {{"start", 1}, {"end", 4}});                      // 12-byte rows
  out("v_rows", "slice", v, {{"start", 1}, {"end", 4}});                      // 7-byte rows
  out("h_slice", "slice", h, {{"dim", 1}, {"start", -4}});                    // leading 1, 12-byte rows
  out("h_step", "slice", h, {{"dim", 1}, {"start", 1}, {"step", 2}});         // strided
  out("h_select", "select", h, {{"dim", -1}, {"index", 2}});                  // not a block
  out("h_swap_ones", "transpose", h, {{"dim0", 0}, {"dim1", 2}});             // moves only 1s
  out("h_swap", "transpose", h, {{"dim0", 1}, {"dim1", -1}});                 // reorders
  out("h_keep", "expand", h, {{"sizes", Shape{1, -1, -1, -1, -1}}});          // adds a leading 1
  out("h_bcast", "expand", h, {{"sizes", Shape{-1, -1, 3, -1}}});             // broadcasts
  Program prog(testing::shared_context(), b.build(), b.weights());
  const HostTensor hu = random_tensor(DType::u8, {5, 12}, 21), hv = random_tensor(DType::boolean, {5, 7}, 22),
                   hh = random_tensor(DType::f16, {1, 9, 1, 6}, 23);
  set_input(prog, "u", hu);
  set_input(prog, "v", hv);
  set_input(prog, "h", hh);
  prog.execute();

  struct Case {
    const char* name;
    const char* route;
    const char* why;  // what the copy guard said, where it refused
    const HostTensor* in;
    std::vector<int64_t> shape;
    std::function<Index(const Index&)> source;
  };
  const std::vector<Case> cases{
      {"u_rows", "copy", "", &hu, {3, 12}, [](const Index& c) { return Index{1 + c[0], c[1]}; }},
      {"v_rows", "gather", "4-byte words", &hv, {3, 7}, [](const Index& c) { return Index{1 + c[0], c[1]}; }},
      {"h_slice", "copy", "", &hh, {1, 4, 1, 6}, [](const Index& c) { return Index{0, 5 + c[1], 0, c[3]}; }},
      {"h_step", "gather", "step > 1", &hh, {1, 4, 1, 6},
       [](const Index& c) { return Index{0, 1 + 2 * c[1], 0, c[3]}; }},
      {"h_select", "gather", "may exceed 1", &hh, {1, 9, 1}, [](const Index& c) { return Index{0, c[1], 0, 2}; }},
      {"h_swap_ones", "copy", "", &hh, {1, 9, 1, 6}, [](const Index& c) { return c; }},
      {"h_swap", "gather", "reorders", &hh, {1, 6, 1, 9}, [](const Index& c) { return Index{0, c[3], 0, c[1]}; }},
      {"h_keep", "copy", "", &hh, {1, 1, 9, 1, 6}, [](const Index& c) { return Index{0, c[2], 0, c[4]}; }},
      {"h_bcast", "gather", "broadcasts", &hh, {1, 9, 3, 6}, [](const Index& c) { return Index{0, c[1], 0, c[3]}; }},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(prog.output_shape(c.name), c.shape) << c.name;
    EXPECT_TRUE(same_bits(read_bits(prog, c.name, c.in->dtype), reference(*c.in, c.shape, c.source))) << c.name;
    const RouteChoice& r = route_of(prog, c.name);
    EXPECT_EQ(r.route, c.route) << c.name;
    EXPECT_NE(testing::rejected(r).find(c.why), std::string::npos) << c.name << ": " << testing::rejected(r);
  }
}

}  // namespace
}  // namespace wgx::runtime
