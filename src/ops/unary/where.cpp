// where(cond, a, b) with NumPy broadcasting of all three. The kernel moves element bits, so it is
// chosen by the output's element width only. A scalar a or b (Scalar or Sym) travels in the params
// block, rewritten on every resize: a Sym's current value is always the one used.
#include <algorithm>
#include <bit>

#include "graph/storage.h"
#include "ops/common.h"
#include "ops/unary/where.h"
#include "shaders/unary_shaders.h"

namespace wgx::ops {

namespace {

using graph::DType;
using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 256;  // every where variant's @workgroup_size
constexpr size_t kParamWords = 40;        // the Params struct of where.wgsl

const shaders::ShaderVariant* find_variant(const NodeContext& ctx) {
  switch (ctx.output(0).storage) {
    case runtime::Storage::F32:
    case runtime::Storage::I32: return shaders::find_unary("where.b32");
    case runtime::Storage::F16Packed:
    case runtime::Storage::F16Native: return shaders::find_unary("where.b16");
    case runtime::Storage::Bytes: return shaders::find_unary("where.b8");
    default: return nullptr;
  }
}

bool is_scalar(const NodeContext& ctx, size_t i) { return ctx.input_value(i).kind != graph::ValueKind::Tensor; }

// A scalar operand's element bits in the output's compute dtype. Integers wrap to the dtype's
// width, as PyTorch's casts do.
uint32_t scalar_bits(double v, DType dtype) {
  const auto as_int = static_cast<int64_t>(std::clamp(v, -9.2e18, 9.2e18));
  switch (dtype) {
    case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    case DType::f16: return graph::f32_to_f16(static_cast<float>(v));
    case DType::u8: return static_cast<uint32_t>(as_int) & 0xffu;
    case DType::boolean: return v != 0 ? 1u : 0u;
    default: return static_cast<uint32_t>(as_int);  // i32 (i64 runs as i32)
  }
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input_count() != 3 || is_scalar(ctx, 0)) return "needs a tensor cond and two operands";
  if (!find_variant(ctx)) return std::string("no variant for ") + runtime::storage_name(ctx.output(0).storage);
  for (size_t i = 1; i < 3; ++i) {
    if (!is_scalar(ctx, i) && ctx.input(i).storage != ctx.output(0).storage) return "operand storage differs";
  }
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& kernel =
      variant_kernel(ctx, *find_variant(ctx),
                     {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                      gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const bool scalar_a = is_scalar(ctx, 1), scalar_b = is_scalar(ctx, 2);
  // A scalar's binding is cond's buffer again (read-only bindings may alias); it is never read.
  const std::vector<gpu::BufferBinding> buffers{ctx.input(0).binding(),
                                                (scalar_a ? ctx.input(0) : ctx.input(1)).binding(),
                                                (scalar_b ? ctx.input(0) : ctx.input(2)).binding(),
                                                ctx.output(0).binding()};
  const DType dtype = ctx.output(0).dtype;
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [scalar_a, scalar_b, dtype, per_word](const NodeContext& c) {
    const std::vector<int64_t>& out = c.output_shape(0);
    const std::vector<int64_t> none;
    const std::vector<int64_t>& sc = c.input_shape(0);
    const std::vector<int64_t>& sa = scalar_a ? none : c.input_shape(1);
    const std::vector<int64_t>& sb = scalar_b ? none : c.input_shape(2);
    const uint64_t n = numel(out);
    const uint32_t flags = (sc == out ? 1u : 0u) | (!scalar_a && sa == out ? 2u : 0u) |
                           (!scalar_b && sb == out ? 4u : 0u) | (scalar_a ? 8u : 0u) | (scalar_b ? 16u : 0u);
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n),
                static_cast<uint32_t>(out.size()),
                flags,
                0,
                scalar_a ? scalar_bits(c.scalar_input(1), dtype) : 0u,
                scalar_b ? scalar_bits(c.scalar_input(2), dtype) : 0u,
                0,
                0};
    std::vector<uint32_t> dims(8, 1);
    for (size_t d = 0; d < out.size(); ++d) dims[d] = static_cast<uint32_t>(out[d]);
    l.params.insert(l.params.end(), dims.begin(), dims.end());
    for (const std::vector<int64_t>* s : {&sc, &sa, &sb}) {
      const std::vector<uint32_t> st = broadcast_strides(*s, out);
      l.params.insert(l.params.end(), st.begin(), st.end());
    }
    const uint64_t words = (n + per_word - 1) / per_word;
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, buffers, kParamWords, update);
}

}  // namespace

runtime::Route where_route() { return {"where", guard, build}; }

}  // namespace wgx::ops
