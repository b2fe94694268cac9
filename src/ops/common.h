// Helpers shared by the op families: variant names by dtype, kernels from generated shader
// tables, the f32 -> f16 packing WGSL, broadcasting strides, scalar inputs materialized as
// one-element tensors, and executables made of several dispatches with their scratch buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/kernel.h"
#include "runtime/op_kernel.h"
#include "shaders/shader_variant.h"

namespace wgx::ops {

// The dtype label variants use for a storage: "f32", "f16", "i32", "bool", "u8".
std::string dtype_label(graph::DType compute_dtype);

// f32 -> f16 for kernels that write packed f16: f16_bits(x) is x's half (rounded as
// pack2x16float rounds), f16_word(v) packs v.x (low) and v.y into one word. pack2x16float is
// undefined outside the finite f16 range, so overflow saturates to +-inf (as rounding does) and
// NaN stays NaN, as a PyTorch cast gives them.
inline constexpr const char* kF16PackWgsl = R"(
fn f16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
  if (abs(x) >= 65520.0) { return ((b >> 16u) & 0x8000u) | 0x7c00u; }
  return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
fn f16_word(v: vec2<f32>) -> u32 { return f16_bits(v.x) | (f16_bits(v.y) << 16u); }
)";

// silu(x) = x * sigmoid(x), with exp of a non-positive argument only, so nothing overflows.
inline constexpr const char* kSiluWgsl = R"(
fn silu(x: f32) -> f32 {
  let e = exp(-abs(x));
  let s = 1.0 / (1.0 + e);
  return x * select(e * s, s, x >= 0.0);
}
)";

