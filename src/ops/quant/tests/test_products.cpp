// linear with q4gsw weights and linear_qkv (q4gsw, f32, f16) on the GPU against a double
// reference computed from the host-dequantized weights (and the f16-rounded inputs), held to
// quant_test_util.h's bound; the route each node takes and why the others declined; one dispatch
// per node (plus a pack pass for f16 outputs of odd width); and M symbolic across executions.
#include "quant_program.h"

namespace wgx::runtime {
namespace {

using testing::shared;

TEST(QuantProducts, EveryNodeMatchesTheDequantizedReference) {
  testing::Shared& s = shared();
  for (const std::string& name : s.products.names()) s.products.set(*s.prog, name, s.products.spec(name).m);
  s.prog->execute();
  for (const std::string& name : s.products.names()) s.products.verify(*s.prog, name);
  // One dispatch per node; the four f16 nodes with an odd output width add a pack pass each, and
  // the six linear_swiglu nodes whose kernel writes f32 scratch add the swiglu pass.
  EXPECT_EQ(s.prog->dispatches_per_execute(),
            testing::product_specs().size() + testing::embedding_specs().size() + 4 + 6);
}

TEST(QuantProducts, RoutesDeclineForTheirGuards) {
  testing::Shared& s = shared();
  using V = std::vector<std::string>;
  EXPECT_EQ(s.products.choice(*s.prog, "t37").rejected, V{"q4_gemv: M is up to 37; q4_gemv takes M <= 4"});
  EXPECT_EQ(s.products.choice(*s.prog, "f37").rejected,
            (V{"q4_gemv: M is up to 37; q4_gemv takes M <= 4", "q4_bk64: K = 96 is not a multiple of 64"}));
  EXPECT_EQ(s.products.choice(*s.prog, "qkv_d37").rejected,
            (V{"q4_gemv: the weight is not q4gsw", "q4_bk64: the weight is not q4gsw", "q4_bk32: the weight is not q4gsw",
               "gemv: M is up to 37; gemv takes M <= 4"}));
  EXPECT_TRUE(s.products.choice(*s.prog, "g1").rejected.empty());
}

TEST(QuantProducts, SymbolicRowsResizeBetweenDecodeAndPrefill) {
  // One program: decode (M = 1) runs the gemv kernel, prefill (M = 37) the BK64 GEMM, then
  // decode again; every resize recomputes params and dispatch sizes.
  testing::Shared& s = shared();
  for (int64_t m : {1, 37, 1, 5, 4, 2}) {
    for (const char* name : {"sym", "sym_x16", "sw_sym"}) s.products.set(*s.prog, name, m);
    s.prog->execute();
    for (const char* name : {"sym", "sym_x16", "sw_sym"}) s.products.verify(*s.prog, name);
  }
}

TEST(QuantProducts, SwigluBoundRejectsSwappedGateAndUp) {
  // Negative control: silu(up) * gate, as a kernel pairing the columns the wrong way round would
  // compute, is outside the bound of the correct output.
  testing::Shared& s = shared();
  const testing::ProductSpec& p = s.products.spec("sw_g1");
  s.products.set(*s.prog, "sw_g1", 1);
  s.prog->execute();
  s.products.verify(*s.prog, "sw_g1");
  testing::Reference all = testing::linear_dots(s.products.x("sw_g1").values, 1, p.k, s.products.weight("sw_g1").values,
                                                p.n, s.products.bias("sw_g1").values);
  for (int64_t j = 0; j < p.n; j += 2) {
    std::swap(all.values[j], all.values[j + 1]);
    std::swap(all.magnitude[j], all.magnitude[j + 1]);
  }
  const testing::Reference swapped = testing::swiglu_reference(all, 1, p.n);
  EXPECT_FALSE(testing::within_bound(s.prog->read_f32("sw_g1.y"), swapped, p.k, false));
}

TEST(QuantProducts, BoundRejectsAnOffByOneDecoding) {
  // Negative control: against weights decoded one scale off ((nibble - 9) * scale, as a kernel
  // with the wrong offset would compute), the correct output is outside the bound.
  testing::Shared& s = shared();
  const testing::ProductSpec& p = s.products.spec("g1");
  s.products.set(*s.prog, "g1", 1);
  s.prog->execute();
  s.products.verify(*s.prog, "g1");
  std::vector<uint8_t> bytes = s.products.weight("g1").bytes;
  for (int64_t i = 0; i < p.n * p.k / 2; ++i) bytes[i] -= 0x11;  // the quantizer never writes nibble 0
  const auto wrong = ops::dequantize_q4gsw(bytes, p.n, p.k, p.group, p.scale);
  const auto want = testing::linear_dots(s.products.x("g1").values, 1, p.k, wrong, p.n, s.products.bias("g1").values);
  EXPECT_FALSE(testing::within_bound(s.prog->read_f32("g1.y"), want, p.k, false));
}

}  // namespace
}  // namespace wgx::runtime
