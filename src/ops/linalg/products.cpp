// matmul and linear as one batched product C[b] = A[b] @ B[b] (+ bias), f32 accumulation:
//   linear: A = x viewed as [M, K] (M = product of x's leading dims), B = weight [N, K] ("nk")
//   matmul: A [..., M, K], B [..., K, N] ("kn"), batch dims broadcast as torch.matmul does
// Two routes: "gemv" (guard: at most 4 rows at max shapes) and "tiled" (every M, N, K).
// M, the batch and their strides come from the current shapes on every resize. What is fixed at
// build time (vec4 alignment, how f16 output is written) is derived from the graph's Dims so that
// it holds for every value of a SymInt.
#include <algorithm>

#include "ops/common.h"
#include "ops/linalg/linalg.h"
#include "ops/linalg/steps.h"
#include "shaders/linalg_flags.h"
#include "shaders/linalg_shaders.h"

namespace wgx::ops::linalg {

namespace {

using graph::DType;
using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kGemvRows = 4;     // R in gemv_*.wgsl
constexpr uint64_t kGemvNkCols = 8;   // 256 / tpc (gemv_nk.variants.toml)
constexpr uint64_t kGemvKnCols = 64;  // 4 * nq (gemv_kn.variants.toml)
constexpr uint32_t kWorkgroupSize = 256;
constexpr size_t kParamWords = 32;

// The tiled route's tile (gemm.wgsl's t64): BM = BN = 64, 4 x 4 sums per invocation. A tile of
// 128 (8 x 8, four times the math per staged byte) measured no faster on an H200 (Dawn, Vulkan)
// for f32 linear at 2048x4096x4096 (17.9 against 17.4 TFLOP/s) and slower for f16 (8.7 against
// 23.0) and matmul (14.0 against 18.6), and is gone.
struct Tile {
  const char* label;
  uint64_t size;     // BM = BN
  uint64_t storage;  // workgroup bytes: As and Bs, size rows of 5 vec4s each
};
constexpr Tile kTile{"t64", 64, 2 * 64 * 5 * 16};

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// One batched product at given shapes.
struct Product {
  uint64_t m = 0, n = 0, k = 0, batch = 1;
  std::vector<int64_t> batch_dims;                               // C's batch dims (<= 6)
  std::vector<uint32_t> a_strides{std::vector<uint32_t>(8, 0)};  // element strides along them
  std::vector<uint32_t> b_strides{std::vector<uint32_t>(8, 0)};
};

Product product_of(bool linear, std::vector<int64_t> a, std::vector<int64_t> b) {
  Product p;
  if (linear) {
    p.k = static_cast<uint64_t>(a.back());
    p.m = numel({a.begin(), a.end() - 1});
    p.n = static_cast<uint64_t>(b[0]);
    return p;
  }
  if (a.size() == 1) a.insert(a.begin(), 1);  // torch.matmul's 1-D operands
  if (b.size() == 1) b.push_back(1);
  p.m = static_cast<uint64_t>(a[a.size() - 2]);
  p.k = static_cast<uint64_t>(a.back());
  p.n = static_cast<uint64_t>(b.back());
  const std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ba.size(), bb.size());
  std::vector<int64_t> dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + ba.size() >= rank ? ba[d + ba.size() - rank] : 1;
    const int64_t db = d + bb.size() >= rank ? bb[d + bb.size() - rank] : 1;
    dims[d] = da == 1 ? db : da;
  }
  const uint64_t count = numel(dims);
  if (numel(bb) == 1 && numel(ba) == count) {
    // One B for every matrix of A, whose matrices are consecutive: a single taller product.
    p.m *= count;
    return p;
  }
  p.batch = count;
  p.batch_dims = dims;
  p.a_strides = broadcast_strides(ba, dims);
  p.b_strides = broadcast_strides(bb, dims);
  for (uint32_t& s : p.a_strides) s *= static_cast<uint32_t>(p.m * p.k);
  for (uint32_t& s : p.b_strides) s *= static_cast<uint32_t>(p.k * p.n);
  return p;
}

Product max_product(const NodeContext& ctx, bool linear) {
  return product_of(linear, ctx.input_max_shape(0), ctx.input_max_shape(1));
}

// True when `d` is a multiple of m for every value of its SymInt.
bool always_multiple(const graph::Dim& d, int64_t m) { return d.value() % m == 0 && d.coef() % m == 0; }

// The build-time choices of a node.
struct Plan {
  bool linear = false;
  bool f16 = false;
  bool vec = false;      // K (and for matmul N) a multiple of 4: every row of A and B vec4-aligned
  bool via_f32 = false;  // f16 output with N possibly odd: f32 into a scratch, then packed

  std::string io() const {
    return std::string(f16 ? "f16" : "f32") + (vec ? "_vec" : "_any") + (via_f32 ? "_to_f32" : "");
  }
  const char* layout() const { return linear ? "nk" : "kn"; }
};

