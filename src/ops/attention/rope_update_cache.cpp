// rope_update_cache(q, k, v, k_cache, v_cache, input_pos [, q_norm_weight, k_norm_weight]) ->
// (q', k_cache', v_cache'): the optional q/k RMSNorm, rope on q and k and both cache updates in
// one dispatch (rope_update_cache.wgsl). Registered in_place for both caches (inputs 3 and 4 as
// outputs 1 and 2): when their mutations are planned in place, only the new rows are written;
// otherwise InPlaceExec copies the old contents first, as for update_cache.
//
// rope_update_cache_rows(q, k, v, k_cache, v_cache, rows [, q_norm_weight, k_norm_weight]) runs
// the same kernel (its _rows variants), each token at the (slot, position) its row of `rows`
// gives instead of input_pos + s (continuous batching); rows out of the caches write nothing.
//
// The table binding (rope_table, shared with rope_sdpa_with_kv_cache's flash_rope kernel) holds
// rope's frequency table (transformer::rope_turns, the same turns as rope) followed by the norm
// weights, copied there from their constants when the node is built, so that the kernel binds 7
// storage buffers, 8 with rows (WebGPU guarantees 8).
#include <bit>
#include <memory>
#include <string>

#include "gpu/recorder.h"
#include "ops/attention/attention.h"
#include "ops/common.h"
#include "ops/transformer/rope_angles.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint32_t kWorkgroupSize = 256;  // rope_update_cache.wgsl: WG
constexpr size_t kParamWords = 16;
constexpr size_t kPos = 5;               // input_pos, or rows (rope_update_cache_rows)
constexpr size_t kNormWeights = 6;       // q_norm_weight, then k_norm_weight

bool has_norm(const NodeContext& ctx) { return ctx.input_count() > kNormWeights; }

// `per_row`: rope_update_cache_rows's variant.
std::string variant_name(const NodeContext& ctx, bool per_row) {
  return std::string(per_row ? "rope_update_cache_rows." : "rope_update_cache.") + ctx.attr("layout").as_string() +
         "." + float_label(ctx.input(0).storage) + "." + float_label(ctx.input(3).storage) +
         (has_norm(ctx) ? ".rms" : ".plain");
}

bool is_constant(const NodeContext& ctx, size_t input) {
  for (const graph::Constant& c : ctx.graph().constants) {
    if (c.value == ctx.input_id(input)) return true;
  }
  return false;
}

// Rows of q, k and v together: B * S * (Hq + 2 * Hkv).
uint64_t rows(const std::vector<int64_t>& q, const std::vector<int64_t>& k) {
  return static_cast<uint64_t>(q[0] * q[1]) * static_cast<uint64_t>(q[2] + 2 * k[2]);
}

// A row's pieces, one per invocation: two frequencies each with rotate_half, one interleaved.
uint32_t units(const NodeContext& ctx) {
  const auto half = static_cast<uint32_t>(ctx.input_max_shape(0)[3] / 2);
  return ctx.attr("layout").as_string() == "rotate_half" ? (half + 1) / 2 : half;
}

// Invocations per row: a power of two, so that workgroups hold whole rows (the norm adds a row's
// pieces within its workgroup).
uint32_t lanes(const NodeContext& ctx) { return std::bit_ceil(units(ctx)); }

