#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "graph/error.h"
#include "ops/attention/attention.h"
#include "ops/common.h"
#include "shaders/attention_shaders.h"

namespace wgx::ops::attention {

using runtime::NodeContext;
using runtime::Storage;

namespace {

Geometry geometry_of(const std::vector<int64_t>& q, const std::vector<int64_t>& cache) {
  Geometry g;
  g.batch = static_cast<uint32_t>(q[0]);
  g.seq = static_cast<uint32_t>(q[1]);
  g.hq = static_cast<uint32_t>(q[2]);
  g.dim = static_cast<uint32_t>(q[3]);
  g.hkv = static_cast<uint32_t>(cache[1]);
  g.max_seq = static_cast<uint32_t>(cache[2]);
  g.group = g.hq / g.hkv;  // the schema makes hq a multiple of hkv >= 1
  return g;
}

}  // namespace

std::string float_label(Storage storage) {
  switch (storage) {
    case Storage::F32: return "f32";
    case Storage::F16Packed:
    case Storage::F16Native: return "f16";
    default: return "";
  }
}

namespace {

// What the host adds to a template: sdpa_flash's fixed params' accessors.
std::string prelude(std::string_view template_id) { return template_id == "sdpa_flash" ? kFlashFixed.wgsl() : ""; }

}  // namespace

const FixedParams kFlashFixed{"f_", {"group", "dim"}};

std::string variant_wgsl(const shaders::ShaderVariant& variant) {
  return variant_source(variant, prelude(variant.template_id));
}

std::vector<gpu::Binding> variant_bindings(const shaders::ShaderVariant& variant) {
  using gpu::Binding;
  constexpr Binding U = Binding::Uniform, R = Binding::ReadOnlyStorage, W = Binding::Storage;
  const std::string_view t = variant.template_id;
  if (t == "update_cache") return {U, R, W};                // value, cache
  // q, k, v, table, q out, caches; the _rows variants then the rows.
  if (t == "rope_update_cache" && variant.variant.starts_with("rope_update_cache_rows.")) {
    return {U, R, R, R, R, W, W, W, R};
  }
  if (t == "rope_update_cache") return {U, R, R, R, R, W, W, W};
  if (t == "sdpa_materialized") return {U, R, R, R, W, W};  // q, k, v, scores, out
  // q, k and v caches, stats and acc, out; flash_rope writes the caches and adds the new k and v
  // rows and the rope table; both end with the chunk counts of the in-kernel merge, then the
  // weight read ahead (warm).
  if (t == "sdpa_flash" && variant.variant.starts_with("flash_rope.")) return {U, R, W, W, W, W, R, R, R, W, R};
  if (t == "sdpa_flash") return {U, R, R, R, W, W, W, R};
  if (t == "sdpa_combine") return {U, R, R, W};  // stats, acc, out
  if (t == "sdpa_k16") return {U, R, R, R, W, W, W};        // q, k, v, out, stats, acc
  if (t == "sdpa_rows") return {U, R, R, R, R, W, W, W, W};  // q, k and v caches, rows, out, partials, counts, int8 out
  throw std::logic_error("attention template " + std::string(t) + " has no bindings");
}

const gpu::Kernel& kernel(const NodeContext& ctx, const std::string& variant,
                          std::vector<std::pair<std::string, double>> constants) {
  const shaders::ShaderVariant* v = shaders::find_attention(variant);
  if (!v) throw graph::GraphError(ctx.label() + ": no attention variant " + variant);
  return variant_kernel(ctx, *v, variant_bindings(*v), prelude(v->template_id), std::move(constants));
}

std::string position_guard(const NodeContext& ctx, size_t i) {
  if (ctx.input_value(i).kind == graph::ValueKind::Tensor) return "input_pos is a tensor (a SymInt or constant is needed)";
  return "";
}

uint32_t position(const NodeContext& ctx, size_t i, int64_t rows, int64_t max_seq) {
  const int64_t pos = ctx.sym_input(i);
  if (pos < 0 || pos + rows > max_seq) {
    throw graph::GraphError(ctx.label() + ": input_pos " + std::to_string(pos) + " with " + std::to_string(rows) +
                            " new rows does not fit the cache's " + std::to_string(max_seq) + " rows");
  }
  return static_cast<uint32_t>(pos);
}

std::string workgroups_guard(const NodeContext& ctx, uint64_t count) {
  const uint64_t per_dim = ctx.gpu().limits().max_compute_workgroups_per_dimension;
  if (count > UINT32_MAX || count > per_dim * per_dim * per_dim) {
    return std::to_string(count) + " workgroups are more than one dispatch takes";
  }
  return "";
}

std::string workgroup_guard(const NodeContext& ctx, uint32_t invocations, uint64_t bytes) {
  const gpu::Limits& lim = ctx.gpu().limits();
  if (invocations > lim.max_compute_invocations_per_workgroup || invocations > lim.max_compute_workgroup_size_x) {
    return "needs " + std::to_string(invocations) + " invocations per workgroup, the device has " +
           std::to_string(std::min(lim.max_compute_invocations_per_workgroup, lim.max_compute_workgroup_size_x));
  }
  if (bytes > lim.max_compute_workgroup_storage_size) {
    return "needs " + std::to_string(bytes) + " bytes of workgroup storage, the device has " +
           std::to_string(lim.max_compute_workgroup_storage_size);
  }
  return "";
}

std::string scratch_guard(const NodeContext& ctx, uint64_t bytes) {
  const gpu::Limits& lim = ctx.gpu().limits();
  if (bytes > lim.max_storage_buffer_binding_size || bytes > lim.max_buffer_size) {
    return "a scratch buffer of " + std::to_string(bytes) + " bytes is over the device's buffer limits";
  }
  return "";
}

Geometry geometry_now(const NodeContext& ctx) { return geometry_of(ctx.input_shape(0), ctx.input_shape(1)); }
Geometry geometry_max(const NodeContext& ctx) { return geometry_of(ctx.input_max_shape(0), ctx.input_max_shape(1)); }

std::string sdpa_guard(const NodeContext& ctx) {
  if (auto why = position_guard(ctx, 3); !why.empty()) return why;
  return sdpa_storage_guard(ctx);
}

std::string sdpa_storage_guard(const NodeContext& ctx) {
  if (float_label(ctx.input(0).storage).empty() || float_label(ctx.output(0).storage).empty()) {
    return std::string("q is stored as ") + runtime::storage_name(ctx.input(0).storage);
  }
  if (float_label(ctx.input(1).storage).empty()) {
    return std::string("the caches are stored as ") + runtime::storage_name(ctx.input(1).storage);
  }
  return check_rank_and_size(ctx);
}

std::string causal_guard(const NodeContext& ctx, bool causal) {
  return causal ? sdpa_guard(ctx) : sdpa_storage_guard(ctx);
}

uint32_t causal_position(const NodeContext& ctx, bool causal, const Geometry& g) {
  return causal ? position(ctx, 3, g.seq, g.max_seq) : g.max_seq;
}

uint32_t scale_bits(const NodeContext& ctx) {
  double scale = ctx.attr("scale").as_float();
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(ctx.input_max_shape(0)[3]));
  return std::bit_cast<uint32_t>(static_cast<float>(scale));
}

std::string io_label(const NodeContext& ctx) {
  return float_label(ctx.input(0).storage) + "." + float_label(ctx.input(1).storage);
}

}  // namespace wgx::ops::attention
