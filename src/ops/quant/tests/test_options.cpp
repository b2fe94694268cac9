// The q4 product kernels' paths and options: the one-row and four-row kernels at every lane
// count their K gives (1 to 256), with the subgroup reduction where a device has subgroups of
// one fixed size and through workgroup memory where it has none; the one-row kernel's staging
// over one or many workgroups per row and its add_rms_norm prologue; int8 x (quant_gemv_x8, with
// its own bound); the diagnostics that end it early (quant_gemv_stop). Likewise q4_gemm's int8 x
// (quant_gemm_x8) with its splits of K, and the tiled route that a device with less workgroup
// memory prefills with. A malformed option is a build error that names it.
#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "quant_program.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::Products;

TEST(QuantOptions, EveryLaneCountAndReductionMatches) {
  // Lanes per column group by K (a 32-value chunk per lane): 1 at K = 32 ("k32"), 2 at 64
  // ("qkv", "sw_odd"), 4 at 128, 64 at 2,048 ("b"), 256 at 8,192 ("k8192": four rows, x read
  // where it lies). Where subgroups have one fixed size (SwiftShader's 4) the products whose
  // column groups are whole subgroups take sgwg: "a" and "sw" (4 lanes: one subgroup, no
  // barrier), "b", "n_sw" and "k8192" (subgroups summed through workgroup memory); the others
  // keep wg. On a device without subgroups every product takes wg. The kernels that ran
  // (profiled dispatches) show it.
  const DType f16 = DType::f16, f32 = DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"a", 4, 113, 128, 32, f16, f32, true, {}, "q4_gemv"},
      {"b", 1, 38, 2048, 64, f32, f16, false, {}, "q4_gemv"},
      {"qkv", 2, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
      {"sw", 1, 44, 128, 32, f32, f16, true, {}, "q4_gemv", false, false, true},
      {"sw_odd", 3, 38, 64, 32, f16, f32, false, {}, "q4_gemv", false, false, true},
      {"n_sw", 1, 44, 128, 32, f32, f32, true, {}, "q4_gemv", false, false, true, true},  // the prologue
      {"k32", 1, 113, 32, 32, f32, f32, true, {}, "q4_gemv"},
      {"k8192", 3, 11, 8192, 64, f32, f32, false, {}, "q4_gemv"},
  };
  for (const bool subgroups : {true, false}) {
    SCOPED_TRACE(subgroups ? "the shared device" : "a device without subgroups");
    gpu::Context& device = subgroups ? testing::shared_context() : testing::device_like(false);
    const gpu::AdapterDescription& a = device.adapter();
    const bool fixed = device.features().subgroups && a.subgroup_min_size == a.subgroup_max_size;
    if (subgroups && !fixed) continue;  // the other device covers this one
    graph::GraphBuilder b;
    Products p;
    for (const auto& s : specs) p.add(b, s);
    Program prog(device, b.build(), b.weights());
    prog.set_timing(gpu::Timing::Dispatches);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    std::set<std::string> sgwg;  // the nodes whose product kernel took sgwg
    for (const gpu::DispatchTiming& t : prog.last_timings()) {
      if (t.kernel.find(".sgwg.") != std::string::npos) sgwg.insert(t.label);
    }
    if (!device.features().timestamp_query) continue;  // no timings to tell
    if (!subgroups) {
      EXPECT_TRUE(sgwg.empty());
    } else if (a.subgroup_min_size == 4) {
      // Nodes as the timings name them ("#<node> <op>").
      EXPECT_EQ(sgwg, (std::set<std::string>{"#0 linear", "#1 linear", "#3 linear_swiglu",
                                             "#5 add_rms_norm_linear_swiglu", "#7 linear"}));
    }
  }
}

