// The program every GPU test of the quant family shares: linear (q4gsw), linear_qkv (q4gsw, f32,
// f16) and embedding (q4gsw) nodes, each fed by its own inputs, built once. The node lists here
// are the test matrix; the test files check them.
#pragma once

#include <optional>

#include "quant_test_util.h"

namespace wgx::runtime::testing {

using graph::GraphBuilder;

// A linear, linear_qkv or linear_swiglu node, or the add_rms_norm_ form of one.
struct ProductSpec {
  std::string name;
  int64_t m = 1, n = 1, k = 1;  // m: rows of x (the max when symbolic)
  uint32_t group = 0;           // 0: a dense weight of x's dtype (linear_qkv)
  DType scale = DType::f32;
  DType x = DType::f32;
  bool bias = false;
  std::vector<int64_t> splits;  // linear_qkv's q, k, v widths; empty: linear
  const char* route = "";
  bool symbolic = false;  // M is a SymInt in [1, m]
  bool batched = false;   // x is [1, M, K] (leading dims flatten into M)
  bool swiglu = false;    // linear_swiglu: N / 2 outputs from interleaved gate/up rows
  bool norm = false;      // add_rms_norm_<product>: x + residual (output "sum"), normalized, is the x
  double eps = 1e-6;      // the norm's
  bool x8 = false;        // run with quant_gemv_x8 on: the one-row kernel rounds x to int8 per 32
};

// silu(gate) * up for every interleaved pair of `all`'s columns (m rows of n), in double. The
// magnitude bounds the propagated product error: |d silu| <= 1.1 and |silu(g)| <= |g|, plus the
// result itself for silu's own rounding.
inline Reference swiglu_reference(const Reference& all, int64_t m, int64_t n) {
  Reference r;
  for (int64_t i = 0; i < m * n / 2; ++i) {
    const double g = all.values[2 * i], u = all.values[2 * i + 1];
    const double y = g / (1 + std::exp(-g)) * u;
    r.values.push_back(y);
    r.magnitude.push_back(1.1 * std::abs(u) * all.magnitude[2 * i] + std::abs(g) * all.magnitude[2 * i + 1] +
                          std::abs(y));
  }
  return r;
}

class Products {
 public:
  void add(GraphBuilder& b, const ProductSpec& s) {
    Node node{s, {}, {}, {}, {}, {}, 0, b.graph().nodes.size()};
    node.w = s.group ? q4_weight(s.n, s.k, s.group, s.scale, seed_++)
                     : data_of(random_floats(static_cast<size_t>(s.n * s.k), seed_++, -1.f, 1.f), s.x);
    const graph::TensorType wt = s.group ? graph::TensorType{DType::q4gsw, {s.n, s.k}, {s.group, s.scale}}
                                         : graph::TensorType{s.x, {s.n, s.k}, {}};
    const graph::Dim m = s.symbolic ? graph::Dim(b.sym(s.name + ".m", 1, s.m)) : graph::Dim(s.m);
    const graph::Shape x = s.batched ? graph::Shape{1, m, s.k} : graph::Shape{m, s.k};
    std::vector<graph::ValueId> in{b.input(s.name, s.x, x)};
    if (s.norm) {
      // Norm weights in [0.5, 1.5]: a kernel that skipped them would be off by up to a half.
      node.norm_w = data_of(random_floats(static_cast<size_t>(s.k), seed_++, 0.5f, 1.5f), s.x);
      in.push_back(b.input(s.name + ".res", s.x, x));
      in.push_back(b.constant(s.name + ".nw", s.x, {s.k}, node.norm_w.bytes));
    }
    in.push_back(b.constant(s.name + ".w", wt, node.w.bytes));
    if (s.bias) {
      node.bias = data_of(random_floats(static_cast<size_t>(s.n), seed_++, -1.f, 1.f), s.x);
      in.push_back(b.constant(s.name + ".b", s.x, {s.n}, node.bias.bytes));
    }
    const std::string prefix = s.norm ? "add_rms_norm_" : "";
    graph::Attrs attrs;
    if (s.norm) attrs.insert_or_assign("eps", s.eps);
    std::vector<graph::ValueId> outs;
    if (s.splits.empty()) {
      outs = b.op(prefix + (s.swiglu ? "linear_swiglu" : "linear"), in, attrs);
      b.output(s.name + ".y", outs[0]);
    } else {
      attrs.insert_or_assign("splits", s.splits);
      outs = b.op(prefix + "linear_qkv", in, attrs);
      for (size_t i = 0; i < 3; ++i) b.output(s.name + "." + kParts[i], outs[i]);
    }
    if (s.norm) b.output(s.name + ".sum", outs.back());
    nodes_[s.name] = std::move(node);
  }

