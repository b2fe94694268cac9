// conv1d against a double reference on random data at prime sizes: every route (asserted),
// stride 1 and 2, padding 0, 1, 2, dilation 1 and 2, with and without bias, f32 and f16, a
// symbolic L resized between executions (Whisper's stem at a reduced size), and the schema's
// errors. Tolerance: within_bound (linalg_test_util.h) over Cin * K products and the bias: f32
// within abs 1e-4, rel 1e-3 or the worst-case error of an f32 sum of that many products
// (gamma_{Cin K + 1} times sum |x w|); f16 that plus one f16 rounding of the result. Negative
// controls show that a flipped kernel (convolution instead of cross-correlation) or a window
// shifted by one (an off-by-one padding) misses that bound by a factor of over 100.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "graph/error.h"
#include "linalg_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::random_floats;
using testing::shared_context;

struct ConvCase {
  const char* name;
  int64_t n, cin, l, cout, k, stride, padding, dilation;
  bool bias;
  DType dtype;
  const char* route;

  int64_t lout() const { return (l + 2 * padding - dilation * (k - 1) - 1) / stride + 1; }
  graph::Attrs attrs() const { return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}}; }
};

// Values as the node's storage holds them (f16 rounded) and their bytes.
struct Data {
  std::vector<float> values;
  std::vector<uint8_t> bytes;
};
Data random_data(size_t count, uint32_t seed, DType dtype) {
  const std::vector<float> v = random_floats(count, seed, -1.f, 1.f);
  if (dtype == DType::f32) return {v, testing::bytes_of(v)};
  const std::vector<uint16_t> h = testing::to_f16(v);
  return {testing::from_f16(h), testing::bytes_of(h)};
}

// x [n, cin, l] and weight [cout, cin, k] (+ bias) as conv1d computes them, in double.
// Negative controls: `flip` reverses the kernel (a convolution), `shift` moves every window
// right by that many positions (a padding off by one).
testing::Reference conv1d_ref(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias, bool flip = false, int64_t shift = 0) {
  testing::Reference r;
  r.shape = {c.n, c.cout, c.lout()};
  for (int64_t b = 0; b < c.n; ++b) {
    for (int64_t co = 0; co < c.cout; ++co) {
      for (int64_t lo = 0; lo < c.lout(); ++lo) {
        double s = bias.empty() ? 0 : bias[co], mag = bias.empty() ? 0 : std::abs(bias[co]);
        for (int64_t ci = 0; ci < c.cin; ++ci) {
          for (int64_t t = 0; t < c.k; ++t) {
            const int64_t pos = lo * c.stride + t * c.dilation - c.padding + shift;
            if (pos < 0 || pos >= c.l) continue;
            const double p = double(x[(b * c.cin + ci) * c.l + pos]) * w[(co * c.cin + ci) * c.k + (flip ? c.k - 1 - t : t)];
            s += p;
            mag += std::abs(p);
          }
        }
        r.values.push_back(static_cast<float>(s));
        r.magnitude.push_back(mag);
      }
    }
  }
  return r;
}

// The largest ratio of an element's error to what the f32 bound allows it: at most 1 passes.
double worst_error_ratio(const std::vector<float>& got, const testing::Reference& want, int64_t terms) {
  const double u = std::ldexp(1.0, -24), gamma = double(terms) * u / (1 - double(terms) * u);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = std::max({1e-4, 1e-3 * std::abs(want.values[i]), gamma * want.magnitude[i]});
    worst = std::max(worst, std::abs(double(got[i]) - want.values[i]) / allowed);
  }
  return worst;
}

// conv1d nodes in one graph (nodes that share a kernel share its pipeline: SwiftShader takes a
// second or more to compile one), each fed by its own x.
class Convs {
 public:
  struct Node {
    ConvCase c;
    Data w, bias, x;
  };

