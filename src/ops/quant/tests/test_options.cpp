// The quant_gemv_tpc option (lanes per column pair or group in the gemv kernels, for tuning): the extremes
// give the same results, and a bad value is a build error that names the option.
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
    Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_tpc", tpc}});
    p.set(prog, "a", 4);
    p.set(prog, "b", 3);
    prog.execute();
    p.verify(prog, "a");
    p.verify(prog, "b");
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