Plan plan_of(const NodeContext& ctx, bool linear) {
  const graph::Shape& a = ctx.input_type(0).shape;
  const graph::Shape& b = ctx.input_type(1).shape;
  const graph::Dim k = a.back();
  const graph::Dim n = linear ? b[0] : b.size() == 1 ? graph::Dim(1) : b.back();
  Plan p;
  p.linear = linear;
  p.f16 = ctx.input(0).dtype == DType::f16;
  p.vec = always_multiple(k, 4) && (linear || always_multiple(n, 4));
  p.via_f32 = p.f16 && !always_multiple(n, 2);
  return p;
}

std::string check_node(const NodeContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  if (dtype != DType::f32 && dtype != DType::f16) return "no variants for " + dtype_label(dtype);
  if (ctx.input(1).storage == runtime::Storage::Q4) return "q4gsw weights take the quantized routes";
  if (ctx.input(1).dtype != dtype) return "operands of different dtypes";
  return check_rank_and_size(ctx);
}

std::string check_limits(const NodeContext& ctx, uint64_t storage) {
  const gpu::Limits& lim = ctx.gpu().limits();
  if (lim.max_compute_invocations_per_workgroup < kWorkgroupSize || lim.max_compute_workgroup_size_x < kWorkgroupSize) {
    return "needs 256 invocations per workgroup";
  }
  if (lim.max_compute_workgroup_storage_size < storage) {
    return "needs " + std::to_string(storage) + " bytes of workgroup storage";
  }
  return "";
}

std::string variant_name(const NodeContext& ctx, bool linear, const Tile* tile) {
  const Plan plan = plan_of(ctx, linear);
  if (!tile) return std::string("gemv_") + plan.layout() + "." + plan.io();
  return std::string("gemm.") + tile->label + "." + plan.layout() + "." + plan.io();
}

std::string guard_gemv(const NodeContext& ctx, bool linear) {
  if (auto why = check_node(ctx); !why.empty()) return why;
  const uint64_t rows = max_product(ctx, linear).m;
  if (rows > kGemvRows) {
    return "M is up to " + std::to_string(rows) + "; gemv takes M <= 4";
  }
  const std::string name = variant_name(ctx, linear, nullptr);
  if (!shaders::find_linalg(name)) return "no variant " + name;
  return check_limits(ctx, linear ? 256 * 4 : 256 * 16);  // its reduction buffer
}

std::string guard_tiled(const NodeContext& ctx, bool linear) {
  if (auto why = check_node(ctx); !why.empty()) return why;
  const std::string name = variant_name(ctx, linear, &kTile);
  if (!shaders::find_linalg(name)) return "no variant " + name;
  return check_limits(ctx, kTile.storage);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, bool linear, bool gemv) {
  const Tile* tile = gemv ? nullptr : &kTile;
  const Plan plan = plan_of(ctx, linear);
  const gpu::Kernel& kernel = variant_kernel(
      ctx, *shaders::find_linalg(variant_name(ctx, linear, tile)),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
       gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  auto steps = std::make_unique<Steps>();
  const bool has_bias = linear && ctx.input_count() > 2;
  const gpu::BufferBinding bias = has_bias ? ctx.input(2).binding() : steps->own(ctx, 4, "no bias");
  const gpu::BufferBinding out =
      plan.via_f32 ? steps->scratch(ctx, 4 * numel(ctx.output_max_shape(0))) : ctx.output(0).binding();
  const uint64_t rows = gemv ? kGemvRows : tile->size;
  const uint64_t cols = gemv ? (linear ? kGemvNkCols : kGemvKnCols) : tile->size;
  auto update = [linear, has_bias, rows, cols](const NodeContext& c) {
    const Product p = product_of(linear, c.input_shape(0), c.input_shape(1));
    const uint64_t tiles_m = ceil_div(p.m, rows), tiles_n = ceil_div(p.n, cols);
    DispatchExec::Launch l;
    auto u32 = [](auto v) { return static_cast<uint32_t>(v); };
    const uint32_t flags = has_bias ? shaders::linalg_flags::kBias : 0u;
    l.params = {u32(p.m),     u32(p.n),     u32(p.k), u32(p.batch),
                u32(tiles_m), u32(tiles_n), flags,    u32(p.batch_dims.size())};
    std::vector<uint32_t> dims(8, 1);  // unused slots: size 1
    for (size_t d = 0; d < p.batch_dims.size(); ++d) dims[d] = u32(p.batch_dims[d]);
    for (const std::vector<uint32_t>& v : {dims, p.a_strides, p.b_strides}) {
      l.params.insert(l.params.end(), v.begin(), v.end());
    }
    l.workgroups = tiles_m * tiles_n * p.batch;
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, kernel, std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), bias, out},
      kParamWords, update));
  if (plan.via_f32) steps->add(to_f16_step(ctx, out));
  return steps;
}

}  // namespace

std::vector<runtime::Route> product_routes(bool linear) {
  return {{"gemv", [linear](const NodeContext& c) { return guard_gemv(c, linear); },
           [linear](const NodeContext& c) { return build(c, linear, true); }},
          {"tiled", [linear](const NodeContext& c) { return guard_tiled(c, linear); },
           [linear](const NodeContext& c) { return build(c, linear, false); }}};
}

}  // namespace wgx::ops::linalg
