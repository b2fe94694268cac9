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
  return storage_buffers_guard(ctx, buffers);
}

const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& variant,
                                 std::vector<gpu::Binding> bindings) {
  return variant_kernel(ctx, *shaders::find_quant(variant), std::move(bindings));
}

namespace {

// put/put2; with `one_output`, every column goes to Out0 (a kernel whose Out1 and Out2 are not
// plain words: q4_gemv's persist variant).
std::string output_wgsl(const std::string& total, bool one_output) {
  if (one_output) {
    return R"(
fn put(m: u32, n: u32, v: f32) { Out0[m * params.split0 + n] = bitcast<u32>(v); }
fn put2(m: u32, n: u32, v: vec2<f32>) { Out0[(m * params.split0 + n) >> 1u] = f16_word(v); }
)";
  }
  return R"(
fn put(m: u32, n: u32, v: f32) {
  if (n < params.split0) {
    Out0[m * params.split0 + n] = bitcast<u32>(v);
  } else if (n < params.split1) {
    Out1[m * (params.split1 - params.split0) + n - params.split0] = bitcast<u32>(v);
  } else {
    Out2[m * ()" + total + R"( - params.split1) + n - params.split1] = bitcast<u32>(v);
  }
}
// Columns n (even) and n + 1 of row m, one f16 word.
fn put2(m: u32, n: u32, v: vec2<f32>) {
  let w = f16_word(v);
  if (n < params.split0) {
    Out0[(m * params.split0 + n) >> 1u] = w;
  } else if (n < params.split1) {
    Out1[(m * (params.split1 - params.split0) + n - params.split0) >> 1u] = w;
  } else {
    Out2[(m * ()" + total + R"( - params.split1) + n - params.split1) >> 1u] = w;
  }
}
)";
}

}  // namespace

const gpu::Kernel& product_kernel(const runtime::NodeContext& ctx, const std::string& variant,
                                  std::vector<gpu::Binding> bindings, const std::string& total_columns,
                                  std::vector<std::pair<std::string, double>> constants, const FixedParams* fixed,
                                  bool one_output) {
  return variant_kernel(ctx, *shaders::find_quant(variant), std::move(bindings),
                        output_wgsl(total_columns, one_output) + (fixed ? fixed->wgsl() : ""), std::move(constants));
}

Operands operands_of(const runtime::NodeContext& ctx) {
  Operands o;
  o.product = ctx.op();
  constexpr std::string_view kNorm = "add_rms_norm_";
  o.norm = o.product.starts_with(kNorm);
  if (o.norm) o.product = o.product.substr(kNorm.size());
  o.weight = o.norm ? 3 : 1;
  o.bias_input = o.weight + 1;
  o.bias = ctx.input_count() > o.bias_input;
  o.outputs = ctx.output_count() - (o.norm ? 1 : 0);
  return o;
}

}  // namespace wgx::ops::quant
