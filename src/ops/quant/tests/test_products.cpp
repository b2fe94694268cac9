// linear with q4gsw weights, linear_qkv and linear_swiglu (q4gsw, f32, f16) and their
// add_rms_norm_ forms on the GPU against a double reference computed from the host-dequantized
// weights (and the f16-rounded inputs), held to quant_test_util.h's bound; the route each node
// takes and why the others declined; one dispatch per node (plus q4_gemm's reduce pass where it
// splits K or packs odd f16 widths, the pack and swiglu passes of the other routes, and the
// norm's own dispatch wherever q4_gemv's prologue does not take it); and M symbolic across
// executions.
#include <algorithm>
#include <map>

#include "quant_program.h"

namespace wgx::runtime {
namespace {

using testing::shared;

TEST(QuantProducts, EveryNodeMatchesTheDequantizedReference) {
  testing::Shared& s = shared();
  for (const std::string& name : s.products.names()) s.products.set(*s.prog, name, s.products.spec(name).m);
  s.prog->execute();
  for (const std::string& name : s.products.names()) s.products.verify(*s.prog, name);
  // One dispatch per node; q4_gemm nodes add the reduce pass unless K = 32 (one slice: no split)
  // and the output is f32 or of even widths; of the other nodes, the three f16 nodes with an odd
  // output width (g3_x16, qkv_d37_x16, n_qkv_d37_x16) add a pack pass each, and the three linear_swiglu nodes whose kernel writes f32
  // scratch add the swiglu pass.
  // The add_rms_norm_ nodes add add_rms_norm's dispatch, except at one row of f32 x into q4_gemv
  // (the prologue): n_qkv_g1, n_sw_g1_k2048 and n_lin_g1 run one dispatch each. q4_gemm nodes
  // above 4 rows round x to int8 first (q8_chunks: one more), but for the add_rms_norm_ ones,
  // whose norm dispatch writes x in int8 itself.
  size_t reduced = 0, normalized = 0, quantized = 0;
  for (const testing::ProductSpec& p : testing::product_specs()) {
    const std::vector<int64_t> widths = p.splits.empty() ? std::vector<int64_t>{p.swiglu ? p.n / 2 : p.n} : p.splits;
    const bool odd_f16 =
        p.x == graph::DType::f16 && std::any_of(widths.begin(), widths.end(), [](int64_t w) { return w % 2 != 0; });
    if (std::string(p.route) == "q4_gemm" && (p.k > 32 || odd_f16)) ++reduced;
    if (std::string(p.route) == "q4_gemm" && p.m > 4 && !p.norm) ++quantized;
    if (p.norm && !(p.m == 1 && p.x == graph::DType::f32 && p.group != 0)) ++normalized;
  }
  EXPECT_EQ(normalized, 8u);
  EXPECT_EQ(s.prog->dispatches_per_execute(),
            testing::product_specs().size() + testing::embedding_specs().size() + reduced + normalized + quantized + 3 + 3);
}

TEST(QuantProducts, RoutesDeclineForTheirGuards) {
  testing::Shared& s = shared();
  using V = std::vector<std::string>;
  EXPECT_EQ(s.products.choice(*s.prog, "t37").rejected, V{"q4_gemv: M is up to 37; q4_gemv takes M <= 4"});
  EXPECT_EQ(s.products.choice(*s.prog, "f37").rejected, V{"q4_gemv: M is up to 37; q4_gemv takes M <= 4"});
  EXPECT_EQ(s.products.choice(*s.prog, "qkv_d37").rejected,
            (V{"q4_gemv: the weight is not q4gsw", "q4_gemm: the weight is not q4gsw", "q4_bk32: the weight is not q4gsw",
               "gemv: M is up to 37; gemv takes M <= 4"}));
  EXPECT_TRUE(s.products.choice(*s.prog, "g1").rejected.empty());
}

TEST(QuantProducts, SymbolicRowsResizeBetweenDecodeAndPrefill) {
  // One program: decode (M = 1) runs the gemv kernel, prefill (M = 37) the GEMM, then decode
  // again; every resize recomputes params and dispatch sizes, and the split-K plan (partials and
  // the reduce pass, or the output written directly) changes with M, as do the int8 GEMM's tiles
  // (16 rows up to M = 32: 5, 16, 17 and 32 take them, in one or two tiles; 64 rows above).
  testing::Shared& s = shared();
  const std::vector<const char*> names{"sym", "sym_x16", "sw_sym", "sym_big", "n_sw_sym"};
  for (int64_t m : {1, 37, 1, 5, 4, 2, 300, 131, 3, 16, 17, 32, 33, 256, 64, 65, 200, 1}) {
    for (const char* name : names) s.products.set(*s.prog, name, std::min<int64_t>(m, s.products.spec(name).m));
    s.prog->execute();
    for (const char* name : names) s.products.verify(*s.prog, name);
  }
}

TEST(QuantProducts, FewRowsGiveARowTheSameBitsWhateverRowsAreBeside) {
  // Continuous batching's steps hold 5 to 64 rows (llm::Batch): a row's output must not depend on
  // how many rows run beside it or what they hold, so that a greedy sequence gets the same tokens
  // alone as in a batch. Up to 64 rows q4_gemm splits K as for one 64-row tile, with int8 x in
  // 16-row tiles up to 32 rows and 64-row tiles above: the first 5 rows of x, alone (M = 5) and
  // among other random rows (M = 17, 40, 64: both tile sizes), give bit-identical outputs, in f32
  // and f16, through linear_qkv's split and linear_swiglu's pairs. The control: at 200 rows (four
  // tiles, fewer splits of a long K) the same 5 rows come out different, which the comparison
  // catches.
  const graph::DType f16 = graph::DType::f16, f32 = graph::DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"lin", 200, 113, 8192, 32, f32, f32, true, {}, "q4_gemm", true},  // 256 splits of K; 64 at 200 rows
      {"qkv_x16", 200, 64, 512, 64, f16, f16, true, {32, 16, 16}, "q4_gemm", true},
      {"sw", 200, 46, 768, 32, f32, f32, false, {}, "q4_gemm", true, false, true},
  };
  graph::GraphBuilder b;
  testing::Products p;
  for (const auto& s : specs) p.add(b, s);
  Program prog(testing::shared_context(), b.build(), b.weights());
  constexpr int64_t kRows = 5;
  std::map<std::string, std::vector<uint8_t>> keep;  // the first kRows rows of x, by node
  // The output bytes of the first kRows rows, those rows of x beside m - kRows random ones.
  auto run = [&](int64_t m) {
    for (const auto& s : specs) {
      p.set(prog, s.name, m);
      std::vector<uint8_t> x = p.x(s.name).bytes;
      std::vector<uint8_t>& first = keep[s.name];
      if (first.empty()) first.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(x.size() / m * kRows));
      std::copy(first.begin(), first.end(), x.begin());
      prog.set_input(s.name, x, {m, s.k});
    }
    prog.execute();
    std::map<std::string, std::vector<uint8_t>> got;
    for (const auto& s : specs) {
      const std::vector<std::string> outs =
          s.splits.empty() ? std::vector<std::string>{".y"} : std::vector<std::string>{".q", ".k", ".v"};
      for (const std::string& out : outs) {
        const std::vector<uint8_t> all = prog.read_storage(s.name + out);
        got[s.name + out].assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(all.size() / m * kRows));
      }
    }
    return got;
  };
  const auto alone = run(kRows);
  for (int64_t m : {17, 40, 64}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    EXPECT_EQ(run(m), alone);
  }
  EXPECT_NE(run(200), alone);
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
  // with the wrong offset would compute), the correct output is outside the bound, for a gemv
  // node and a GEMM one.
  testing::Shared& s = shared();
  for (const char* name : {"g1", "f37"}) {
    SCOPED_TRACE(name);
    const testing::ProductSpec& p = s.products.spec(name);
    s.products.set(*s.prog, name, p.m);
    s.prog->execute();
    s.products.verify(*s.prog, name);
    std::vector<uint8_t> bytes = s.products.weight(name).bytes;
    for (int64_t i = 0; i < p.n * p.k / 2; ++i) bytes[i] -= 0x11;  // the quantizer never writes nibble 0
    const auto wrong = ops::dequantize_q4gsw(bytes, p.n, p.k, p.group, p.scale);
    const auto want =
        testing::linear_dots(s.products.x(name).values, p.m, p.k, wrong, p.n, s.products.bias(name).values);
    EXPECT_FALSE(testing::within_bound(s.prog->read_f32(std::string(name) + ".y"), want, p.k, false));
  }
}

