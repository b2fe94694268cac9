// Binary elementwise ops (arithmetic, comparison, logical) with NumPy broadcasting: one
// generated kernel per (op, dtype); one route, guarded by the dtypes it has variants for.
#include "ops/common.h"
#include "ops/families.h"
#include "shaders/binary_flags.h"
#include "shaders/binary_shaders.h"

namespace wgx::ops {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 256;  // every binary variant's @workgroup_size

// The dtype the kernel computes in: the first tensor input's.
graph::DType operand_dtype(const NodeContext& ctx) {
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input_value(i).kind == graph::ValueKind::Tensor) return ctx.input(i).dtype;
  }
  return ctx.output(0).dtype;
}

const shaders::ShaderVariant* find_variant(const NodeContext& ctx) {
  return shaders::find_binary(ctx.node().op + "." + dtype_label(operand_dtype(ctx)));
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input_count() != 2) return "needs two inputs";
  if (!find_variant(ctx)) return "no variant for " + ctx.node().op + " on " + dtype_label(operand_dtype(ctx));
  for (size_t i = 0; i < 2; ++i) {
    if (ctx.input_value(i).kind == graph::ValueKind::Tensor && ctx.input(i).dtype != operand_dtype(ctx)) {
      return "inputs of different dtypes";
    }
  }
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const graph::DType dtype = operand_dtype(ctx);
  const gpu::Kernel& kernel = variant_kernel(
      ctx, *find_variant(ctx),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  InputBinding a = bind_input(ctx, 0, dtype);
  InputBinding b = bind_input(ctx, 1, dtype);
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto shape_of = [](const NodeContext& c, size_t i, const InputBinding& in) {
    return in.owned ? in.scalar_shape : c.input_shape(i);
  };
  // The scalar buffers must live as long as the exec: the update lambda keeps them.
  auto update = [a, b, per_word, shape_of](const NodeContext& c) {
    a.refresh(c);
    b.refresh(c);
    const std::vector<int64_t>& out = c.output_shape(0);
    const std::vector<int64_t> sa = shape_of(c, 0, a), sb = shape_of(c, 1, b);
    DispatchExec::Launch l;
    const uint64_t n = numel(out);
    using shaders::binary_flags::kAFull, shaders::binary_flags::kBFull;
    const uint32_t flags = (sa == out ? kAFull : 0u) | (sb == out ? kBFull : 0u);
    l.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(out.size()), flags, 0};
    std::vector<uint32_t> dims(8, 1);
    for (size_t d = 0; d < out.size(); ++d) dims[d] = static_cast<uint32_t>(out[d]);
    for (auto* v : {&dims}) l.params.insert(l.params.end(), v->begin(), v->end());
    const std::vector<uint32_t> st_a = broadcast_strides(sa, out), st_b = broadcast_strides(sb, out);
    l.params.insert(l.params.end(), st_a.begin(), st_a.end());
    l.params.insert(l.params.end(), st_b.begin(), st_b.end());
    const uint64_t words = (n + per_word - 1) / per_word;
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel,
                                        std::vector<gpu::BufferBinding>{a.binding, b.binding, ctx.output(0).binding()},
                                        28, update);
}

}  // namespace

void register_binary(runtime::KernelRegistry& registry) {
  for (const char* op : {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt",
                         "ge", "logical_and", "logical_or", "logical_xor"}) {
    registry.add({op, {{"binary", guard, build}}});
  }
}

}  // namespace wgx::ops
