// The q4 gemv tuning options: quant_gemv_tpc (lanes per column pair or group in the workgroup
// reductions) at its extremes and quant_gemv_reduce (sg: subgroupAdd, wg: workgroup memory,
// sgwg: subgroupAdd then workgroup memory) every way (and the one-row and four-row kernels, by
// the specs' M) give results within the bound, and a bad value is a build error that names the
// option. Likewise q4_gemm's int8 x (quant_gemm_x8) with its splits of K, and the tiled route that
// a device with less workgroup memory prefills with. And the one-row
// kernel's x staging (quant_gemv_stage), add_rms_norm prologue (quant_gemv_norm) and int8 x
// (quant_gemv_x8, with its own bound).
#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "quant_program.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::Products;

TEST(QuantOptions, GemvLaneCountsGiveTheSameResults) {
  for (const char* tpc : {"1", "128", "256"}) {
    SCOPED_TRACE(tpc);
    graph::GraphBuilder b;
    Products p;
    p.add(b, {"a", 4, 113, 128, 32, DType::f16, DType::f32, true, {}, "q4_gemv"});
    p.add(b, {"b", 3, 11, 2048, 64, DType::f32, DType::f32, false, {}, "q4_gemv"});
    Program prog(testing::shared_context(), b.build(), b.weights(),
                 {{"quant_gemv_tpc", tpc}, {"quant_gemv_reduce", "wg"}});
    p.set(prog, "a", 4);
    p.set(prog, "b", 3);
    prog.execute();
    p.verify(prog, "a");
    p.verify(prog, "b");
  }
}

