// conv1d(x [N, Cin, L], weight [Cout, Cin, K], [bias]) -> [N, Cout, Lout], in f32 whatever the
// storage (f32 or packed f16). Routes, in preference order:
//   im2col_gemm: Cin * K >= 64 and N * Lout >= 64 at max shapes: the patch matrix [N * Lout,
//                Cin * K] in scratch, then a tiled GEMM (conv1d_gemm.wgsl) into [N, Cout, Lout]
//   direct:      every node (the fallback), one output word per invocation
// L (and so Lout) may be symbolic: params and workgroup counts come from the current shapes on
// every resize.
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

constexpr uint64_t kWorkgroupSize = 256;  // every conv1d kernel's

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }

// One convolution at given shapes, with the node's attributes.
struct Conv {
  uint64_t n, cin, l, cout, lout, k, stride, padding, dilation;
  bool bias;

  uint64_t outputs() const { return n * cout * lout; }
  uint64_t reduction() const { return cin * k; }  // the GEMM's K: one patch row
};

Conv conv_of(const NodeContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& out) {
  const std::vector<int64_t>& w = ctx.input_shape(1);
  auto attr = [&ctx](const char* name) { return static_cast<uint64_t>(ctx.attr(name).as_int()); };
  return {static_cast<uint64_t>(x[0]),   static_cast<uint64_t>(x[1]), static_cast<uint64_t>(x[2]),
          static_cast<uint64_t>(w[0]),   static_cast<uint64_t>(out[2]), static_cast<uint64_t>(w[2]),
          attr("stride"),                attr("padding"),             attr("dilation"),
          ctx.input_count() > 2};
}
Conv current(const NodeContext& ctx) { return conv_of(ctx, ctx.input_shape(0), ctx.output_shape(0)); }
Conv at_max(const NodeContext& ctx) { return conv_of(ctx, ctx.input_max_shape(0), ctx.output_max_shape(0)); }

// The direct kernel's params (conv1d.wgsl), 12 words.
std::vector<uint32_t> direct_params(const Conv& c) {
  return {u32(c.outputs()), u32(c.cin),     u32(c.l),        u32(c.cout),
          u32(c.lout),      u32(c.k),       u32(c.stride),   u32(c.padding),
          u32(c.dilation),  c.bias ? shaders::linalg_flags::kBias : 0u, 0, 0};
}

// What every route needs: f32 or f16 storage, 256 invocations per workgroup, u32 indices.
std::string check_node(const NodeContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  if (dtype != DType::f32 && dtype != DType::f16) return "no variants for " + dtype_label(dtype);
  const gpu::Limits& lim = ctx.gpu().limits();
  if (lim.max_compute_invocations_per_workgroup < kWorkgroupSize || lim.max_compute_workgroup_size_x < kWorkgroupSize) {
    return "needs 256 invocations per workgroup";
  }
  return check_rank_and_size(ctx);
}

std::string guard_direct(const NodeContext& ctx) { return check_node(ctx); }

// The im2col_gemm route's thresholds, at max shapes. Below 64 terms per output the patch matrix
// (Cin * K f32 words per position, written and read back) costs more than the direct route's
// re-reads of x save; below 64 positions the GEMM's column tiles are mostly empty.
constexpr uint64_t kMinReduction = 64;
constexpr uint64_t kMinColumns = 64;
constexpr uint64_t kGemmTile = 64;                     // BM = BN in conv1d_gemm.wgsl
constexpr uint64_t kGemmStorage = 2 * 16 * 65 * 4;     // Ws and Cs: BK rows of BM + 1 f32s

uint64_t patch_bytes(const Conv& c) { return 4 * c.n * c.lout * c.reduction(); }

