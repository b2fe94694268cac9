#include <bit>

#include "ops/quant/quant_routes.h"

#include "ops/common.h"
#include "shaders/quant_shaders.h"

namespace wgx::ops::quant {

Q4Params q4_params(const runtime::NodeContext& ctx, size_t input) {
  const graph::TensorType& type = ctx.input_type(input);
  const auto layout = graph::q4gsw_layout(ctx.input_max_shape(input), type.quant);
  Q4Params p;
  if (!layout) return p;  // the graph validated it: not reached
  p.scale_base = static_cast<uint32_t>(layout->scales_offset / 4);  // K / 2 bytes per row: a multiple of 16
  p.group_shift = static_cast<uint32_t>(std::countr_zero(type.quant.group_size));
  p.groups = static_cast<uint32_t>(layout->groups_per_row);
  p.scale_f16 = type.quant.scale_dtype == graph::DType::f16;
  p.packed_bytes = layout->packed_bytes;
  return p;
}

std::string check_limits(const runtime::NodeContext& ctx, uint32_t buffers, uint64_t storage) {
  const gpu::Limits& lim = ctx.gpu().limits();
  if (lim.max_compute_invocations_per_workgroup < 256 || lim.max_compute_workgroup_size_x < 256) {
    return "needs 256 invocations per workgroup";
  }
  if (lim.max_compute_workgroup_storage_size < storage) {
    return "needs " + std::to_string(storage) + " bytes of workgroup storage";
  }
  if (lim.max_storage_buffers_per_shader_stage < buffers) {
    return "needs " + std::to_string(buffers) + " storage buffers per stage";
  }
  return "";
}

const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& variant,
                                 std::vector<gpu::Binding> bindings) {
  return variant_kernel(ctx, *shaders::find_quant(variant), std::move(bindings),
                        std::string(kF16PackWgsl) + kSiluWgsl);
}

std::string option(const runtime::NodeContext& ctx, const char* name) {
  const auto it = ctx.options().find(name);
  return it == ctx.options().end() ? std::string() : it->second;
}

}  // namespace wgx::ops::quant