TEST(QuantOptions, StagedProductsMatchWithOneOrManyWorkgroupsPerRow) {
  // A one-row product that stages x (in int8, or normalized by the add_rms_norm prologue) runs
  // at most 512 workgroups per row (256 with f32 x), each taking every G-th column tile. With
  // quant_gemv_stage_wgs = 1 one workgroup walks every tile (n_qkv: 61 columns, 64 lanes a column
  // group, so 16 columns a tile, 4 tiles); with 2, the tiles halve their lanes where that makes
  // one tile a workgroup (n_qkv: 32 lanes, 2 tiles). Every variant the decoder uses: plain, qkv
  // split with bias, swiglu, the norm prologue (int8 and f32 x), f16 scales, four rows; results
  // within the bound every way. The prologue runs inside the product, one dispatch a node, but
  // where it does not fit: n_wide's f32 x (8,192 values) and the kernel's other workgroup memory
  // take 37,888 bytes, so a smaller device normalizes in a dispatch of its own first.
  const DType f16 = DType::f16, f32 = DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"plain", 1, 113, 1024, 64, f32, f32, true, {}, "q4_gemv"},
      {"rows4", 4, 38, 256, 32, f16, f32, false, {}, "q4_gemv"},
      {"qkv", 1, 61, 128, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
      {"n_qkv", 1, 61, 2048, 32, f32, f32, true, {37, 11, 13}, "q4_gemv", false, false, false, true},
      {"n_sw", 1, 44, 96, 32, f16, f32, false, {}, "q4_gemv", false, false, true, true},
      {"n_wide", 1, 64, 8192, 32, f32, f32, false, {}, "q4_gemv", false, false, true, true},
  };
  for (const char* wgs : {"", "1", "2", "256"}) {
    SCOPED_TRACE(std::string("stage workgroups '") + wgs + "'");
    graph::GraphBuilder b;
    Products p;
    for (const auto& s : specs) p.add(b, s);
    RuntimeOptions options;
    if (*wgs) options["quant_gemv_stage_wgs"] = wgs;
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    const bool fits = testing::shared_context().limits().max_compute_workgroup_storage_size >= 37888;
    EXPECT_EQ(prog.dispatches_per_execute(), specs.size() + (fits ? 0 : 1));
  }
}

TEST(QuantOptions, Int8ActivationsStayWithinTheirBound) {
  // quant_gemv_x8 on: every one-row q4 product stages x in int8 (one scale per 32 values) and
  // sums with dot4I8Packed; the results stay within the f32 bound plus x's rounding (ProductSpec
  // x8), with either reduction, one or many staging workgroups, chunks of zeros (a zero scale)
  // and group sizes above 32. The rounding is real: the plain f32 bound rejects the int8
  // results (so it would catch int8 where f32 was asked for), and the four-row kernel, which
  // reads x where it lies in f32, still meets it.
  const DType f32 = DType::f32;
  struct Case {
    bool subgroups;  // the shared device (sgwg where its subgroups allow), or one without (wg)
    const char* stage_wgs;
  };
  for (const Case& c : {Case{true, "256"}, Case{true, "1"}, Case{false, "256"}, Case{false, "1"}}) {
    SCOPED_TRACE(std::string(c.subgroups ? "the shared device" : "a device without subgroups") + ", workgroups " +
                 c.stage_wgs);
    gpu::Context& device = c.subgroups ? testing::shared_context() : testing::device_like(false);
    graph::GraphBuilder b;
    Products p;
    const std::vector<testing::ProductSpec> specs{
        {"plain", 1, 113, 2048, 32, f32, f32, true, {}, "q4_gemv"},
        {"g128", 1, 38, 256, 128, DType::f16, f32, false, {}, "q4_gemv"},
        {"n_qkv", 1, 61, 1024, 32, f32, f32, true, {37, 11, 13}, "q4_gemv", false, false, false, true},
        {"n_sw", 1, 44, 512, 64, f32, f32, false, {}, "q4_gemv", false, false, true, true},
        {"four", 3, 37, 128, 32, f32, f32, true, {}, "q4_gemv"},  // R = 4: f32 x
        {"short", 1, 113, 64, 32, f32, f32, true, {}, "q4_gemv"},  // against int8_rounded below
        // 384 quarter chunks: two rounds of the staging's 256 invocations, the second part idle.
        {"k3072", 1, 40, 3072, 32, f32, f32, false, {}, "q4_gemv"},
        {"n_k3072", 1, 24, 3072, 32, f32, f32, false, {}, "q4_gemv", false, false, true, true},
    };
    for (testing::ProductSpec s : specs) {
      s.x8 = s.m == 1;
      p.add(b, s);
    }
    Program prog(device, b.build(), b.weights(), {{"quant_gemv_x8", "on"}, {"quant_gemv_stage_wgs", c.stage_wgs}});
    for (const auto& s : specs) p.set(prog, s.name, s.m, s.name == "plain" ? 96 : 0);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    EXPECT_EQ(prog.dispatches_per_execute(), specs.size());  // the prologues inside the products
    // The control: the plain bound against the same results.
    const testing::Reference plain = testing::linear_dots(p.x("plain").values, 1, 2048, p.weight("plain").values, 113,
                                                          p.bias("plain").values);
    EXPECT_FALSE(testing::within_bound(prog.read_f32("plain.y"), plain, 2048, false)) << "no int8 rounding seen";
    // Where K is short the f32 bound is far below the rounding's effect, and x rounded as the
    // kernel should round it gives the product within that bound (rounding down instead, say,
    // would not).
    const testing::Int8Dots want =
        testing::int8_rounded_dots(p.x("short").values, 1, 64, p.weight("short").values, 113, p.bias("short").values);
    EXPECT_TRUE(testing::within_bound(testing::less_slack(prog.read_f32("short.y"), want), want.ref, 64, false));
  }
}

