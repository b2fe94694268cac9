// What the attention family's routes share: storage labels, kernels, input_pos, geometry and the
// in-place cache updates. sdpa's executable parts are ops::Steps (several dispatches with the
// scratch buffers they own).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/kernel.h"
#include "ops/common.h"
#include "ops/quant/gemm_handover.h"
#include "ops/quant/merged_gemv.h"
#include "runtime/op_kernel.h"
#include "shaders/shader_variant.h"

namespace wgx::ops::attention {

// "f32" or "f16" (packed or native: the same bytes, read as u32 words), "" for other storages.
std::string float_label(runtime::Storage storage);

// An attention variant's full WGSL: the variant (with the library files its template includes)
// and, for sdpa_flash, the accessors of its fixed params (kFlashFixed).
std::string variant_wgsl(const shaders::ShaderVariant& variant);
// A variant's bindings in @binding order (binding 0: the params block): its template's, except
// that sdpa_flash's flash_rope variants bind more than its flash ones.
std::vector<gpu::Binding> variant_bindings(const shaders::ShaderVariant& variant);
// The pipeline of a generated attention variant, by name.
const gpu::Kernel& kernel(const runtime::NodeContext& ctx, const std::string& variant,
                          std::vector<std::pair<std::string, double>> constants = {});
// sdpa_flash's params fixed per node (the group size and head_dim: f_group(), f_dim()), in its
// prelude; flash decoding sets them as pipeline constants unless sdpa_decode_specialize = off.
extern const FixedParams kFlashFixed;


// "" when input `i` (input_pos) is a SymInt or a constant; a tensor position is not supported.
std::string position_guard(const runtime::NodeContext& ctx, size_t i);
// input_pos now; throws graph::GraphError unless 0 <= pos and pos + rows <= max_seq.
uint32_t position(const runtime::NodeContext& ctx, size_t i, int64_t rows, int64_t max_seq);

// "" when `count` linear workgroups can be dispatched (the recorder splits over y and z).
std::string workgroups_guard(const runtime::NodeContext& ctx, uint64_t count);
// "" when the device runs `invocations` per workgroup with `bytes` of workgroup storage.
std::string workgroup_guard(const runtime::NodeContext& ctx, uint32_t invocations, uint64_t bytes);
// "" when a scratch buffer of `bytes` can be made and bound.
std::string scratch_guard(const runtime::NodeContext& ctx, uint64_t bytes);

// sdpa_with_kv_cache's sizes: q [batch, seq, hq, dim], caches [batch, hkv, max_seq, dim].
struct Geometry {
  uint32_t batch = 0, seq = 0, hq = 0, hkv = 0, group = 0, max_seq = 0, dim = 0;
};
Geometry geometry_now(const runtime::NodeContext& ctx);
Geometry geometry_max(const runtime::NodeContext& ctx);
// The checks every sdpa route makes: input_pos, storages, ranks and sizes.
std::string sdpa_guard(const runtime::NodeContext& ctx);
// sdpa_guard's checks but input_pos's (sdpa_rows makes them too): storages, ranks and sizes.
std::string sdpa_storage_guard(const runtime::NodeContext& ctx);
// sdpa_with_kv_cache (`causal`) or attention (T = the geometry's max_seq rows, every one seen):
// its guard (sdpa_guard or sdpa_storage_guard), and the input_pos its kernels take (attention:
// T, which with kv_len = T lets every query row see every row).
std::string causal_guard(const runtime::NodeContext& ctx, bool causal);
uint32_t causal_position(const runtime::NodeContext& ctx, bool causal, const Geometry& g);
// The attr `scale`, or 1/sqrt(head_dim) when it is 0, as f32 bits.
uint32_t scale_bits(const runtime::NodeContext& ctx);
// Variant suffix "<q/out>.<cache>", e.g. "f32.f16".
std::string io_label(const runtime::NodeContext& ctx);

// The table binding of rope_update_cache's kernel and of flash_rope, for a node with
// rope_update_cache's inputs and attributes (rope_update_cache, rope_sdpa_with_kv_cache): rope's
// frequency table (transformer::rope_turns), then with the q/k norm the q and k norm weights,
// copied there from their constants when the node is built.
struct RopeTable {
  std::shared_ptr<gpu::Buffer> buffer;
  uint32_t norm_base = 0;   // the word where q's norm weight starts; k's follows it
  uint32_t norm_words = 0;  // words of one norm weight; 0 without the norm
};
RopeTable rope_table(const runtime::NodeContext& ctx);
// "" when rope_table can be made: the norm weights, when given, are constants.
std::string rope_table_guard(const runtime::NodeContext& ctx);

runtime::Route update_cache_route();
// rope_update_cache: its route, and the cache inputs it updates in place (as outputs 1 and 2).
runtime::Route rope_update_cache_route();
runtime::InPlace rope_update_cache_in_place();
// rope_update_cache_rows (continuous batching): the same kernel with each token's (slot, position)
// from `rows`, in place on the caches as rope_update_cache is.
runtime::Route rope_update_cache_rows_route();
// sdpa_rows (sdpa_rows.cpp): a workgroup per (row, kv head) over the visible rows of the row's slot.
runtime::Route sdpa_rows_route();
// Its guard, with `x8` also what the int8 form of the output needs, and its executable part,
// which with `x8` also writes the output in int8 chunks of 32 there (a q4_gemm product's x).
std::string sdpa_rows_guard(const runtime::NodeContext& ctx, bool x8);
std::unique_ptr<runtime::NodeExec> sdpa_rows_exec(const runtime::NodeContext& ctx,
                                                  const std::optional<quant::X8Target>& x8);
// sdpa_rows_linear (sdpa_rows_linear.cpp): sdpa_rows, then the projection (`linear`: linear's routes).
std::vector<runtime::Route> sdpa_rows_linear_routes(const std::vector<runtime::Route>& linear);
// The routes both sdpa_with_kv_cache and (`causal` false) attention take.
runtime::Route materialized_route(bool causal = true);
runtime::Route k16_route(uint32_t query_tile, bool causal = true);
runtime::Route flash_decoding_route();
// sdpa_with_kv_cache's and attention's routes in preference order (attention.cpp's lists).
std::vector<runtime::Route> sdpa_routes();
std::vector<runtime::Route> attention_routes();

// rope_sdpa_with_kv_cache (rope_sdpa.cpp). Its operands as sdpa_with_kv_cache sees them: q (the
// node's own, or `rotated_q` where rope_update_cache's dispatch left it), the updated caches
// (outputs 1 and 2), input_pos; out as output 0.
runtime::OperandMap sdpa_operands(std::optional<runtime::TensorRef> rotated_q = std::nullopt);
// At S == 1, "rope_flash_decoding" (sdpa_flash.cpp): flash_decoding's kernels rotating q and
// writing the new rows themselves (flash_rope); one dispatch fewer than the two ops.
runtime::Route rope_flash_decoding_route();
// rope_flash_decoding's kernel, for a consumer that merges the chunks itself at steps of at most
// `fold_max` chunks (`partials` says where they lie and how many there are: 0 where the kernel
// wrote out: a single pass, up to one tile of rows, or more chunks, which it merged itself), on
// a node that passes its guard; and the chunk slots per query head it leaves (for that guard).
std::unique_ptr<runtime::NodeExec> rope_flash_split(const runtime::NodeContext& ctx, quant::SplitPartials& partials,
                                                    uint32_t fold_max);
uint32_t rope_flash_slots(const runtime::NodeContext& ctx);
// For any S: rope_update_cache's dispatch, then `sdpa` (a route of sdpa_with_kv_cache) over its
// results, named "rope_update_cache+<sdpa's name>".
runtime::Route rope_then_sdpa_route(runtime::Route sdpa);
// rope_sdpa_linear (rope_sdpa_linear.cpp): at S == 1 with a q4 projection that can merge the
// chunks, "rope_flash_decoding+merged_q4_gemv"; otherwise each of `attention` (the routes of
// rope_sdpa_with_kv_cache) followed by the first of `linear` (linear's routes) that takes the
// projection, named "<attention's name>+linear".
std::vector<runtime::Route> rope_sdpa_linear_routes(const std::vector<runtime::Route>& attention,
                                                    const std::vector<runtime::Route>& linear);

}  // namespace wgx::ops::attention
