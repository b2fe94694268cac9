// cat against a CPU reference for every storage dtype: three inputs along a middle dim whose slab
// boundaries fall inside packed words, nine inputs (two dispatches sharing boundary words), and
// a dim-0 cat that is plain buffer copies where the inputs are whole words.
#include "layout_test_util.h"

namespace wgx::runtime {
namespace {

using graph::GraphBuilder;
using namespace layout_test;

// The reference: output element c comes from the input whose range along `axis` holds c[axis].
std::vector<uint32_t> cat_reference(const std::vector<const HostTensor*>& ins, size_t axis,
                                    const std::vector<int64_t>& out_shape) {
  std::vector<uint32_t> out;
  Index c(out_shape.size(), 0);
  for (uint64_t i = 0; i < count(out_shape); ++i) {
    int64_t a = c[axis];
    size_t j = 0;
    while (a >= ins[j]->shape[axis]) a -= ins[j++]->shape[axis];
    Index s = c;
    s[axis] = a;
    uint64_t at = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      at = at * static_cast<uint64_t>(ins[j]->shape[d]) + static_cast<uint64_t>(s[d]);
    }
    out.push_back(ins[j]->bits.at(at));
    for (size_t d = c.size(); d-- > 0;) {
      if (++c[d] < out_shape[d]) break;
      c[d] = 0;
    }
  }
  return out;
}

class Cat : public ::testing::TestWithParam<DType> {};

TEST_P(Cat, JoinsInputsAcrossPackedWordBoundaries) {
  const DType dt = GetParam();
  GraphBuilder b;
  std::vector<HostTensor> three, nine;
  std::vector<graph::ValueId> three_ids, nine_ids;
  uint32_t seed = 100;
  for (int64_t n : {5, 3, 7}) {
    three.push_back(random_tensor(dt, {3, n, 11}, seed++));
    three_ids.push_back(b.input("t" + std::to_string(three.size()), dt, {3, n, 11}));
  }
  for (int64_t n : {1, 2, 3, 1, 1, 2, 1, 3, 1}) {
    nine.push_back(random_tensor(dt, {3, 5, n}, seed++));
    nine_ids.push_back(b.input("n" + std::to_string(nine.size()), dt, {3, 5, n}));
  }
  b.output("three", b.op1("cat", three_ids, {{"dim", -2}}, "three"));
  b.output("nine", b.op1("cat", nine_ids, {{"dim", 2}}, "nine"));
  b.output("rows", b.op1("cat", {three_ids[0], three_ids[0]}, {{"dim", 0}}, "rows"));
  Program prog(testing::shared_context(), b.build(), b.weights());
  for (size_t i = 0; i < three.size(); ++i) set_input(prog, "t" + std::to_string(i + 1), three[i]);
  for (size_t i = 0; i < nine.size(); ++i) set_input(prog, "n" + std::to_string(i + 1), nine[i]);
  prog.execute();

  EXPECT_EQ(prog.output_shape("three"), (std::vector<int64_t>{3, 15, 11}));
  EXPECT_TRUE(same_bits(read_bits(prog, "three", dt),
                        cat_reference({&three[0], &three[1], &three[2]}, 1, {3, 15, 11})));
  std::vector<const HostTensor*> nine_ptrs;
  for (const auto& t : nine) nine_ptrs.push_back(&t);
  EXPECT_EQ(prog.output_shape("nine"), (std::vector<int64_t>{3, 5, 15}));
  EXPECT_TRUE(same_bits(read_bits(prog, "nine", dt), cat_reference(nine_ptrs, 2, {3, 5, 15})));
  EXPECT_TRUE(same_bits(read_bits(prog, "rows", dt), cat_reference({&three[0], &three[0]}, 0, {6, 5, 11})));

  EXPECT_EQ(route_of(prog, "three").route, "gather");
  EXPECT_EQ(route_of(prog, "nine").route, "gather");
  // Inputs of 165 elements are whole words only with 4-byte elements.
  EXPECT_EQ(route_of(prog, "rows").route, word_sized(dt) ? "copy" : "gather");
  // three: one dispatch; nine: two groups (7 + 2); rows: buffer copies or one dispatch.
  EXPECT_EQ(prog.dispatches_per_execute(), word_sized(dt) ? 3u : 4u);
}

INSTANTIATE_TEST_SUITE_P(DTypes, Cat, ::testing::ValuesIn(kDTypes), dtype_param_name);

}  // namespace
}  // namespace wgx::runtime