std::string guard_im2col_gemm(const NodeContext& ctx) {
  if (auto why = check_node(ctx); !why.empty()) return why;
  const Conv c = at_max(ctx);
  if (c.reduction() < kMinReduction) {
    return "Cin * K is " + std::to_string(c.reduction()) + "; the GEMM takes Cin * K >= " + std::to_string(kMinReduction);
  }
  if (c.n * c.lout < kMinColumns) {
    return "N * Lout is up to " + std::to_string(c.n * c.lout) + "; the GEMM takes N * Lout >= " +
           std::to_string(kMinColumns);
  }
  const gpu::Limits& lim = ctx.gpu().limits();
  if (lim.max_compute_workgroup_storage_size < kGemmStorage) {
    return "needs " + std::to_string(kGemmStorage) + " bytes of workgroup storage";
  }
  const uint64_t bytes = patch_bytes(c);
  if (bytes / 4 >= (uint64_t{1} << 32) || bytes > lim.max_storage_buffer_binding_size) {
    return "the patch matrix (" + std::to_string(bytes) + " bytes) exceeds a storage binding";
  }
  return "";
}

// im2col into scratch, the product into the output (f32) or a scratch packed to f16 after.
std::unique_ptr<runtime::NodeExec> build_im2col_gemm(const NodeContext& ctx) {
  const std::string dtype = dtype_label(ctx.input(0).dtype);
  const bool f16 = ctx.input(0).dtype == DType::f16;
  auto steps = std::make_unique<Steps>();
  const gpu::BufferBinding patches = steps->scratch(ctx, patch_bytes(at_max(ctx)));
  const gpu::BufferBinding bias = ctx.input_count() > 2 ? ctx.input(2).binding() : steps->own(ctx, 4, "no bias");
  const gpu::BufferBinding out = f16 ? steps->scratch(ctx, 4 * at_max(ctx).outputs()) : ctx.output(0).binding();

  const gpu::Kernel& im2col = variant_kernel(ctx, *shaders::find_linalg("conv1d_im2col." + dtype),
                                             {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  auto update_im2col = [](const NodeContext& c) {
    const Conv conv = current(c);
    const uint64_t count = conv.n * conv.lout * conv.reduction();
    DispatchExec::Launch l;
    l.params = {u32(count),  u32(conv.cin),    u32(conv.l),       u32(conv.lout),
                u32(conv.k), u32(conv.stride), u32(conv.padding), u32(conv.dilation)};
    l.workgroups = ceil_div(count, kWorkgroupSize);
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(ctx, im2col, std::vector<gpu::BufferBinding>{ctx.input(0).binding(), patches},
                                            8, update_im2col));

  const gpu::Kernel& gemm = variant_kernel(
      ctx, *shaders::find_linalg("conv1d_gemm." + dtype),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
       gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  auto update_gemm = [](const NodeContext& c) {
    const Conv conv = current(c);
    const uint64_t columns = conv.n * conv.lout, tiles_n = ceil_div(columns, kGemmTile);
    DispatchExec::Launch l;
    l.params = {u32(conv.cout), u32(columns), u32(conv.reduction()), u32(conv.lout),
                u32(tiles_n),   conv.bias ? shaders::linalg_flags::kBias : 0u, 0, 0};
    l.workgroups = ceil_div(conv.cout, kGemmTile) * tiles_n;
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, gemm, std::vector<gpu::BufferBinding>{ctx.input(1).binding(), patches, bias, out}, 8, update_gemm));
  if (f16) steps->add(to_f16_step(ctx, out));
  return steps;
}

std::unique_ptr<runtime::NodeExec> build_direct(const NodeContext& ctx) {
  const gpu::Kernel& kernel = variant_kernel(
      ctx, *shaders::find_linalg("conv1d_direct." + dtype_label(ctx.input(0).dtype)),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
       gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  auto steps = std::make_unique<Steps>();
  const gpu::BufferBinding bias = ctx.input_count() > 2 ? ctx.input(2).binding() : steps->own(ctx, 4, "no bias");
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [per_word](const NodeContext& c) {
    const Conv conv = current(c);
    DispatchExec::Launch l;
    l.params = direct_params(conv);
    l.workgroups = ceil_div(ceil_div(conv.outputs(), per_word), kWorkgroupSize);
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, kernel,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), bias, ctx.output(0).binding()},
      12, update));
  return steps;
}

}  // namespace

std::vector<runtime::Route> conv1d_routes() {
  return {{"im2col_gemm", guard_im2col_gemm, build_im2col_gemm}, {"direct", guard_direct, build_direct}};
}

}  // namespace wgx::ops::linalg