  // A random x with m rows for node `name` (and its residual), the last `zero_tail` values of
  // each row 0.
  void set(Program& prog, const std::string& name, int64_t m, int64_t zero_tail = 0) {
    Node& node = nodes_.at(name);
    node.m = m;
    const int64_t k = node.spec.k;
    auto values = [&] {
      std::vector<float> v = random_floats(static_cast<size_t>(m * k), seed_++, -1.f, 1.f);
      for (int64_t i = 0; i < m * k; ++i) {
        if (i % k >= k - zero_tail) v[i] = 0.f;
      }
      return data_of(v, node.spec.x);
    };
    node.x = values();
    prog.set_input(name, node.x.bytes, lead(node.spec, m, k));
    if (node.spec.norm) {
      node.res = values();
      prog.set_input(name + ".res", node.res.bytes, lead(node.spec, m, k));
    }
  }

  // What an add_rms_norm_ node's product takes as x, and its sum output: x + residual in x's
  // dtype, then sum / sqrt(mean(sum^2) + eps) * norm_weight per row, in double, rounded to x's
  // dtype (as the two-dispatch path stores it; the one-row kernel keeps it in f32).
  std::pair<std::vector<float>, std::vector<float>> normalized(const std::string& name) const {
    const Node& node = nodes_.at(name);
    const ProductSpec& s = node.spec;
    std::vector<float> sum(node.x.values.size()), out(sum.size());
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = node.x.values[i] + node.res.values[i];
    sum = data_of(sum, s.x).values;
    for (int64_t r = 0; r < node.m; ++r) {
      double squares = 0;
      for (int64_t j = 0; j < s.k; ++j) squares += double(sum[r * s.k + j]) * sum[r * s.k + j];
      const double scale = 1 / std::sqrt(squares / static_cast<double>(s.k) + s.eps);
      for (int64_t j = 0; j < s.k; ++j) out[r * s.k + j] = static_cast<float>(sum[r * s.k + j] * scale * node.norm_w.values[j]);
    }
    return {data_of(out, s.x).values, sum};
  }