TEST(QuantOptions, EveryReductionMatches) {
  // With sgwg, the products whose column groups are whole subgroups take it: on SwiftShader's
  // subgroups of 4, "a" and "sw" (4 lanes: one subgroup, no barrier), "b" (16 subgroups summed
  // through workgroup memory) and "n_sw"; "qkv" and "sw_odd" (K = 64: 2 lanes) keep wg. The
  // kernels that ran (profiled dispatches) show it, and the other reductions' none.
  const gpu::AdapterDescription& a = testing::shared_context().adapter();
  const bool fixed = testing::shared_context().features().subgroups && a.subgroup_min_size == a.subgroup_max_size;
  for (const char* reduce : {"wg", "sg", "sgwg"}) {
    SCOPED_TRACE(reduce);
    if (std::string(reduce) != "wg" && !fixed) GTEST_SKIP() << "no subgroups of one fixed size on this adapter";
    graph::GraphBuilder b;
    Products p;
    const DType f16 = DType::f16, f32 = DType::f32;
    const std::vector<testing::ProductSpec> specs{
        {"a", 4, 113, 128, 32, f16, f32, true, {}, "q4_gemv"},
        {"b", 1, 38, 2048, 64, f32, f16, false, {}, "q4_gemv"},
        {"qkv", 2, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
        {"sw", 1, 44, 128, 32, f32, f16, true, {}, "q4_gemv", false, false, true},
        {"sw_odd", 3, 38, 64, 32, f16, f32, false, {}, "q4_gemv", false, false, true},
        {"n_sw", 1, 44, 128, 32, f32, f32, true, {}, "q4_gemv", false, false, true, true},  // the prologue
    };
    for (const auto& s : specs) p.add(b, s);
    Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_reduce", reduce}});
    prog.set_timing(gpu::Timing::Dispatches);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
    std::set<std::string> sgwg;  // the nodes whose product kernel took sgwg
    for (const gpu::DispatchTiming& t : prog.last_timings()) {
      if (t.kernel.find(".sgwg.") != std::string::npos) sgwg.insert(t.label);
    }
    if (std::string(reduce) == "sgwg" && a.subgroup_min_size == 4) {
      // Nodes as the timings name them ("#<node> <op>"): a, b, sw and n_sw (K = 64: two lanes, wg).
      EXPECT_EQ(sgwg, (std::set<std::string>{"#0 linear", "#1 linear", "#3 linear_swiglu",
                                             "#5 add_rms_norm_linear_swiglu"}));
    } else if (std::string(reduce) != "sgwg") {
      EXPECT_TRUE(sgwg.empty());
    }
  }
}

TEST(QuantOptions, StagingAndTheNormPrologueGiveTheSameResults) {
  // quant_gemv_norm (on by default) runs an add_rms_norm_ product at one row of f32 x in one
  // dispatch, off in two (add_rms_norm's kernel, then the product); quant_gemv_stage on stages x
  // in workgroup memory for the plain products too. Same results within the bound every way; the
  // dispatch count shows which path ran.
  const DType f32 = DType::f32;
  // quant_gemv_stage_wgs = 1 makes one workgroup stage x and take every column tile (4 each
  // here: a lane group of 64 or 32 lanes, 16 or 32 columns per workgroup); quant_gemv_one_tile
  // then gives that workgroup one tile of all the columns (16 or 8 lanes per column group, each
  // walking 4 chunks of a row), and with 2 workgroups one tile each. "": the default (one halving
  // of the lanes where that makes one tile).
  using Case = std::array<const char*, 4>;  // norm, stage, stage_wgs, one_tile
  for (const Case& c :
       {Case{"on", "on", "256", "off"}, Case{"on", "off", "256", "off"}, Case{"off", "on", "256", "off"},
        Case{"off", "off", "256", "off"}, Case{"on", "on", "1", "off"}, Case{"on", "on", "1", "on"},
        Case{"off", "on", "2", "on"}, Case{"off", "on", "2", "off"}, Case{"on", "on", "1", ""},
        Case{"off", "on", "2", ""}}) {
    const char *norm = c[0], *stage = c[1];
    {
      SCOPED_TRACE(std::string("norm ") + norm + ", stage " + stage + ", workgroups " + c[2] + ", one tile " + c[3]);
      graph::GraphBuilder b;
      Products p;
      const std::vector<testing::ProductSpec> specs{
          {"n_qkv", 1, 61, 2048, 32, f32, f32, true, {37, 11, 13}, "q4_gemv", false, false, false, true},
          {"n_sw", 1, 44, 96, 32, DType::f16, f32, false, {}, "q4_gemv", false, false, true, true},
          {"plain", 1, 113, 1024, 64, f32, f32, true, {}, "q4_gemv"},
      };
      for (const auto& s : specs) p.add(b, s);
      Program prog(testing::shared_context(), b.build(), b.weights(),
                   {{"quant_gemv_norm", norm},
                    {"quant_gemv_stage", stage},
                    {"quant_gemv_stage_wgs", c[2]},
                    {"quant_gemv_one_tile", c[3]}});
      for (const auto& s : specs) p.set(prog, s.name, s.m);
      prog.execute();
      for (const auto& s : specs) p.verify(prog, s.name);
      EXPECT_EQ(prog.dispatches_per_execute(), std::string(norm) == "on" ? 3u : 5u);
    }
  }
}

TEST(QuantOptions, SpecializedAndGenericKernelsGiveTheSameResults) {
  // quant_gemv_specialize on (the default): q4_gemv compiled per product with N, K, the flags,
  // the lanes, the tiles, the groups and the workgroups per row as pipeline constants
  // (kQ4GemvFixed in products.cpp); off: one kernel reading them from params. Every variant the decoder
  // uses: plain, qkv split with bias, swiglu, the norm prologue (int8 and f32 x), f16 scales,
  // four rows, a workgroup taking several tiles; results within the bound both ways.
  const DType f16 = DType::f16, f32 = DType::f32;
  using Case = std::array<const char*, 2>;  // specialize, stage workgroups
  for (const Case& c : {Case{"on", ""}, Case{"on", "1"}, Case{"off", ""}, Case{"off", "1"}}) {
    const char* wgs = c[1];
    SCOPED_TRACE(std::string("specialize ") + c[0] + ", stage workgroups " + wgs);
    graph::GraphBuilder b;
    Products p;
    const std::vector<testing::ProductSpec> specs{
        {"plain", 1, 113, 1024, 64, f32, f32, true, {}, "q4_gemv"},
        {"rows4", 4, 38, 256, 32, f16, f32, false, {}, "q4_gemv"},
        {"qkv", 1, 61, 128, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
        {"n_qkv", 1, 61, 2048, 32, f32, f32, true, {37, 11, 13}, "q4_gemv", false, false, false, true},
        {"n_sw", 1, 44, 96, 32, f16, f32, false, {}, "q4_gemv", false, false, true, true},
        {"n_wide", 1, 64, 8192, 32, f32, f32, false, {}, "q4_gemv", false, false, true, true},
    };
    for (const auto& s : specs) p.add(b, s);
    RuntimeOptions options{{"quant_gemv_specialize", c[0]}};
    if (*wgs) options["quant_gemv_stage_wgs"] = wgs;
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    for (const auto& s : specs) p.set(prog, s.name, s.m);
    prog.execute();
    for (const auto& s : specs) p.verify(prog, s.name);
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
  const gpu::AdapterDescription& a = testing::shared_context().adapter();
  const bool fixed = testing::shared_context().features().subgroups && a.subgroup_min_size == a.subgroup_max_size;
  using Case = std::array<const char*, 2>;  // reduce, stage_wgs
  for (const Case& c :
       {Case{"wg", "256"}, Case{"wg", "1"}, Case{"sg", "256"}, Case{"sgwg", "256"}, Case{"sgwg", "1"}}) {
    SCOPED_TRACE(std::string(c[0]) + ", workgroups " + c[1]);
    if (std::string(c[0]) != "wg" && !fixed) continue;  // no subgroups of one fixed size here
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
    Program prog(testing::shared_context(), b.build(), b.weights(),
                 {{"quant_gemv_x8", "on"}, {"quant_gemv_reduce", c[0]}, {"quant_gemv_stage_wgs", c[1]}});
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

TEST(QuantOptions, BadStageOrNormOptionIsABuildError) {
  using Case = std::array<const char*, 3>;  // option, value, message
  for (const Case& c : {Case{"quant_gemv_stage", "maybe", "the quant_gemv_stage option is 'maybe', not on or off"},
                        Case{"quant_gemv_norm", "maybe", "the quant_gemv_norm option is 'maybe', not on or off"},
                        Case{"quant_gemv_x8", "yes", "the quant_gemv_x8 option is 'yes', not on or off"},
                        Case{"quant_gemv_one_tile", "1", "the quant_gemv_one_tile option is '1', not on or off"},
                        Case{"quant_gemv_specialize", "1", "the quant_gemv_specialize option is '1', not on or off"},
                        Case{"quant_gemv_stage_wgs", "0", "the quant_gemv_stage_wgs option is '0', not a count"},
                        Case{"quant_gemv_stage_wgs", "x", "the quant_gemv_stage_wgs option is 'x', not a count"}}) {
    graph::GraphBuilder b;
    Products p;
    p.add(b, {"a", 1, 32, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
    EXPECT_TRUE(testing::build_fails(b, {{c[0], c[1]}}, c[2])) << c[0] << "=" << c[1];
  }
}

TEST(QuantOptions, BadReduceOptionIsABuildError) {
  graph::GraphBuilder b;
  Products p;
  p.add(b, {"a", 1, 11, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemv_reduce", "tree"}}, "the quant_gemv_reduce option is 'tree'"));
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
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemv_stop", "reduce"}}, "the quant_gemv_stop option is 'reduce'"));
}

TEST(QuantOptions, BadLaneCountIsABuildError) {
  graph::GraphBuilder b;
  Products p;
  p.add(b, {"a", 1, 11, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemv_tpc", "48"}}, "the quant_gemv_tpc option is '48'"));
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
  gpu::ContextOptions o = gpu::ContextOptions::from_env();
  o.announce = false;
  o.max_workgroup_storage = 16384;
  gpu::Context small(o);
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
  EXPECT_TRUE(testing::build_fails(b, {{"quant_gemm_x8", "yes"}}, "the quant_gemm_x8 option is 'yes', not on or off"));
}

}  // namespace
}  // namespace wgx::runtime