  void add(GraphBuilder& b, const ConvCase& c, graph::Dim l) {
    Node node{c, random_data(size_t(c.cout * c.cin * c.k), seed_++, c.dtype), {}, {}};
    const std::string name = c.name;
    std::vector<graph::ValueId> in{b.input(name + ".x", c.dtype, {c.n, c.cin, l}),
                                   b.constant(name + ".w", c.dtype, {c.cout, c.cin, c.k}, node.w.bytes)};
    if (c.bias) {
      node.bias = random_data(size_t(c.cout), seed_++, c.dtype);
      in.push_back(b.constant(name + ".b", c.dtype, {c.cout}, node.bias.bytes));
    }
    b.output(name, b.op1("conv1d", in, c.attrs(), name));
    nodes_.push_back(std::move(node));
  }
  void add(GraphBuilder& b, const ConvCase& c) { add(b, c, c.l); }

  // A random x for node i, of length `l` (the case's when 0).
  void set(Program& prog, size_t i, int64_t l = 0) {
    Node& node = nodes_.at(i);
    if (l != 0) node.c.l = l;
    node.x = random_data(size_t(node.c.n * node.c.cin * node.c.l), seed_++, node.c.dtype);
    prog.set_input(std::string(node.c.name) + ".x", node.x.bytes, {node.c.n, node.c.cin, node.c.l});
  }

  testing::Reference reference(size_t i, bool flip = false, int64_t shift = 0) const {
    const Node& node = nodes_.at(i);
    return conv1d_ref(node.c, node.x.values, node.w.values, node.bias.values, flip, shift);
  }

  void verify(const Program& prog, size_t i) const {
    const ConvCase& c = nodes_.at(i).c;
    SCOPED_TRACE(std::string(c.name) + " L=" + std::to_string(c.l));
    const testing::Reference want = reference(i);
    EXPECT_EQ(prog.output_shape(c.name), want.shape);
    EXPECT_TRUE(testing::within_bound(prog.read_f32(c.name), want, c.cin * c.k, c.dtype == DType::f16));
    const auto& routes = prog.routes();
    const auto choice = *std::find_if(routes.begin(), routes.end(), [&](const RouteChoice& r) { return r.label == c.name; });
    EXPECT_EQ(choice.route, c.route) << testing::rejected(choice);
  }

  const ConvCase& at(size_t i) const { return nodes_.at(i).c; }
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<Node> nodes_;
  uint32_t seed_ = 1;
};

constexpr DType f32 = DType::f32, f16 = DType::f16;

// Cin * K of at most 63 (or fewer than 64 output positions) runs direct.
const std::vector<ConvCase> kDirectCases{
    {"k3_pad1", 2, 7, 101, 13, 3, 1, 1, 1, true, f32, "direct"},
    {"k5_stride2_pad2", 1, 7, 101, 13, 5, 2, 2, 1, false, f32, "direct"},
    {"k3_dil2_pad0", 2, 7, 101, 13, 3, 1, 0, 2, true, f32, "direct"},
    {"k5_stride2_dil2_pad1", 1, 7, 103, 11, 5, 2, 1, 2, true, f32, "direct"},
    {"k1", 1, 7, 37, 13, 1, 1, 0, 1, true, f32, "direct"},
    {"f16_k3_pad1", 2, 7, 101, 13, 3, 1, 1, 1, true, f16, "direct"},
    {"f16_k5_stride2_odd", 1, 7, 101, 11, 5, 2, 2, 1, false, f16, "direct"},
};

// Cin * K >= 64 over at least 64 positions: im2col_gemm. Sizes leave partial tiles on both sides
// of the GEMM and reductions that are not a multiple of its 16-deep slices.
const std::vector<ConvCase> kGemmCases{
    {"gemm_k3_pad1", 2, 23, 101, 13, 3, 1, 1, 1, true, f32, "im2col_gemm"},
    {"gemm_stride2_pad2", 2, 23, 101, 37, 3, 2, 2, 1, false, f32, "im2col_gemm"},
    {"gemm_k5_dil2_pad2", 1, 13, 101, 67, 5, 1, 2, 2, true, f32, "im2col_gemm"},
    {"gemm_r111_pad0", 1, 37, 70, 11, 3, 1, 0, 1, true, f32, "im2col_gemm"},
    {"f16_gemm_stride2", 2, 23, 101, 13, 3, 2, 1, 1, true, f16, "im2col_gemm"},
    {"f16_gemm_odd", 1, 23, 101, 13, 3, 1, 1, 1, false, f16, "im2col_gemm"},
};

