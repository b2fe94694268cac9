// embedding with a q4gsw table [V, D]: the rows of ids dequantized, in the output's dtype (the
// scale dtype, or the node's dtype attribute). Ids outside [0, V) give zero rows (q4_embedding.wgsl says why).
#include "ops/common.h"
#include "ops/quant/quant_routes.h"
#include "shaders/quant_flags.h"
#include "shaders/quant_shaders.h"

namespace wgx::ops::quant {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kWorkgroup = 256;  // q4_embedding.wgsl
using shaders::quant_flags::kScaleF16, shaders::quant_flags::kOutF16;

std::string guard(const NodeContext& ctx) {
  if (ctx.input(0).storage != runtime::Storage::Q4) return "the table is not q4gsw";
  if (ctx.input_value(1).kind != graph::ValueKind::Tensor) return "ids must be a tensor";
  if (ctx.input(1).dtype != graph::DType::i32) return "ids are " + dtype_label(ctx.input(1).dtype);
  for (const graph::Dim& d : ctx.input_type(0).shape) {
    if (!d.is_const()) return "the table's shape is symbolic";
  }
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& kernel = family_kernel(
      ctx, "q4_embedding",
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const Q4Params q = q4_params(ctx, 0);
  const std::vector<int64_t> table = ctx.input_max_shape(0);
  const auto rows = static_cast<uint32_t>(table[0]), dim = static_cast<uint32_t>(table[1]);
  const uint32_t flags = (q.scale_f16 ? kScaleF16 : 0u) | (ctx.output(0).dtype == graph::DType::f16 ? kOutF16 : 0u);
  auto update = [q, rows, dim, flags](const NodeContext& c) {
    const uint64_t words = numel(c.input_shape(1)) * dim / 8;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(words), dim, rows, flags, q.scale_base, q.group_shift, q.groups, 0};
    l.workgroups = (words + kWorkgroup - 1) / kWorkgroup;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.output(0).binding()}, 8,
      update);
}

}  // namespace

std::vector<runtime::Route> embedding_routes() { return {{"q4_gather", guard, build}}; }

}  // namespace wgx::ops::quant
