#include "ops/transformer/kernels.h"

#include "shaders/transformer_shaders.h"

namespace wgx::ops::transformer {

namespace {

// Two f32 values as one word of packed f16, rounded as pack2x16float does. pack2x16float is
// undefined outside the finite f16 range: there overflow goes to +-inf (as rounding does) and
// NaN stays NaN, as PyTorch gives them.
constexpr const char* kHelpersWgsl = R"(
fn f16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
  if (abs(x) >= 65520.0) { return ((b >> 16u) & 0x8000u) | 0x7c00u; }
  return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
fn f16_word(v: vec2<f32>) -> u32 { return f16_bits(v.x) | (f16_bits(v.y) << 16u); }
)";

}  // namespace

bool has_variant(const std::string& name) { return shaders::find_transformer(name) != nullptr; }

const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& name,
                                 std::vector<gpu::Binding> bindings) {
  const shaders::ShaderVariant& v = *shaders::find_transformer(name);
  gpu::KernelKey key{std::string(v.template_id), std::string(v.variant), {}};
  return ctx.pipelines().get(key, [&] {
    return gpu::KernelSource{std::string(gpu::kLinearWorkgroupWgsl) + kHelpersWgsl + std::string(v.wgsl),
                             std::move(bindings)};
  });
}

}  // namespace wgx::ops::transformer