void run_cases(const std::vector<ConvCase>& cases) {
  GraphBuilder b;
  Convs convs;
  for (const ConvCase& c : cases) convs.add(b, c);
  Program prog(shared_context(), b.build(), b.weights());
  for (size_t i = 0; i < convs.size(); ++i) convs.set(prog, i);
  prog.execute();
  for (size_t i = 0; i < convs.size(); ++i) convs.verify(prog, i);
}

TEST(Conv1d, DirectMatchesTheReference) { run_cases(kDirectCases); }

TEST(Conv1d, Im2colGemmMatchesTheReference) { run_cases(kGemmCases); }

TEST(Conv1d, TheGuardSaysWhyTheGemmIsPassedOver) {
  GraphBuilder b;
  Convs convs;
  convs.add(b, kDirectCases[0]);
  convs.add(b, {"few_positions", 1, 23, 40, 13, 3, 1, 1, 1, true, f32, "direct"});
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).rejected.back(), "im2col_gemm: Cin * K is 21; the GEMM takes Cin * K >= 64");
  EXPECT_EQ(prog.routes().at(1).rejected.back(), "im2col_gemm: N * Lout is up to 40; the GEMM takes N * Lout >= 64");
}

TEST(Conv1d, AFlippedKernelOrShiftedWindowMissesTheBoundByFar) {
  GraphBuilder b;
  Convs convs;
  convs.add(b, kDirectCases[0]);
  convs.add(b, kGemmCases[0]);
  Program prog(shared_context(), b.build(), b.weights());
  for (size_t i = 0; i < convs.size(); ++i) convs.set(prog, i);
  prog.execute();
  for (size_t i = 0; i < convs.size(); ++i) {
    SCOPED_TRACE(convs.at(i).name);
    const std::vector<float> got = prog.read_f32(convs.at(i).name);
    const int64_t terms = convs.at(i).cin * convs.at(i).k + 1;
    EXPECT_LE(worst_error_ratio(got, convs.reference(i), terms), 1.0);
    EXPECT_GT(worst_error_ratio(got, convs.reference(i, true), terms), 100.0);
    EXPECT_GT(worst_error_ratio(got, convs.reference(i, false, 1), terms), 100.0);
    EXPECT_GT(worst_error_ratio(got, convs.reference(i, false, -1), terms), 100.0);
  }
}