std::string guard(const NodeContext& ctx, bool per_row) {
  if (!per_row) {
    if (auto why = position_guard(ctx, kPos); !why.empty()) return why;
  }
  const std::string io = float_label(ctx.input(0).storage), cache = float_label(ctx.input(3).storage);
  if (io.empty() || cache.empty()) return "q, k, v and the caches must be stored as f32 or f16";
  const int64_t dim = ctx.input_max_shape(0)[3];
  // rotate_half writes frequencies f and f + 1 (channels f, f + 1 and f + D/2, f + D/2 + 1) as
  // whole packed words.
  if (ctx.attr("layout").as_string() == "rotate_half" && (io == "f16" || cache == "f16") && dim % 4 != 0) {
    return "rotate_half with packed f16 needs head_dim % 4 == 0, not " + std::to_string(dim);
  }
  if (auto why = rope_table_guard(ctx); !why.empty()) return why;
  if (per_row) {
    if (auto why = storage_buffers_guard(ctx, 8); !why.empty()) return why;
  }
  if (lanes(ctx) > kWorkgroupSize) return "head_dim " + std::to_string(dim) + " needs more than one workgroup per row";
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, 4 * kWorkgroupSize); !why.empty()) return why;
  const uint64_t per_workgroup = kWorkgroupSize / lanes(ctx);
  const uint64_t max_rows = rows(ctx.input_max_shape(0), ctx.input_max_shape(1));
  if (auto why = workgroups_guard(ctx, (max_rows + per_workgroup - 1) / per_workgroup); !why.empty()) return why;
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, bool per_row) {
  const int64_t dim = ctx.input_max_shape(0)[3];
  const RopeTable table = rope_table(ctx);
  const gpu::Kernel& kernel = attention::kernel(ctx, variant_name(ctx, per_row));
  const float eps = static_cast<float>(ctx.attr("eps").as_float());
  const float inv_n = static_cast<float>(1.0 / static_cast<double>(dim));
  // The table buffer must live as long as the exec: the update keeps it.
  const std::shared_ptr<gpu::Buffer> buffer = table.buffer;
  const uint32_t norm_base = table.norm_base, norm_words = table.norm_words;
  const uint32_t row_units = units(ctx), row_lanes = lanes(ctx);
  auto update = [buffer, eps, inv_n, norm_base, norm_words, row_units, row_lanes, per_row](const NodeContext& c) {
    const std::vector<int64_t>& q = c.input_shape(0);      // [B, S, Hq, D]
    const std::vector<int64_t>& k = c.input_shape(1);      // [B, S, Hkv, D]
    const std::vector<int64_t>& cache = c.input_shape(3);  // [B, Hkv, MaxS, D] (with rows: [slots, ...])
    const uint32_t pos = per_row ? 0 : position(c, kPos, q[1], cache[2]);
    const uint64_t n = rows(q, k);
    const auto q_rows = static_cast<uint32_t>(q[0] * q[1] * q[2]);
    const auto kv_rows = static_cast<uint32_t>(k[0] * k[1] * k[2]);
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n),
                q_rows,
                kv_rows,
                static_cast<uint32_t>(q[1]),
                static_cast<uint32_t>(q[2]),
                static_cast<uint32_t>(k[2]),
                static_cast<uint32_t>(q[3]),
                static_cast<uint32_t>(cache[2]),
                pos,
                std::bit_cast<uint32_t>(inv_n),
                std::bit_cast<uint32_t>(eps),
                norm_base,
                norm_words,
                row_lanes,
                row_units,
                static_cast<uint32_t>(cache[0])};
    const uint64_t per_workgroup = kWorkgroupSize / row_lanes;
    l.workgroups = (n + per_workgroup - 1) / per_workgroup;
    return l;
  };
  std::vector<gpu::BufferBinding> bindings{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                           {buffer.get(), 0, 0}, ctx.output(0).binding(), ctx.output(1).binding(),
                                           ctx.output(2).binding()};
  if (per_row) bindings.push_back(ctx.input(kPos).binding());
  auto dispatch = std::make_unique<DispatchExec>(ctx, kernel, std::move(bindings), kParamWords, update);
  return std::make_unique<InPlaceExec>(ctx, rope_update_cache_in_place(), std::move(dispatch));
}

}  // namespace

std::string rope_table_guard(const NodeContext& ctx) {
  if (has_norm(ctx) && !(is_constant(ctx, kNormWeights) && is_constant(ctx, kNormWeights + 1))) {
    return "the norm weights must be constants (they are copied into the node's table once)";
  }
  return "";
}

RopeTable rope_table(const NodeContext& ctx) {
  const int64_t dim = ctx.input_max_shape(0)[3];
  std::vector<uint32_t> words = transformer::rope_turns(ctx, dim);
  RopeTable t;
  t.norm_base = static_cast<uint32_t>(words.size());
  if (has_norm(ctx)) {
    t.norm_words = static_cast<uint32_t>(runtime::storage_bytes(ctx.input(kNormWeights).storage, dim) / 4);
    words.resize(words.size() + 2 * size_t{t.norm_words}, 0);
  }
  t.buffer = std::make_shared<gpu::Buffer>(ctx.gpu(), words.data(), words.size() * 4, ctx.label() + " table");
  if (has_norm(ctx)) {
    // Constants never change once they hold their bytes (which a program built before its
    // weights gets later): one copy then serves every execution.
    const runtime::TensorRef q = ctx.input(kNormWeights), k = ctx.input(kNormWeights + 1);
    ctx.when_constants_ready([&gpu = ctx.gpu(), label = ctx.label(), q, k, table = t.buffer, base = t.norm_base,
                              words = t.norm_words] {
      gpu::Recorder rec(gpu, label + " norm weights");
      uint64_t at = base;
      for (const runtime::TensorRef* weight : {&q, &k}) {
        rec.copy(*weight->buffer, weight->offset, *table, at * 4, uint64_t{words} * 4);
        at += words;
      }
      rec.submit();
    });
  }
  return t;
}

runtime::Route rope_update_cache_route() {
  return {"rope_update_cache", [](const NodeContext& ctx) { return guard(ctx, false); },
          [](const NodeContext& ctx) { return build(ctx, false); }};
}

runtime::Route rope_update_cache_rows_route() {
  return {"rope_update_cache_rows", [](const NodeContext& ctx) { return guard(ctx, true); },
          [](const NodeContext& ctx) { return build(ctx, true); }};
}

runtime::InPlace rope_update_cache_in_place() { return {{3, 1}, {4, 2}}; }

}  // namespace wgx::ops::attention
