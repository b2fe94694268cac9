// add_rms_norm against a double reference, both outputs: rows of 37, 113 and 2048 elements with a
// symbolic row count, on f32 and on packed f16 (odd rows share words: workgroups take row pairs).
#include <cmath>

#include "graph/builder.h"
#include "runtime/program.h"
#include "numeric_test_util.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::close;
using testing::random_floats;
using testing::shared_context;

constexpr double kEps = 1e-5;
constexpr int64_t kRowLengths[] = {37, 113, 2048};

// rms_norm(sum) * weight by rows of n, from the sum as the output holds it.
std::vector<float> norm_ref(const std::vector<float>& sum, const std::vector<float>& w) {
  const size_t n = w.size();
  std::vector<float> out(sum.size());
  for (size_t r = 0; r < sum.size() / n; ++r) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += double{sum[r * n + i]} * sum[r * n + i];
    const double scale = 1 / std::sqrt(ss / static_cast<double>(n) + kEps);
    for (size_t i = 0; i < n; ++i) out[r * n + i] = static_cast<float>(sum[r * n + i] * scale * w[i]);
  }
  return out;
}

class AddRmsNorm : public ::testing::TestWithParam<DType> {};

TEST_P(AddRmsNorm, BothOutputsMatchAsRowsChange) {
  const DType dtype = GetParam();
  const bool f16 = dtype == DType::f16;
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 5);
  for (int64_t n : kRowLengths) {
    const std::string s = std::to_string(n);
    auto x = b.input("x" + s, dtype, {seq, n});
    auto res = b.input("r" + s, dtype, {seq, n});
    auto w = b.input("w" + s, dtype, {n});
    auto outs = b.op("add_rms_norm", {x, res, w}, {{"eps", kEps}});
    b.output("out" + s, outs[0]);
    b.output("sum" + s, outs[1]);
  }
  Program prog(shared_context(), b.build(), b.weights());
  uint32_t seed = 30;
  auto set = [&](const std::string& name, std::vector<float> v, std::vector<int64_t> shape) {
    if (!f16) {
      prog.set_input<float>(name, v, shape);
      return v;
    }
    v = testing::round_f16(v);
    prog.set_input<uint16_t>(name, testing::to_f16(v), shape);
    return v;
  };
  // 5 rows: on f16 with odd n, two row pairs and a last row alone.
  for (int64_t rows : {5, 2}) {
    prog.set_sym("seq", rows);
    std::vector<std::vector<float>> x, r, w;
    for (int64_t n : kRowLengths) {
      const std::string s = std::to_string(n);
      const size_t count = static_cast<size_t>(rows * n);
      x.push_back(set("x" + s, random_floats(count, seed++), {rows, n}));
      r.push_back(set("r" + s, random_floats(count, seed++), {rows, n}));
      w.push_back(set("w" + s, random_floats(static_cast<size_t>(n), seed++, 0.5f, 1.5f), {n}));
    }
    prog.execute();
    for (size_t k = 0; k < 3; ++k) {
      const std::string s = std::to_string(kRowLengths[k]);
      std::vector<float> sum(x[k].size());
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = static_cast<float>(double{x[k][i]} + r[k][i]);
      if (f16) sum = testing::round_f16(sum);  // what an unfused f16 add would hand rms_norm
      const double abs_tol = f16 ? testing::kF16Abs : 1e-4, rel_tol = f16 ? testing::kF16Rel : 1e-3;
      EXPECT_TRUE(close(prog.read_f32("sum" + s), sum, abs_tol, rel_tol)) << s << " rows " << rows;
      EXPECT_TRUE(close(prog.read_f32("out" + s), norm_ref(sum, w[k]), abs_tol, rel_tol)) << s << " rows " << rows;
      if (f16 && sum.size() % 2) {  // the last word's tail is zero in both outputs
        for (const char* o : {"out", "sum"}) {
          const auto bytes = prog.read_storage(o + s);
          EXPECT_EQ(bytes.at(bytes.size() - 1), 0) << o << s;
          EXPECT_EQ(bytes.at(bytes.size() - 2), 0) << o << s;
        }
      }
    }
  }
  for (const auto& route : prog.routes()) EXPECT_EQ(route.route, "add_rms_norm") << route.op;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AddRmsNorm, ::testing::Values(DType::f32, DType::f16),
                         [](const auto& tp) { return std::string(tp.param == DType::f16 ? "f16" : "f32"); });

}  // namespace
}  // namespace wgx::runtime