// Whisper's audio stem at a reduced size: conv(K 3, padding 1) then conv(K 3, padding 1, stride 2)
// over a symbolic number of frames (2 * frames mel columns), resized between executions. The
// first takes the direct route (Cin * K = 48), the second im2col_gemm (72), whose reference is
// computed from the first's output as the GPU wrote it.
void whisper_stem(DType dtype) {
  constexpr int64_t kMels = 16, kWidth = 24, kMaxFrames = 80;
  GraphBuilder b;
  const graph::SymId frames = b.sym("frames", 4, kMaxFrames);
  const Data w1 = random_data(kWidth * kMels * 3, 11, dtype), b1 = random_data(kWidth, 12, dtype);
  const Data w2 = random_data(kWidth * kWidth * 3, 13, dtype), b2 = random_data(kWidth, 14, dtype);
  const auto x = b.input("mel", dtype, {1, kMels, graph::Dim::affine(2, frames, 0)});
  const auto h = b.op1("conv1d", {x, b.constant("w1", dtype, {kWidth, kMels, 3}, w1.bytes),
                                  b.constant("b1", dtype, {kWidth}, b1.bytes)},
                       {{"padding", 1}}, "conv1");
  const auto y = b.op1("conv1d", {h, b.constant("w2", dtype, {kWidth, kWidth, 3}, w2.bytes),
                                  b.constant("b2", dtype, {kWidth}, b2.bytes)},
                       {{"padding", 1}, {"stride", 2}}, "conv2");
  b.output("h", h);
  b.output("y", y);
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).route, "direct");
  EXPECT_EQ(prog.routes().at(1).route, "im2col_gemm") << testing::rejected(prog.routes().at(1));
  const bool f16_out = dtype == DType::f16;
  for (int64_t f : {kMaxFrames, int64_t{5}, int64_t{33}, int64_t{4}}) {
    SCOPED_TRACE("frames " + std::to_string(f));
    const Data mel = random_data(size_t(kMels * 2 * f), uint32_t(f), dtype);
    prog.set_input("mel", mel.bytes, {1, kMels, 2 * f});
    prog.execute();
    const ConvCase c1{"conv1", 1, kMels, 2 * f, kWidth, 3, 1, 1, 1, true, dtype, "direct"};
    const ConvCase c2{"conv2", 1, kWidth, 2 * f, kWidth, 3, 2, 1, 1, true, dtype, "im2col_gemm"};
    const std::vector<float> got_h = prog.read_f32("h");
    EXPECT_EQ(prog.output_shape("y"), (std::vector<int64_t>{1, kWidth, f}));
    EXPECT_TRUE(testing::within_bound(got_h, conv1d_ref(c1, mel.values, w1.values, b1.values), kMels * 3, f16_out));
    EXPECT_TRUE(testing::within_bound(prog.read_f32("y"), conv1d_ref(c2, got_h, w2.values, b2.values), kWidth * 3,
                                      f16_out));
  }
}

TEST(Conv1d, WhisperStemResizesWithTheFrames) { whisper_stem(DType::f32); }
TEST(Conv1d, WhisperStemResizesWithTheFramesF16) { whisper_stem(DType::f16); }

// The schema's errors, each naming what is wrong.
std::string schema_error(DType x_dtype, graph::Shape x, DType w_dtype, std::vector<int64_t> w, graph::Attrs attrs) {
  GraphBuilder b;
  try {
    const auto wv = b.input("w", w_dtype, graph::Shape(w.begin(), w.end()));
    b.op1("conv1d", {b.input("x", x_dtype, std::move(x)), wv}, std::move(attrs));
  } catch (const graph::GraphError& e) {
    return e.what();
  }
  return "no error";
}

::testing::AssertionResult has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
}

TEST(Conv1dSchema, RejectsWhatItCannotRunWithAClearMessage) {
  EXPECT_TRUE(has(schema_error(f32, {1, 4, 20}, f32, {8, 4, 3}, {{"groups", 2}}), "groups = 2 is not supported (only 1)"));
  EXPECT_TRUE(has(schema_error(f32, {1, 5, 20}, f32, {8, 4, 3}, {}), "x has 5 input channels but weight [8, 4, 3] expects 4"));
  EXPECT_TRUE(has(schema_error(f32, {1, 4, 4}, f32, {8, 4, 5}, {{"padding", 0}}), "Lout = floor((L + 2 padding - dilation (K - 1) - 1) / stride) + 1 is 0"));
  EXPECT_TRUE(has(schema_error(f32, {1, 4, 20}, f16, {8, 4, 3}, {}), "weight is f16 but x is f32"));
  GraphBuilder b;
  const graph::SymId s = b.sym("frames", 3, 100);
  const auto w = b.input("w", f32, {8, 4, 3});
  try {
    b.op1("conv1d", {b.input("x", f32, {1, 4, s}), w}, {{"stride", 2}});
    ADD_FAILURE() << "a symbolic L of coefficient 1 with stride 2 was taken";
  } catch (const graph::GraphError& e) {
    EXPECT_TRUE(has(e.what(), "stride 2 does not divide its coefficient"));
  }
  // The defaults: stride 1, no padding, dilation 1.
  const auto y = b.op1("conv1d", {b.input("x2", f32, {2, 4, s}), w});
  EXPECT_EQ(b.type(y).shape, (graph::Shape{2, 8, graph::Dim::affine(1, s, -2)}));
}

}  // namespace
}  // namespace wgx::runtime