TEST(QuantProducts, NormBoundRejectsAMissingNormOrNormWeight) {
  // Negative control for the add_rms_norm_ nodes: the product of x + residual unnormalized, or
  // normalized without the norm weight, is outside the bound of the correct output (the fused
  // one-row kernel and the GEMM path).
  testing::Shared& s = shared();
  for (const char* name : {"n_qkv_g1", "n_sw_sym"}) {
    SCOPED_TRACE(name);
    const testing::ProductSpec& p = s.products.spec(name);
    s.products.set(*s.prog, name, p.m);
    s.prog->execute();
    s.products.verify(*s.prog, name);
    const auto [normalized, sum] = s.products.normalized(name);
    std::vector<float> no_weight = normalized;
    const std::vector<float>& nw = s.products.norm_weight(name).values;
    for (size_t i = 0; i < no_weight.size(); ++i) no_weight[i] /= nw[i % static_cast<size_t>(p.k)];
    for (const std::vector<float>* x : std::initializer_list<const std::vector<float>*>{&sum, &no_weight}) {
      testing::Reference want = testing::linear_dots(*x, p.m, p.k, s.products.weight(name).values, p.n,
                                                     s.products.bias(name).values);
      if (p.swiglu) want = testing::swiglu_reference(want, p.m, p.n);
      const int64_t width = p.splits.empty() ? (p.swiglu ? p.n / 2 : p.n) : p.splits[0];
      testing::Reference first;  // output 0's columns
      const int64_t n = p.swiglu ? p.n / 2 : p.n;
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < width; ++j) {
          first.values.push_back(want.values[i * n + j]);
          first.magnitude.push_back(want.magnitude[i * n + j]);
        }
      }
      const std::string out = std::string(name) + (p.splits.empty() ? ".y" : ".q");
      EXPECT_FALSE(testing::within_bound(s.prog->read_f32(out), first, p.k + testing::Products::norm_terms(p), false));
    }
  }
}

}  // namespace
}  // namespace wgx::runtime