TEST(QuantOptions, Int8ActivationsByDefaultForRowsUpTo4096) {
  // Unset, quant_gemv_x8 rounds x to int8 for the one-row products over rows of K <= 4096, wide
  // or narrow, and not for longer rows; off, for none. With K = 64 the f32 bound is far below
  // the rounding's effect, so the plain bound tells the two apart; the K = 4128 product is
  // verified against the f32 bound either way (which int8 rounding would fail).
  const DType f32 = DType::f32;
  for (const char* x8 : {"", "off"}) {
    SCOPED_TRACE(std::string("quant_gemv_x8 '") + x8 + "'");
    graph::GraphBuilder b;
    Products p;
    const std::vector<testing::ProductSpec> specs{
        {"wide", 1, 8192, 64, 32, f32, f32, true, {}, "q4_gemv"},
        {"n_wide", 1, 8192, 64, 32, f32, f32, false, {}, "q4_gemv", false, false, true, true},  // gate/up
        {"narrow", 1, 8190, 64, 32, f32, f32, true, {}, "q4_gemv"},
        {"long", 1, 8192, 4128, 32, f32, f32, false, {}, "q4_gemv"},
    };
    const bool on = *x8 == 0;
    for (testing::ProductSpec s : specs) {
      s.x8 = on && s.k <= 4096;
      p.add(b, s);
    }
    p.gemv_x8_default = on;
    RuntimeOptions options;
    if (!on) options["quant_gemv_x8"] = x8;
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    for (const auto& [name, n] : {std::pair<const char*, int64_t>{"wide", 8192}, {"narrow", 8190}}) {
      const testing::Reference plain =
          testing::linear_dots(p.x(name).values, 1, 64, p.weight(name).values, n, p.bias(name).values);
      EXPECT_EQ(testing::within_bound(prog.read_f32(std::string(name) + ".y"), plain, 64, false), !on) << name;
    }
  }
}

