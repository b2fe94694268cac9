// The q4 gemv tuning options: quant_gemv_tpc (lanes per column pair or group in the workgroup
// reductions) at its extremes and quant_gemv_reduce (sg: subgroupAdd, wg: workgroup memory)
// both ways, with 1, 2 or 4 chunks per lane loaded at once (quant_gemv_unroll), give results
// within the bound, and a bad value is a build error that names the
// option.
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

TEST(QuantOptions, EveryReductionAndUnrollMatches) {
  const gpu::AdapterDescription& a = testing::shared_context().adapter();
  const bool fixed = testing::shared_context().features().subgroups && a.subgroup_min_size == a.subgroup_max_size;
  for (const char* reduce : {"wg", "sg"}) {
    for (const char* unroll : {"1", "2", "4"}) {
      SCOPED_TRACE(std::string(reduce) + " unroll " + unroll);
      if (std::string(reduce) == "sg" && !fixed) GTEST_SKIP() << "no subgroups of one fixed size on this adapter";
      graph::GraphBuilder b;
      Products p;
      const DType f16 = DType::f16, f32 = DType::f32;
      const std::vector<testing::ProductSpec> specs{
          {"a", 4, 113, 128, 32, f16, f32, true, {}, "q4_gemv"},
          {"b", 1, 38, 2048, 64, f32, f16, false, {}, "q4_gemv"},
          {"qkv", 2, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
          {"sw", 1, 44, 128, 32, f32, f16, true, {}, "q4_gemv", false, false, true},
          {"sw_odd", 3, 38, 64, 32, f16, f32, false, {}, "q4_gemv", false, false, true},
      };
      for (const auto& s : specs) p.add(b, s);
      Program prog(testing::shared_context(), b.build(), b.weights(),
                   {{"quant_gemv_reduce", reduce}, {"quant_gemv_unroll", unroll}});
      for (const auto& s : specs) p.set(prog, s.name, s.m);
      prog.execute();
      for (const auto& s : specs) p.verify(prog, s.name);
    }
  }
}

TEST(QuantOptions, BadReduceOptionIsABuildError) {
  graph::GraphBuilder b;
  Products p;
  p.add(b, {"a", 1, 11, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
  try {
    Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_reduce", "tree"}});
    FAIL() << "built";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the quant_gemv_reduce option is 'tree'"), std::string::npos) << e.what();
  }
}

TEST(QuantOptions, BadLaneCountIsABuildError) {
  graph::GraphBuilder b;
  Products p;
  p.add(b, {"a", 1, 11, 64, 32, DType::f32, DType::f32, false, {}, "q4_gemv"});
  try {
    Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_tpc", "48"}});
    FAIL() << "built";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the quant_gemv_tpc option is '48'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wgx::runtime
