// sdpa_rows(q [1, R, Hq, D], k_cache [S, Hkv, MaxS, D], v_cache, rows [R, 2]) -> [1, R, Hq, D]:
// continuous batching's attention, one route ("rows_online"): a workgroup per (row, kv head,
// chunk) runs an online softmax over its chunk of the visible rows of the row's slot in tiles
// (sdpa_rows.wgsl), and the last of a (row, kv head)'s chunks to finish merges them, in one
// dispatch. A row of len visible rows takes ceil(len / kRowsPerChunk) chunks, at most the node's
// count (kMaxChunks, fewer for short caches): a rule of the row's own length, so a row's
// arithmetic does not change with the step. On the H200 (Llama-3.2-1B, 128-256 visible rows,
// per layer) one workgroup per (row, kv head) took 46 us at 5 rows (its tiles one after
// another); 8 chunks took 18 + 9 (the merge, then a dispatch of sdpa_combine.wgsl) at 5 rows,
// 32 + 9 at 16 and 87 + 10 at 64; with the merge inside, 1.47 ms a step at 64 sequences (16
// layers), most of it each invocation reading its k row 4 bytes at a time once per head, which
// the kernel now does once, 16 bytes a load. Its dispatch and params follow R, which resize
// reads from the current shapes.
#include <algorithm>
#include <optional>

#include "ops/attention/attention.h"
#include "ops/common.h"

namespace wgx::ops::attention {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

// sdpa_rows.wgsl
constexpr uint32_t kWorkgroupSize = 64;  // WG (and T, the rows of a tile)
constexpr uint32_t kMaxGroup = 16;       // MAX_G
constexpr uint32_t kMaxGroupDim = 1024;  // MAX_GD
// q_s, p_s, m_s, alpha_s and mx_s, at_s and last_s.
constexpr uint64_t kWorkgroupBytes = 4 * (kMaxGroupDim + kMaxGroup * kWorkgroupSize + 6 * kMaxGroup + 3);
constexpr size_t kParamWords = 12;
constexpr uint32_t kMaxChunks = 8;      // chunks a row's visible cache rows split into
// Rows of a chunk at least (half a tile): a row of len visible rows takes ceil(len / 32) chunks,
// at most the node's count, ceil(MaxS / 32) up to kMaxChunks. On the H100 (1 / 4 / 16 / 64
// sequences, Llama-3.2-1B) chunks of at least 32 rows beat 64 (fewer workgroups at one sequence)
// and 16 (more partials to merge at 16; PERFORMANCE.md, 2026-12-05).
constexpr uint32_t kRowsPerChunk = kWorkgroupSize / 2;
constexpr uint32_t kStorageBuffers = 8;  // Q, K, V, Rows, Out, Part, Count, X8

uint32_t chunks_of(const Geometry& g) {
  return std::clamp<uint32_t>((g.max_seq + kRowsPerChunk - 1) / kRowsPerChunk, 1, kMaxChunks);
}
uint64_t workgroups(const Geometry& g) { return uint64_t{g.seq} * g.hkv * chunks_of(g); }
// Partial-result slots: rows x query heads x chunks (none with one chunk).
uint64_t part_slots(const Geometry& g) { return chunks_of(g) > 1 ? uint64_t{g.seq} * g.hq * chunks_of(g) : 0; }

std::string guard(const NodeContext& ctx) {
  if (auto why = sdpa_storage_guard(ctx); !why.empty()) return why;
  const Geometry g = geometry_max(ctx);
  if (g.dim % 8 != 0) return "head_dim " + std::to_string(g.dim) + " is not a multiple of 8 (k loads 8 channels at a time)";
  if (g.group > kMaxGroup || g.group * g.dim > kMaxGroupDim) {
    return "a group of " + std::to_string(g.group) + " query heads of head_dim " + std::to_string(g.dim) +
           " is more than one workgroup holds (at most " + std::to_string(kMaxGroup) + " heads, " +
           std::to_string(kMaxGroupDim) + " channels)";
  }
  if (auto why = workgroup_guard(ctx, kWorkgroupSize, kWorkgroupBytes); !why.empty()) return why;
  if (auto why = storage_buffers_guard(ctx, kStorageBuffers); !why.empty()) return why;
  if (auto why = scratch_guard(ctx, part_slots(g) * (8 + g.dim * 4)); !why.empty()) return why;
  return workgroups_guard(ctx, workgroups(g));
}

}  // namespace

std::string sdpa_rows_guard(const NodeContext& ctx, bool x8) {
  if (auto why = guard(ctx); !why.empty() || !x8) return why;
  const Geometry g = geometry_max(ctx);
  if (ctx.output(0).storage != runtime::Storage::F32) return "the output is not f32 (int8 chunks are made of f32)";
  if (g.group * g.dim % 32 != 0) {
    return "a group's " + std::to_string(g.group * g.dim) + " outputs are not whole chunks of 32";
  }
  return "";
}

std::unique_ptr<runtime::NodeExec> sdpa_rows_exec(const NodeContext& ctx, const std::optional<quant::X8Target>& x8) {
  const Geometry max = geometry_max(ctx);
  const gpu::Kernel& k = kernel(ctx, "sdpa_rows." + io_label(ctx), {{"DIM", max.dim}, {"GROUP", max.group}, {"CHUNK_ROWS", kRowsPerChunk}});
  const uint32_t scale = scale_bits(ctx);
  const auto slots = static_cast<uint32_t>(ctx.input_max_shape(1)[0]);
  const uint64_t parts = part_slots(max);
  auto steps = std::make_unique<Steps>();
  // Each slot's (m, l), then its accumulators.
  const gpu::BufferBinding part =
      parts > 0 ? steps->scratch(ctx, parts * 8 + parts * max.dim * 4) : steps->own(ctx, 8, "no partials");
  // Zero at rest: each step's last workgroup of a (row, kv head) sets its count back.
  const gpu::BufferBinding counts = steps->own(ctx, 4ull * max.seq * max.hkv, "chunk counts");
  const gpu::BufferBinding out8 = x8 ? x8->words : steps->own(ctx, 4, "no int8 output");
  const uint32_t x8_on = x8 ? 1 : 0, x8_steps = x8 ? x8->steps_word : 0;
  auto update = [scale, slots, x8_on, x8_steps](const NodeContext& c) {
    const Geometry g = geometry_now(c);  // batch 1, seq R
    DispatchExec::Launch l;
    l.params = {g.seq, g.hq, g.hkv, g.group, g.max_seq, g.dim, slots, scale, chunks_of(g),
                static_cast<uint32_t>(part_slots(g)), x8_on, x8_steps};
    l.workgroups = workgroups(g);
    return l;
  };
  steps->add(std::make_unique<DispatchExec>(
      ctx, k,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.input(1).binding(), ctx.input(2).binding(),
                                      ctx.input(3).binding(), ctx.output(0).binding(), part, counts, out8},
      kParamWords, update));
  return steps;
}

runtime::Route sdpa_rows_route() {
  return {"rows_online", guard, [](const NodeContext& c) { return sdpa_rows_exec(c, std::nullopt); }};
}

}  // namespace wgx::ops::attention