// A malformed option is refused before anything is built (the table's message, runtime/options.h).
TEST(QuantOptions, BadGemvOptionIsABuildError) {
  using Case = std::array<const char*, 3>;  // option, value, message
  for (const Case& c : {Case{"quant_gemv_x8", "yes", "runtime option quant_gemv_x8 is 'yes'; it takes auto | on | off"},
                        Case{"quant_gemv_stage_wgs", "0", "runtime option quant_gemv_stage_wgs is '0'; it takes auto | 1"},
                        Case{"quant_gemv_stage_wgs", "x", "runtime option quant_gemv_stage_wgs is 'x'; it takes auto | 1"}}) {
    graph::GraphBuilder b;
    Products p;
    p.add(b, {"a", 1, 32, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
    EXPECT_TRUE(testing::build_fails(b, {{c[0], c[1]}}, c[2])) << c[0] << "=" << c[1];
  }
}

TEST(QuantOptions, StopLeavesTheProductUnwritten) {
  // quant_gemv_stop (diagnostics) ends q4_gemv after a phase (the norm prologue's reads, the
  // staging, the products): that program's output is never written, while the same
  // graph without the option computes the product (within its bound: the control). The spec
  // (add_rms_norm_linear_swiglu) has the norm prologue, so every stop point is reached.
  const DType f32 = DType::f32;
  const testing::ProductSpec spec{"a", 1, 44, 256, 32, f32, f32, false, {}, "q4_gemv", false, false, true, true};
  for (const char* stop : {"read", "stage", "products"}) {
    SCOPED_TRACE(stop);
    graph::GraphBuilder b;
    Products p;
    p.add(b, spec);
    Program full(testing::shared_context(), b.build(), b.weights());
    p.set(full, "a", 1);
    full.execute();
    p.verify(full, "a");
    Program cut(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_stop", stop}});
    p.set(cut, "a", 1);
    cut.execute();
    const std::vector<float> y = cut.read_f32("a.y");
    EXPECT_NE(y, full.read_f32("a.y")) << "the product was computed";
  }
  graph::GraphBuilder b;
  Products p;
  p.add(b, spec);
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemv_stop", "reduce"}}, "runtime option quant_gemv_stop is 'reduce'"));
}

TEST(QuantOptions, GemmSplitsGiveTheSameResultsWithEitherX) {
  // q4_gemm splits K by shape (aiming for 256 workgroups): at these sizes every slice a split
  // (partials, then the reduce pass), the GEMM writing y itself where K = 32 is one slice, and
  // "uneven" (26 tiles: ceil(256 / 26) = 10 splits asked of 11 slices) in splits of two slices
  // but the last of one. With x in int8 (quant_gemm_x8, the default: its own bound, q8_chunks'
  // dispatch more per node) and in f32.
  const DType f16 = DType::f16, f32 = DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"a", 37, 113, 128, 32, f16, f32, true, {}, "q4_gemm"},
      {"b", 41, 38, 256, 64, f32, f16, true, {}, "q4_gemm"},
      {"odd", 37, 113, 64, 32, f32, f16, false, {}, "q4_gemm"},  // odd f16 width: the reduce pass packs
      {"one", 37, 113, 32, 32, f32, f32, true, {}, "q4_gemm"},   // one slice: y written by the GEMM
      {"qkv", 37, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemm"},
      {"qkv_x16", 37, 64, 96, 32, f16, f16, false, {32, 16, 16}, "q4_gemm", false, true},
      {"sw", 37, 44, 128, 32, f32, f16, true, {}, "q4_gemm", false, false, true},
      {"sw_tail", 37, 42, 64, 64, f16, f32, false, {}, "q4_gemm", false, false, true},  // N % 4 == 2
      {"uneven", 37, 3328, 352, 32, f32, f32, false, {}, "q4_gemm"},
      {"sym", 133, 139, 64, 32, f32, f32, true, {}, "q4_gemm", true},
  };
  const size_t reduced = specs.size() - 1;  // all but "one"
  for (const bool x8 : {true, false}) {
    SCOPED_TRACE(x8 ? "int8 x" : "f32 x");
    graph::GraphBuilder b;
    Products p;
    p.gemm_x8 = x8;
    for (const auto& s : specs) p.add(b, s);
    RuntimeOptions options;
    if (!x8) options["quant_gemm_x8"] = "off";
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    EXPECT_EQ(prog.dispatches_per_execute(), (x8 ? 2 : 1) * specs.size() + reduced);
    for (int64_t m : {3, 70, 5}) {  // q4_gemv's part, then the GEMM again
      p.set(prog, "sym", m);
      prog.execute();
      p.verify(prog, "sym");
    }
  }
}

TEST(QuantOptions, GemmRoundsXToInt8UnlessTurnedOff) {
  // By default q4_gemm rounds x to int8 (q8_chunks) and multiplies in int8; with K = 64 the plain
  // f32 bound is far below that rounding's effect, so it tells the two apart (the control: off,
  // the plain bound holds). x rounded on the host as the kernel should round it gives the
  // product within the plain bound (rounding down instead, say, would not), for f32 and f16 x;
  // a value at a tie of the rounding may go either way on a GPU (int8_rounded_dots' slack).
  const DType f16 = DType::f16, f32 = DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"f32x", 37, 113, 64, 32, f32, f32, true, {}, "q4_gemm"},
      {"f16x", 70, 40, 64, 32, f32, f16, false, {}, "q4_gemm"},
  };
  for (const bool x8 : {true, false}) {
    SCOPED_TRACE(x8 ? "default" : "quant_gemm_x8 off");
    graph::GraphBuilder b;
    Products p;
    p.gemm_x8 = x8;
    for (const auto& s : specs) p.add(b, s);
    RuntimeOptions options;
    if (!x8) options["quant_gemm_x8"] = "off";
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) {
      p.verify(prog, s.name);
      const std::vector<float> got = prog.read_f32(s.name + ".y");
      const std::vector<float>& x = p.x(s.name).values;
      const testing::Reference plain = testing::linear_dots(x, s.m, 64, p.weight(s.name).values, s.n, p.bias(s.name).values);
      EXPECT_EQ(testing::within_bound(got, plain, 64, s.x == f16), !x8) << s.name;
      if (!x8) continue;
      const testing::Int8Dots want = testing::int8_rounded_dots(x, s.m, 64, p.weight(s.name).values, s.n,
                                                                s.bias ? p.bias(s.name).values : std::vector<float>{});
      EXPECT_TRUE(testing::within_bound(testing::less_slack(got, want), want.ref, 64, s.x == f16))
          << s.name << ": x rounded on the host";
    }
  }
}

