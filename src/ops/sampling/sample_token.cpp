// sample_token and sample_token_penalized (graph/schemas/sampling.cpp) in one dispatch of
// sample_token.wgsl: a workgroup per chunk of kChunk logits finds the chunk's candidates, and the
// last to finish merges them and picks the token (the dispatch's count, set back to 0 by that
// workgroup, lives with the node). Greedy and sampled steps are the same dispatch; the sampling
// words choose at run time, so one graph serves both and a generation changes its settings by
// writing 8 words. sample_token_penalized binds its seen set (registered in_place: input 3 as
// output 1) and adds the picked token to it; sample_token binds a word of its own there.
// sample_rows runs the same kernel over R rows (R x chunks workgroups, a count per row), each row
// with its own words and counter; sample_rows_penalized binds its seen sets (input 3 as output 1)
// and the rows' slots among them.
#include <memory>

#include "ops/common.h"
#include "ops/families.h"
#include "ops/sampling/sample_params.h"
#include "shaders/sampling_shaders.h"

namespace wgx::ops {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;
using sampling::kChunk;

// Words a chunk's candidates take in the merge buffer: count, threshold, keys, indices.
constexpr uint64_t kChunkWords = 2 + 2 * sampling::kMaxTopK;

int64_t vocab_of(const NodeContext& ctx) { return ctx.input_max_shape(0)[1]; }

// Storage buffers the kernel binds.
constexpr uint32_t kStorageBuffers = 8;

std::string vocab_guard(const NodeContext& ctx) {
  if (auto why = storage_buffers_guard(ctx, kStorageBuffers); !why.empty()) return why;
  if (vocab_of(ctx) > sampling::kMaxVocab) {
    return "the vocabulary (" + std::to_string(vocab_of(ctx)) + ") exceeds " + std::to_string(sampling::kMaxVocab) +
           " logits (256 chunks of " + std::to_string(kChunk) + ")";
  }
  return "";
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input_value(2).kind == graph::ValueKind::Tensor) return "position is a tensor (a SymInt or constant is needed)";
  return vocab_guard(ctx);
}

std::string guard_penalized(const NodeContext& ctx) {
  if (auto why = guard(ctx); !why.empty()) return why;
  if (ctx.input(3).storage != runtime::Storage::I32) return "the seen set is not stored as i32 words";
  return "";
}

std::string guard_rows_penalized(const NodeContext& ctx) {
  if (auto why = vocab_guard(ctx); !why.empty()) return why;
  if (ctx.input(3).storage != runtime::Storage::I32) return "the seen sets are not stored as i32 words";
  return "";
}

runtime::InPlace seen_in_place() { return {{3, 1}}; }

enum class Form { One, Penalized, Rows, RowsPenalized };

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, Form form) {
  const gpu::Kernel& kernel = variant_kernel(
      ctx, *shaders::find_sampling("sample_token"),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage,
       gpu::Binding::Storage, gpu::Binding::Storage, gpu::Binding::Storage, gpu::Binding::ReadOnlyStorage,
       gpu::Binding::ReadOnlyStorage});
  const auto chunks = static_cast<uint32_t>((vocab_of(ctx) + kChunk - 1) / kChunk);
  const bool rows = form == Form::Rows || form == Form::RowsPenalized;
  const bool penalized = form == Form::Penalized || form == Form::RowsPenalized;
  const uint64_t max_rows = rows ? static_cast<uint64_t>(ctx.input_max_shape(0)[0]) : 1;
  auto steps = std::make_unique<Steps>();
  const std::vector<gpu::BufferBinding> buffers{
      ctx.input(0).binding(),
      ctx.input(1).binding(),
      ctx.output(0).binding(),
      steps->own(ctx, 4 * kChunkWords * chunks * max_rows, "candidates"),
      steps->own(ctx, 4 * max_rows, "merge counts"),
      penalized ? ctx.output(1).binding() : steps->own(ctx, 4, "no seen set"),
      rows ? ctx.input(2).binding() : steps->own(ctx, 4, "no counters"),
      form == Form::RowsPenalized ? ctx.input(4).binding() : steps->own(ctx, 4, "no slots")};
  const auto vocab = static_cast<uint32_t>(vocab_of(ctx));
  const auto seen = static_cast<uint32_t>(penalized ? sampling::seen_words(vocab) : 0);
  const auto seen_slots =
      static_cast<uint32_t>(form == Form::RowsPenalized ? ctx.input_max_shape(3)[0] : 0);
  steps->add(std::make_unique<DispatchExec>(ctx, kernel, buffers, 8, [=](const NodeContext& c) {
    DispatchExec::Launch l;
    // The random stream's index: a position's draws differ from every other's.
    const auto n = static_cast<uint32_t>(rows ? c.input_shape(0)[0] : 1);
    l.params = {vocab, chunks, rows ? 0u : static_cast<uint32_t>(c.sym_input(2)), seen, n, rows ? 1u : 0u,
                seen_slots, 0};
    l.workgroups = uint64_t{chunks} * n;
    return l;
  }));
  if (!penalized) return steps;
  return std::make_unique<InPlaceExec>(ctx, seen_in_place(), std::move(steps));
}

}  // namespace

void register_sampling(runtime::KernelRegistry& registry) {
  registry.add({"sample_token", {{"one_pass", guard, [](const NodeContext& c) { return build(c, Form::One); }}}});
  registry.add({"sample_token_penalized",
                {{"one_pass", guard_penalized, [](const NodeContext& c) { return build(c, Form::Penalized); }}},
                false,
                seen_in_place()});
  registry.add({"sample_rows", {{"one_pass", vocab_guard, [](const NodeContext& c) { return build(c, Form::Rows); }}}});
  registry.add({"sample_rows_penalized",
                {{"one_pass", guard_rows_penalized,
                  [](const NodeContext& c) { return build(c, Form::RowsPenalized); }}},
                false,
                seen_in_place()});
}

}  // namespace wgx::ops
