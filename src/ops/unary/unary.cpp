// Unary elementwise ops (math, activations, clamp, logical_not) and to_copy: one generated kernel
// per (op, dtype) or per (source, target) dtype pair, one route each. where() is in where.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "ops/common.h"
#include "ops/families.h"
#include "ops/unary/where.h"
#include "shaders/unary_shaders.h"

namespace wgx::ops {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 256;  // every unary variant's @workgroup_size

// "exp.f16", "gelu_tanh.f32", "to_copy.i32.u8": by compute dtypes (bf16 runs as f32, i64 as i32).
std::string variant_name(const NodeContext& ctx) {
  const std::string& op = ctx.node().op;
  const std::string in = dtype_label(ctx.input(0).dtype);
  if (op == "to_copy") return "to_copy." + in + "." + dtype_label(ctx.output(0).dtype);
  if (op == "gelu" && ctx.attr("approximate").as_string() == "tanh") return "gelu_tanh." + in;
  return op + "." + in;
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input_count() != 1 || ctx.input_value(0).kind != graph::ValueKind::Tensor) return "needs one tensor input";
  if (!shaders::find_unary(variant_name(ctx))) return "no variant " + variant_name(ctx);
  return check_rank_and_size(ctx);
}

// clamp's bounds as the kernel compares them (bits of f32, i32 or u32) and which ones apply.
// Integer tensors keep their dtype, so their bounds round inward (ceil min, floor max) and saturate
// to the dtype's range: exactly the elements outside the real bounds change.
struct Bounds {
  uint32_t lo = 0, hi = 0, flags = 0;
};

uint32_t bound_bits(double v, graph::DType dtype, bool is_min) {
  if (graph::is_float(dtype)) {
    constexpr double kMax = std::numeric_limits<float>::max();
    const float f = std::abs(v) > kMax ? std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(v))
                                       : static_cast<float>(v);
    return std::bit_cast<uint32_t>(f);
  }
  const double r = is_min ? std::ceil(v) : std::floor(v);
  if (dtype == graph::DType::u8) return static_cast<uint32_t>(std::clamp(r, 0.0, 255.0));
  return std::bit_cast<uint32_t>(static_cast<int32_t>(std::clamp(r, -2147483648.0, 2147483647.0)));
}

Bounds clamp_bounds(const NodeContext& ctx) {
  Bounds b;
  const graph::DType dtype = ctx.input(0).dtype;
  if (ctx.has_attr("min")) {
    b.lo = bound_bits(ctx.attr("min").as_float(), dtype, true);
    b.flags |= 1;
  }
  if (ctx.has_attr("max")) {
    b.hi = bound_bits(ctx.attr("max").as_float(), dtype, false);
    b.flags |= 2;
  }
  return b;
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const gpu::Kernel& kernel = variant_kernel(ctx, *shaders::find_unary(variant_name(ctx)),
                                             {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const Bounds bounds = ctx.node().op == "clamp" ? clamp_bounds(ctx) : Bounds{};
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [bounds, per_word](const NodeContext& c) {
    const uint64_t n = numel(c.output_shape(0));
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), bounds.lo, bounds.hi, bounds.flags};
    const uint64_t words = (n + per_word - 1) / per_word;
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel, std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.output(0).binding()}, 4, update);
}

}  // namespace

void register_unary(runtime::KernelRegistry& registry) {
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "neg", "abs", "sigmoid", "silu", "gelu", "tanh", "sin",
                         "cos", "reciprocal", "clamp", "logical_not"}) {
    registry.add({op, {{"unary", guard, build}}});
  }
  registry.add({"to_copy", {{"to_copy", guard, build}}});
  registry.add({"where", {where_route()}});
}

}  // namespace wgx::ops