TEST(QuantOptions, LessWorkgroupMemoryLeavesPrefillToTheTiledRoute) {
  // A device with 16 KiB of workgroup memory (WebGPU's least; q4_gemm asks for 32) prefills with
  // q4_bk32, and its one-row steps with q4_gemv.
  gpu::Context& small = testing::device_like(true, 16384);
  const DType f16 = DType::f16, f32 = DType::f32;
  const std::vector<testing::ProductSpec> specs{
      {"t37", 37, 113, 128, 64, f32, f32, true, {}, "q4_bk32"},
      {"f37_x16", 37, 11, 96, 32, f16, f16, false, {}, "q4_bk32"},  // K = 96, odd N: scratch + pack
      {"qkv", 37, 64, 128, 64, f16, f16, true, {32, 16, 16}, "q4_bk32", false, true},
      {"qkv_f37", 37, 31, 96, 32, f32, f32, false, {11, 7, 13}, "q4_bk32"},
      {"sw", 37, 42, 128, 32, f32, f32, true, {}, "q4_bk32", false, false, true},
      {"sym", 37, 113, 128, 32, f16, f32, true, {}, "q4_bk32", true},
  };
  graph::GraphBuilder b;
  Products p;
  for (const auto& s : specs) p.add(b, s);
  Program prog(small, b.build(), b.weights());
  for (const auto& s : specs) p.set(prog, s.name, s.m);
  prog.execute();
  for (const auto& s : specs) p.verify(prog, s.name);
  for (int64_t m : {3, 5}) {
    p.set(prog, "sym", m);
    prog.execute();
    p.verify(prog, "sym");
  }
  EXPECT_EQ(p.choice(prog, "t37").rejected,
            (std::vector<std::string>{"q4_gemv: M is up to 37; q4_gemv takes M <= 4",
                                      "q4_gemm: needs 32768 bytes of workgroup storage"}));
}

TEST(QuantOptions, BadGemmOptionIsABuildError) {
  graph::GraphBuilder b;
  Products p;
  p.add(b, {"a", 37, 11, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemm"});
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemm_x8", "yes"}}, "runtime option quant_gemm_x8 is 'yes'; it takes on | off"));
}

}  // namespace
}  // namespace wgx::runtime
