// embedding(table [V, D], ids [...]) -> [..., D]: a gather of rows, one output word per
// invocation, converted to the output's dtype on the way. Ids outside [0, V) give zero rows
// (embedding.wgsl says why).
#include "ops/common.h"
#include "ops/linalg/linalg.h"
#include "shaders/linalg_shaders.h"

namespace wgx::ops::linalg {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kWorkgroupSize = 256;  // embedding.wgsl

const shaders::ShaderVariant* find_variant(const NodeContext& ctx) {
  return shaders::find_linalg("embedding." + dtype_label(ctx.input(0).dtype) + "." + dtype_label(ctx.output(0).dtype));
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input_value(1).kind != graph::ValueKind::Tensor) return "ids must be a tensor";
  if (ctx.input(0).storage == runtime::Storage::Q4) return "q4gsw tables take the quantized routes";
  if (!find_variant(ctx)) {
    return "no variant for a " + dtype_label(ctx.input(0).dtype) + " table and " + dtype_label(ctx.output(0).dtype) +
           " output";
  }
  if (ctx.input(1).dtype != graph::DType::i32) return "ids are " + dtype_label(ctx.input(1).dtype);
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& kernel = variant_kernel(
      ctx, *find_variant(ctx),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [per_word](const NodeContext& c) {
    const std::vector<int64_t>& table = c.input_shape(0);
    const uint64_t n = numel(c.output_shape(0));
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(table[1]), static_cast<uint32_t>(table[0]), 0};
    l.workgroups = ((n + per_word - 1) / per_word + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.output(0).binding()}, 4,
      update);
}

}  // namespace

std::vector<runtime::Route> embedding_routes() { return {{"gather", guard, build}}; }

}  // namespace wgx::ops::linalg