  // After an execution: every output of node `name`, and its route.
  void verify(const Program& prog, const std::string& name) const {
    SCOPED_TRACE(name + " M=" + std::to_string(nodes_.at(name).m));
    const Node& node = nodes_.at(name);
    const ProductSpec& s = node.spec;
    std::vector<float> x = node.x.values;
    if (s.norm) {
      const auto [normalized_x, sum] = normalized(name);
      x = normalized_x;
      const std::vector<float> got = prog.read_f32(s.name + ".sum");
      EXPECT_EQ(prog.output_shape(s.name + ".sum"), lead(s, node.m, s.k));
      if (s.x == DType::f16) {  // one f16 rounding of the f32 sum, either way
        EXPECT_TRUE(within_dot_bound(got, sum, std::vector<double>(sum.size(), 0.0), 1, true)) << "sum";
      } else {
        EXPECT_EQ(got, sum) << "sum";  // one f32 addition: exact
      }
    }
    Reference all = linear_dots(x, node.m, s.k, node.w.values, s.n, node.bias.values);
    if (rounds_x(s, node.m)) add_x8_error(all, x, node.m, s.k, node.w.values, s.k + norm_terms(s) + 3);
    const int64_t n = s.swiglu ? s.n / 2 : s.n;  // columns of the output
    if (s.swiglu) all = swiglu_reference(all, node.m, s.n);
    const std::vector<int64_t> widths = s.splits.empty() ? std::vector<int64_t>{n} : s.splits;
    int64_t first = 0;
    for (size_t part = 0; part < widths.size(); ++part) {
      Reference want;  // the columns [first, first + width) of every row
      for (int64_t i = 0; i < node.m; ++i) {
        for (int64_t j = first; j < first + widths[part]; ++j) {
          want.values.push_back(all.values[i * n + j]);
          want.magnitude.push_back(all.magnitude[i * n + j]);
        }
      }
      const std::string out = s.name + "." + (s.splits.empty() ? "y" : kParts[part]);
      EXPECT_EQ(prog.output_shape(out), lead(s, node.m, widths[part])) << out;
      EXPECT_TRUE(within_bound(prog.read_f32(out), want, s.k + norm_terms(s), s.x == DType::f16)) << out;
      first += widths[part];
    }
    const RouteChoice& choice = prog.routes().at(node.index);
    EXPECT_EQ(choice.route, s.route) << rejected(choice);
  }

  const RouteChoice& choice(const Program& prog, const std::string& name) const {
    return prog.routes().at(nodes_.at(name).index);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& [name, node] : nodes_) v.push_back(name);
    return v;
  }
  const ProductSpec& spec(const std::string& name) const { return nodes_.at(name).spec; }
  const Data& weight(const std::string& name) const { return nodes_.at(name).w; }
  const Data& bias(const std::string& name) const { return nodes_.at(name).bias; }
  const Data& x(const std::string& name) const { return nodes_.at(name).x; }
  const Data& norm_weight(const std::string& name) const { return nodes_.at(name).norm_w; }

  // The error the normalized x adds to the product's bound, as terms of an f32 sum (gamma_n is
  // about n 2^-24 relative to the magnitude): f32, the K squares summed, inverseSqrt and two
  // products (K + 8); f16, one rounding of the normalized x either way (2^-10: 2^14 terms).
  static int64_t norm_terms(const ProductSpec& s) { return !s.norm ? 0 : s.x == DType::f16 ? 16384 : s.k + 8; }

  // Whether the kernel that runs node `s` at m rows rounds x to int8: the one-row kernel with
  // ProductSpec::x8 or, while quant_gemv_x8 is unset (gemv_x8_default), for q4 weights and f32 x
  // over rows of K <= 4096; q4_gemm above 4 rows unless gemm_x8 is off.
  bool rounds_x(const ProductSpec& s, int64_t m) const {
    const bool gemv_default = gemv_x8_default && s.group > 0 && s.x == DType::f32 && s.k <= 4096;
    return ((s.x8 || gemv_default) && m == 1) || (gemm_x8 && std::string(s.route) == "q4_gemm" && m > 4);
  }