// 32 values of x in int8, as the quant family's one-row kernels stage them and q8_chunks.wgsl
// (or add_rms_norm's q8 form) writes them for q4_gemm: q = round(x * 127 / max |x|), clamped to
// [-127, 127], so x ~ q * dx with dx = max |x| / 127 (each value at most dx / 2 off, plus f32
// rounding). Words: lo = (w0, w1, w2, w3), hi = (w4 .. w7); word 2h holds the q of elements 8h,
// 8h + 2, 8h + 4 and 8h + 6, word 2h + 1 the odd ones: the bytes that w & 0x0f0f0f0f and
// (w >> 4) & 0x0f0f0f0f take from the weight word h of the same 32 columns (nibble i is element
// i). sum: of the 32 q (for the nibbles' offset of 8).
inline constexpr const char* kInt8ChunkWgsl = R"(
struct I8Chunk { lo: vec4<u32>, hi: vec4<u32>, dx: f32, sum: i32 }
fn i8_chunk(v: array<vec4<f32>, 8>) -> I8Chunk {
  var amax = 0.0;
  for (var i = 0u; i < 8u; i++) { let a = abs(v[i]); amax = max(amax, max(max(a.x, a.y), max(a.z, a.w))); }
  let inv = select(0.0, 127.0 / amax, amax > 0.0);
  var w: array<u32, 8>;
  var sum = vec4<i32>();
  for (var h = 0u; h < 4u; h++) {
    let a = vec4<i32>(clamp(round(v[2u * h] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));       // 8h .. 8h + 3
    let b = vec4<i32>(clamp(round(v[2u * h + 1u] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));  // 8h + 4 .. 8h + 7
    w[2u * h] = pack4xI8(vec4<i32>(a.x, a.z, b.x, b.z));
    w[2u * h + 1u] = pack4xI8(vec4<i32>(a.y, a.w, b.y, b.w));
    sum += a + b;
  }
  return I8Chunk(vec4<u32>(w[0], w[1], w[2], w[3]), vec4<u32>(w[4], w[5], w[6], w[7]), amax / 127.0,
                 sum.x + sum.y + sum.z + sum.w);
}
)";

// A variant's full WGSL: the variant's directive lines (enable, requires, diagnostic), then
// wgx_workgroup_index (gpu::kLinearWorkgroupWgsl), then `prelude` (WGSL the family's templates
// call, e.g. kF16PackWgsl), then the rest of the variant.
std::string variant_source(const shaders::ShaderVariant& variant, std::string_view prelude = {});

// The pipeline for one generated variant (compiled once per program), from variant_source, with
// the values of its override constants (part of the pipeline's key).
const gpu::Kernel& variant_kernel(const runtime::NodeContext& ctx, const shaders::ShaderVariant& variant,
                                  std::vector<gpu::Binding> bindings, std::string_view prelude = {},
                                  std::vector<std::pair<std::string, double>> constants = {});

// A kernel's params that stay fixed for a node, as pipeline constants (ops/README.md): its params
// struct's u32 `fields` and the `prefix` of their accessors. wgsl() declares, per field f,
// `override F_C: u32` (F: f in capitals) and `fn <prefix>f() -> u32`, which returns F_C:
// prepended to the kernel's template, which reads those fields only through the accessors.
// constants() sets the fields to `values` (in the fields' order): a kernel built for one node.
// The params still carry the fields; one kernel for every node, reading them from params,
// measured slower (ops/README.md).
struct FixedParams {
  std::string_view prefix;
  std::vector<std::string_view> fields;
  std::string wgsl() const;
  void constants(std::vector<std::pair<std::string, double>>& out, const std::vector<uint32_t>& values) const;
};

// Element strides of an input of shape `in` broadcast to `out` (right-aligned): 0 along
// broadcast dims, packed into 8 slots (rank <= 8).
std::vector<uint32_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

uint64_t numel(const std::vector<int64_t>& shape);

// An input that is a tensor already, or a Scalar/Sym input held in a one-element buffer of
// `dtype` (owned by the returned holder). A Sym's value changes between executions: call
// refresh() from the resize hook.
struct InputBinding {
  gpu::BufferBinding binding;
  std::shared_ptr<gpu::Buffer> owned;
  std::vector<int64_t> scalar_shape;  // {} for a scalar: broadcasts everywhere
  size_t input = 0;
  graph::DType dtype = graph::DType::f32;

  // Re-uploads a Sym input's current value (a no-op for tensors and constant scalars).
  void refresh(const runtime::NodeContext& ctx) const;
};
InputBinding bind_input(const runtime::NodeContext& ctx, size_t i, graph::DType dtype);

// "" when every tensor input and output has rank <= 8 and fewer than 2^32 elements at max.
std::string check_rank_and_size(const runtime::NodeContext& ctx);

// The executable part of an op that updates inputs where they lie (registered in_place with these
// pairs: caches, the seen set of sample_token_penalized): before its dispatch, every updated
// input whose output is not that same storage (no mutation, or the planner had to keep the old
// contents) is copied there whole, so the dispatch only ever writes what changes.
class InPlaceExec : public runtime::NodeExec {
 public:
  InPlaceExec(const runtime::NodeContext& ctx, const runtime::InPlace& updates,
              std::unique_ptr<runtime::NodeExec> dispatch);
  void resize(const runtime::NodeContext& ctx) override { dispatch_->resize(ctx); }
  void record(gpu::Recorder& rec) override;

 private:
  std::vector<std::pair<runtime::TensorRef, runtime::TensorRef>> copies_;  // (input, output)
  std::unique_ptr<runtime::NodeExec> dispatch_;
};

// An executable part made of several steps (dispatches, usually) resized and recorded in the
// order added, and the scratch buffers they use. WebGPU orders the storage accesses of
// successive dispatches, so a step sees what the steps before it wrote. A family whose steps
// are not all run every time derives from this and overrides resize/record.
class Steps : public runtime::NodeExec {
 public:
  void add(std::unique_ptr<runtime::NodeExec> step) { steps_.push_back(std::move(step)); }
  // A zeroed device buffer of at least `bytes` that lives as long as this exec (so as long as
  // the bind groups of its steps).
  gpu::BufferBinding own(const runtime::NodeContext& ctx, uint64_t bytes, const std::string& what);
  // Scratch used only between this node's own dispatches (runtime::ScratchPool): shared with
  // every other node's scratch, so it must be written before it is read in every execute.
  static gpu::BufferBinding scratch(const runtime::NodeContext& ctx, uint64_t bytes) { return ctx.scratch(bytes); }

  void resize(const runtime::NodeContext& ctx) override;
  void record(gpu::Recorder& rec) override;

 private:
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;  // declared first: outlives the steps that bind them
  std::vector<std::unique_ptr<runtime::NodeExec>> steps_;
};

// The executable part of a route built on a view of its node (runtime::OperandMap: a fused op
// running the route of an op it fuses), resized through the same view, which it keeps.
class ViewedExec : public runtime::NodeExec {
 public:
  ViewedExec(std::shared_ptr<const runtime::OperandMap> operands, std::unique_ptr<runtime::NodeExec> exec)
      : operands_(std::move(operands)), exec_(std::move(exec)) {}
  void resize(const runtime::NodeContext& ctx) override { exec_->resize(runtime::NodeContext(ctx, *operands_)); }
  void record(gpu::Recorder& rec) override { exec_->record(rec); }

 private:
  std::shared_ptr<const runtime::OperandMap> operands_;
  std::unique_ptr<runtime::NodeExec> exec_;
};

// `build` (a route's) run for `ctx`'s node seen through `operands`.
std::unique_ptr<runtime::NodeExec> build_viewed(const decltype(runtime::Route::build)& build,
                                                const runtime::NodeContext& ctx, runtime::OperandMap operands);

// The first of `routes` whose guard takes `view` (a fused node seen as an op it fuses), or
// nullopt with each route's reason added to `why`.
std::optional<runtime::Route> first_route(const runtime::NodeContext& view, const std::vector<runtime::Route>& routes,
                                          std::string& why);

}  // namespace wgx::ops