  // The rounding of x to int8 (quant_gemv_x8, quant_gemm_x8) of m rows of k: each 32-value chunk
  // b becomes multiples of dx_b = max_b |x| / 127, each at most dx_b / 2 off (plus 1e-4 of that
  // for the f32 rounding of dx, of 127 / max and of x * 127 / max), so column j's product moves
  // by at most the sum over chunks of dx_b / 2 * sum_b |w_j|. Added to each magnitude as that
  // error over gamma_terms, so that within_bound (and swiglu_reference's propagation) take it in.
  // `block`: values per scale (32; linear_swiglu_linear's int8 act: 16).
  static void add_x8_error(Reference& r, const std::vector<float>& x, int64_t m, int64_t k,
                           const std::vector<float>& w, int64_t terms, int64_t block = 32) {
    const double u = std::ldexp(1.0, -24), gamma = static_cast<double>(terms) * u / (1 - static_cast<double>(terms) * u);
    const size_t n = r.magnitude.size() / static_cast<size_t>(m);
    for (size_t row = 0; row < static_cast<size_t>(m); ++row) {
      const float* xr = x.data() + row * static_cast<size_t>(k);
      for (size_t j = 0; j < n; ++j) {
        double e = 0;
        for (int64_t b = 0; b < k; b += block) {
          double amax = 0, wsum = 0;
          for (int64_t i = b; i < b + block; ++i) {
            amax = std::max(amax, double(std::abs(xr[i])));
            wsum += std::abs(w[j * k + i]);
          }
          e += amax / 127 * 0.5 * (1 + 1e-4) * wsum;
        }
        r.magnitude[row * n + j] += e / gamma;
      }
    }
  }

  // Whether the program rounds x to int8 in q4_gemm (quant_gemm_x8: on unless set off).
  bool gemm_x8 = true;
  // Whether the program leaves quant_gemv_x8 unset (its default rounds x to int8 in the one-row
  // kernel for rows of K <= 4096); false where a test sets it.
  bool gemv_x8_default = true;

 private:
  static constexpr const char* kParts[3] = {"q", "k", "v"};
  static std::vector<int64_t> lead(const ProductSpec& s, int64_t m, int64_t last) {
    return s.batched ? std::vector<int64_t>{1, m, last} : std::vector<int64_t>{m, last};
  }
  struct Node {
    ProductSpec spec;
    Data w, bias, x, res, norm_w;
    int64_t m;
    size_t index;  // in Program::routes()
  };
  std::map<std::string, Node> nodes_;
  uint32_t seed_ = 1;
};

// An embedding node with a q4gsw table.
struct EmbeddingSpec {
  std::string name;
  int64_t rows = 1, dim = 32;
  uint32_t group = 32;
  DType scale = DType::f32;
  int64_t ids = 1;  // the max count when symbolic
  bool symbolic = false;
  DType id_dtype = DType::i32;
  std::optional<DType> out = std::nullopt;  // the dtype attribute (none: the rows in the scale dtype)
};

class Embeddings {
 public:
  void add(GraphBuilder& b, const EmbeddingSpec& s) {
    Node node{s, q4_weight(s.rows, s.dim, s.group, s.scale, seed_++), {}, b.graph().nodes.size()};
    const graph::TensorType t{DType::q4gsw, {s.rows, s.dim}, {s.group, s.scale}};
    const graph::Dim n = s.symbolic ? graph::Dim(b.sym(s.name + ".n", 1, s.ids)) : graph::Dim(s.ids);
    graph::Attrs attrs;
    if (s.out) attrs.insert_or_assign("dtype", graph::dtype_name(*s.out));
    b.output(s.name + ".y", b.op1("embedding", {b.constant(s.name + ".t", t, node.table.bytes),
                                                b.input(s.name, s.id_dtype, {n})}, attrs));
    nodes_[s.name] = std::move(node);
  }

  void set(Program& prog, const std::string& name, const std::vector<int64_t>& ids) {
    Node& node = nodes_.at(name);
    node.ids = ids;
    const auto n = static_cast<int64_t>(ids.size());
    if (node.spec.id_dtype == DType::i64) {
      prog.set_input<int64_t>(name, ids, {n});
    } else {
      const std::vector<int32_t> narrow(ids.begin(), ids.end());
      prog.set_input<int32_t>(name, narrow, {n});
    }
  }

  // Rows of the dequantized table (zeros for ids outside it), exact in f32 and within one f16
  // rounding in f16 ((nibble - 8) * scale may need 14 bits); the rows are in the scale dtype
  // unless the spec asks for another.
  void verify(const Program& prog, const std::string& name) const {
    SCOPED_TRACE(name);
    const Node& node = nodes_.at(name);
    const EmbeddingSpec& s = node.spec;
    std::vector<float> want;
    for (int64_t id : node.ids) {
      for (int64_t d = 0; d < s.dim; ++d) want.push_back(id >= 0 && id < s.rows ? node.table.values[id * s.dim + d] : 0.f);
    }
    const auto got = prog.read_f32(s.name + ".y");
    const auto n = static_cast<int64_t>(node.ids.size());
    EXPECT_EQ(prog.output_shape(s.name + ".y"), (std::vector<int64_t>{n, s.dim}));
    const bool f16 = s.out.value_or(s.scale) == DType::f16;
    EXPECT_EQ(prog.read_storage(s.name + ".y").size(), static_cast<size_t>(n * s.dim * (f16 ? 2 : 4)));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const double bound = f16 ? std::ldexp(std::abs(want[i]), -10) : 0.0;
      ASSERT_LE(std::abs(double(got[i]) - want[i]), bound) << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
    EXPECT_EQ(prog.routes().at(node.index).route, "q4_gather") << rejected(prog.routes().at(node.index));
  }

 private:
  struct Node {
    EmbeddingSpec spec;
    Data table;
    std::vector<int64_t> ids;
    size_t index;
  };
  std::map<std::string, Node> nodes_;
  uint32_t seed_ = 500;
};

// The test matrix: prime M, N and K where the format allows (K is a multiple of the group),
// every route but q4_bk32, which q4_gemm precedes (test_options.cpp takes it on a device with
// less workgroup memory), group sizes 32/64/128, f32 and f16 scales and activations, with and without bias.
inline const std::vector<ProductSpec>& product_specs() {
  const DType f32 = DType::f32, f16 = DType::f16;
  static const std::vector<ProductSpec> specs{
      // linear, q4_gemv (M <= 4)
      {"g1", 1, 113, 64, 32, f32, f32, true, {}, "q4_gemv"},
      {"g3", 3, 11, 128, 64, f16, f32, false, {}, "q4_gemv"},
      {"g4", 4, 113, 96, 32, f16, f32, true, {}, "q4_gemv"},
      {"g1_k2048", 1, 11, 2048, 128, f32, f32, true, {}, "q4_gemv"},
      {"g3_x16", 3, 113, 128, 128, f32, f16, true, {}, "q4_gemv"},  // odd N: f32 scratch + pack
      {"g4_x16_even", 4, 38, 96, 32, f16, f16, false, {}, "q4_gemv"},  // f16 written in pairs
      // linear, q4_gemm (M > 4): at these sizes K splits over every slice but one (partials, then
      // the reduce pass), or the GEMM writes y itself where K = 32 is one slice
      {"t5", 5, 113, 64, 64, f32, f32, true, {}, "q4_gemm"},
      {"t37", 37, 11, 128, 128, f16, f32, false, {}, "q4_gemm"},
      {"t37_x16", 37, 113, 128, 32, f32, f16, true, {}, "q4_gemm"},  // odd N: the reduce pass packs
      {"t5_x16_even", 5, 40, 64, 32, f16, f16, true, {}, "q4_gemm"},
      {"t37_k2048", 37, 11, 2048, 64, f16, f32, true, {}, "q4_gemm"},  // 64 splits
      {"f37", 37, 113, 96, 32, f32, f32, true, {}, "q4_gemm"},         // K = 96: three slices
      {"f5_x16", 5, 11, 96, 32, f16, f16, false, {}, "q4_gemm"},
      {"m251", 251, 37, 64, 64, f32, f32, true, {}, "q4_gemm"},         // 64-row tiles, four (the last 59 rows)
      {"m131_x16", 131, 139, 96, 32, f16, f16, false, {}, "q4_gemm"},  // 64-row tiles x 3, two column tiles
      {"m67_k32", 67, 113, 32, 32, f32, f32, true, {}, "q4_gemm"},      // one split: y written directly
      {"m41_x16_k32", 41, 38, 32, 32, f16, f16, true, {}, "q4_gemm"},  // directly, f16 pairs, N % 4 == 2
      {"m133_x16_k32", 133, 260, 32, 32, f16, f16, false, {}, "q4_gemm"},  // directly, 3 x 3 tiles
      {"m37_x16_k32_odd", 37, 113, 32, 32, f32, f16, true, {}, "q4_gemm"},  // one split, the reduce pass packs
      // linear, M symbolic in [1, 37]: q4_gemm, dispatching q4_gemv while M <= 4
      {"sym", 37, 113, 128, 32, f16, f32, true, {}, "q4_gemm", true},
      {"sym_x16", 37, 64, 64, 64, f32, f16, false, {}, "q4_gemm", true, true},  // x [1, M, K]
      // M symbolic in [1, 300]: tile rows and splits as M changes
      {"sym_big", 300, 139, 64, 32, f32, f16, true, {}, "q4_gemm", true},
      // linear_qkv
      {"qkv_g1", 1, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemv"},
      {"qkv_t37_x16", 37, 64, 128, 64, f16, f16, true, {32, 16, 16}, "q4_gemm", false, true},
      {"qkv_f37", 37, 31, 96, 32, f32, f32, false, {11, 7, 13}, "q4_gemm"},
      {"qkv_m53_x16_k32", 53, 64, 32, 32, f32, f16, true, {32, 16, 16}, "q4_gemm", false, true},  // directly
      {"qkv_m37_x16_odd", 37, 41, 64, 32, f16, f16, true, {11, 13, 17}, "q4_gemm"},  // the reduce pass packs
      {"qkv_m70_k32", 70, 200, 32, 32, f32, f32, true, {136, 32, 32}, "q4_gemm"},  // directly, a split inside a tile
      {"qkv_d3", 3, 23, 37, 0, f32, f32, true, {11, 5, 7}, "gemv"},
      {"qkv_d4_x16", 4, 32, 40, 0, f32, f16, true, {16, 8, 8}, "gemv"},
      {"qkv_d37", 37, 23, 113, 0, f32, f32, true, {11, 5, 7}, "tiled"},
      {"qkv_d37_x16", 37, 41, 113, 0, f32, f16, false, {11, 13, 17}, "tiled"},  // odd: scratch + pack
      // linear_swiglu (N: interleaved gate/up rows, N / 2 outputs)
      {"sw_g1", 1, 38, 64, 32, f32, f32, true, {}, "q4_gemv", false, false, true},        // in the epilogue
      {"sw_g3_x16", 3, 44, 128, 64, f16, f16, true, {}, "q4_gemv", false, false, true},   // f16 pairs
      {"sw_g2_x16_odd", 2, 26, 96, 32, f32, f16, false, {}, "q4_gemv", false, false, true},  // scratch + pass
      {"sw_t37", 37, 42, 128, 32, f32, f32, true, {}, "q4_gemm", false, false, true},     // the reduce pass pairs
      {"sw_f5_x16", 5, 22, 96, 32, f16, f16, false, {}, "q4_gemm", false, false, true},
      {"sw_sym", 37, 46, 128, 64, f32, f16, true, {}, "q4_gemm", true, true, true},       // gemv at M <= 4
      {"sw_m37_k32", 37, 42, 32, 32, f32, f32, true, {}, "q4_gemm", false, false, true},  // directly, N % 4 == 2
      {"sw_m37_x16_k32", 37, 44, 32, 32, f16, f16, true, {}, "q4_gemm", false, false, true},  // directly, f16 pairs
      {"sw_m5_x16_odd", 5, 26, 64, 32, f32, f16, false, {}, "q4_gemm", false, false, true},   // N / 2 odd
      {"sw_m137", 137, 262, 128, 128, f16, f32, true, {}, "q4_gemm", false, false, true},     // 64-row tiles x 3
      {"sw_d3", 3, 20, 37, 0, f32, f32, true, {}, "gemv", false, false, true},
      {"sw_d37_x16", 37, 26, 40, 0, f32, f16, false, {}, "tiled", false, false, true},
      // add_rms_norm_linear_qkv / _swiglu: q4_gemv normalizes in its prologue at one row of f32 x
      // (one dispatch); elsewhere add_rms_norm's kernel runs first (f16 x, M > 1, other kernels;
      // before q4_gemm's int8 variant, in its q8 form, writing x in int8)
      {"n_qkv_g1", 1, 61, 64, 32, f32, f32, true, {37, 11, 13}, "q4_gemv", false, false, false, true, 0.5},
      {"n_sw_g1_k2048", 1, 38, 2048, 64, f16, f32, false, {}, "q4_gemv", false, false, true, true},
      {"n_sw_sym", 37, 46, 128, 64, f32, f32, true, {}, "q4_gemm", true, true, true, true},
      {"n_qkv_g3_x16", 3, 64, 128, 64, f16, f16, true, {32, 16, 16}, "q4_gemv", false, false, false, true},
      {"n_qkv_t37", 37, 31, 96, 32, f32, f32, false, {11, 7, 13}, "q4_gemm", false, false, false, true},
      {"n_qkv_t37_x16", 37, 64, 128, 32, f32, f16, true, {32, 16, 16}, "q4_gemm", false, false, false, true},
      {"n_qkv_d3", 3, 23, 37, 0, f32, f32, true, {11, 5, 7}, "gemv", false, false, false, true},
      {"n_qkv_d37_x16", 37, 41, 113, 0, f32, f16, false, {11, 13, 17}, "tiled", false, false, false, true},
      // add_rms_norm_linear (the decoder's final norm and lm_head): the same routes
      {"n_lin_g1", 1, 113, 128, 32, f32, f32, false, {}, "q4_gemv", false, true, false, true},
      {"n_lin_t37_x16", 37, 40, 96, 32, f16, f16, false, {}, "q4_gemm", false, false, false, true},
      {"n_lin_d3", 3, 29, 40, 0, f32, f32, true, {}, "gemv", false, false, false, true},
  };
  return specs;
}

inline const std::vector<EmbeddingSpec>& embedding_specs() {
  static const std::vector<EmbeddingSpec> specs{
      {"e_f32", 37, 64, 32, DType::f32, 39},
      {"e_f16_sym", 113, 128, 64, DType::f16, 37, true, DType::i64},
      {"e_g128", 11, 256, 128, DType::f32, 5},
      // The dtype attribute: f16 scales into f32 rows (the decoder's embedding), f32 into f16.
      {"e_f16_to_f32", 41, 64, 32, DType::f16, 9, false, DType::i32, DType::f32},
      {"e_f32_to_f16", 23, 96, 32, DType::f32, 9, false, DType::i32, DType::f16},
  };
  return specs;
}

struct Shared {
  Products products;
  Embeddings embeddings;
  std::unique_ptr<Program> prog;
};

inline Shared& shared() {
  static Shared s = [] {
    Shared r;
    GraphBuilder b;
    for (const ProductSpec& p : product_specs()) r.products.add(b, p);
    for (const EmbeddingSpec& e : embedding_specs()) r.embeddings.add(b, e);
    r.prog = std::make_unique<Program>(shared_context(), b.build(), b.weights());
    return r;
  }();
  return s;
}

// Whether building `b`'s graph with `options` fails with an error that holds `what` (a
// malformed option is a build error that names it).
inline ::testing::AssertionResult build_fails(graph::GraphBuilder& b, const RuntimeOptions& options,
                                              const std::string& what) {
  try {
    Program prog(shared_context(), b.build(), b.weights(), options);
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(what) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the error does not say \"" << what << "\": " << e.what();
  }
  return ::testing::AssertionFailure() << "it built";
}

}  // namespace wgx::runtime::testing
