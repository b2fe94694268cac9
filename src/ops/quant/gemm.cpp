// The q4_gemm route of linear, linear_qkv and linear_swiglu: a q4gsw weight and M > 4 at max
// shapes (prefill). q4_gemm.wgsl computes the product in tiles of 64 x 128 (at M = 512 every
// Llama-3.2-1B product ran 2-8% faster than with tiles of 128 rows on the H200, which are gone:
// PERFORMANCE.md, 2026-11-30; with int8 x at M <= 32, tiles of 16 x 128: kSmallRows) over
// 32-deep K slices; when the tiles are fewer than 256, each tile's slices are split among up to
// ceil(256 / tiles) workgroups (split-K; aiming for 512 or 1,024 measured slower), which write
// f32 partials to scratch, and q4_gemm_reduce.wgsl adds them
// up and finishes the output (bias, f16 packing, linear_qkv's column split, linear_swiglu's
// pairs). With one split the GEMM writes the output itself, unless it is f16 of an odd width
// (its words straddle rows): then the reduce pass packs it. Splits are chosen from the current M
// at every resize; whenever M is at most 4 the node runs q4_gemv's executable part instead
// (products.cpp). The kernel is built per product, its sizes and flags as pipeline constants.
// With x in int8 (quant_gemm_x8, on by default), q8_chunks.wgsl first rounds x to int8 in
// chunks of 32 (one step each) into scratch (the add_rms_norm_ products' norm dispatch writes
// its normalized x that way itself), and the int8 variant of q4_gemm (64-row tiles) sums
// four products per dot4I8Packed against the nibbles made int8; x's rounding, at most half a step
// per value, is an order of magnitude below the 4-bit weights' own (PERFORMANCE.md has the speed).
// The runtime option quant_gemm_x8 = off keeps x in f32.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "ops/common.h"
#include "ops/quant/quant_routes.h"
#include "ops/transformer/kernels.h"
#include "runtime/options.h"
#include "shaders/quant_flags.h"

namespace wgx::ops::quant {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kGemvRows = 4;
constexpr uint64_t kTileRows = 64;           // BM in q4_gemm.wgsl
constexpr uint64_t kSmallTileRows = 16;      // BM of q4_gemm.i8.m16
// M up to which the int8 GEMM takes 16-row tiles (with the 64-row tiles' split of K, so that a
// row's output does not change with M: continuous batching's steps of 5 to 64 rows give a
// sequence the same tokens whatever runs beside it).
constexpr uint64_t kSmallRows = 32;
constexpr uint64_t kTileCols = 128;          // BN
constexpr uint64_t kSlice = 32;              // BK
constexpr uint64_t kTargetWorkgroups = 256;  // what split-K aims for
// The workgroup memory the route asks of a device: 32 KiB, what its tiles of 128 rows took (the
// kernels now take 24, 27 with int8 x, 20 in the 16-row tiles); kept, so that the same devices
// take the route.
constexpr uint64_t kStorage = 2 * kSlice * 128 * 4;
constexpr uint32_t kBuffers = 7;
constexpr uint64_t kWorkgroup = 256;
constexpr size_t kGemmParams = 16, kReduceParams = 12;
// Flags of q4_gemm.wgsl (q4_gemm_reduce.wgsl reads BIAS, X_F16 and SWIGLU).
using shaders::quant_flags::kBias, shaders::quant_flags::kScaleF16, shaders::quant_flags::kOutF16,
    shaders::quant_flags::kXF16, shaders::quant_flags::kSwiglu, shaders::quant_flags::kPartial,
    shaders::quant_flags::kQ8Out;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t max_rows(const NodeContext& ctx) { return numel(ctx.input_max_shape(0)) / ctx.input_max_shape(0).back(); }
uint64_t rows_now(const NodeContext& ctx) {
  const std::vector<int64_t>& x = ctx.input_shape(0);
  return x.back() == 0 ? 0 : numel(x) / static_cast<uint64_t>(x.back());
}

// What is fixed about a node at build time.
struct Facts {
  bool f16 = false;  // x, bias and y in f16
  bool bias = false;
  bool swiglu = false;
  uint64_t n = 0, k = 0;             // product columns, depth
  uint64_t out_n = 0;                // output columns: n, or n / 2 for linear_swiglu
  std::array<uint64_t, 3> widths{};  // of the outputs
  bool scratch = false;              // f16 output of an odd width: always through the reduce pass
  Q4Params q4p;
};

Facts facts_of(const NodeContext& ctx, const std::string& op) {
  Facts f;
  f.f16 = ctx.input(0).dtype == graph::DType::f16;
  const Operands ops = operands_of(ctx);
  f.bias = ops.bias;
  f.swiglu = op == "linear_swiglu";
  const std::vector<int64_t> w = ctx.input_max_shape(ops.weight);
  f.n = static_cast<uint64_t>(w[0]);
  f.k = static_cast<uint64_t>(w[1]);
  f.out_n = f.swiglu ? f.n / 2 : f.n;
  f.widths = {f.out_n, 0, 0};
  if (op == "linear_qkv") {
    const std::vector<int64_t>& s = ctx.attr("splits").as_ints();
    f.widths = {static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]), static_cast<uint64_t>(s[2])};
  }
  f.scratch = f.f16 && std::any_of(f.widths.begin(), f.widths.end(), [](uint64_t v) { return v % 2 != 0; });
  f.q4p = q4_params(ctx, ops.weight);
  return f;
}

// Whether x is rounded to int8 (the quant_gemm_x8 option).
bool x8_of(const NodeContext& ctx) { return runtime::option_on(ctx.options(), "quant_gemm_x8"); }

// How q4_gemm runs at M rows (M > 4).
struct Plan {
  uint64_t tiles_m = 0, tiles_n = 0;
  uint64_t bm = kTileRows;  // rows of a tile: the kernel variant
  uint64_t chunk = 0;   // slices per split
  uint64_t splits = 0;  // ceil(slices / chunk)
  bool partial = false;  // partials to scratch, then the reduce pass

  uint64_t workgroups() const { return tiles_m * tiles_n * splits; }
};

// The split of K follows the 64-row tiles' count whatever the variant: up to 64 rows, one
// split for every M. Aiming for more workgroups where the tiles are few lost on the H200 at
// continuous batching's steps (Llama-3.2-1B, 4 / 16 / 64 sequences: 1,236 / 4,344 / 9,025 tok/s
// at 256, 1,187 / 4,114 / 8,316 at 1,024, 1,146 / 3,898 / 7,182 at 2,048; PERFORMANCE.md).
Plan plan_of(const Facts& f, uint64_t m, bool x8) {
  Plan p;
  p.tiles_m = ceil_div(m, kTileRows);
  p.tiles_n = ceil_div(f.n, kTileCols);
  const uint64_t slices = f.k / kSlice;
  const uint64_t tiles = p.tiles_m * p.tiles_n;
  const uint64_t want = tiles >= kTargetWorkgroups ? 1 : ceil_div(kTargetWorkgroups, tiles);
  p.chunk = ceil_div(slices, std::clamp<uint64_t>(want, 1, slices));
  p.splits = ceil_div(slices, p.chunk);
  p.partial = p.splits > 1 || f.scratch;
  if (x8 && m <= kSmallRows) {
    p.bm = kSmallTileRows;
    p.tiles_m = ceil_div(m, kSmallTileRows);
  }
  return p;
}

std::string guard(const NodeContext& ctx) {
  if (ctx.input(operands_of(ctx).weight).storage != runtime::Storage::Q4) return "the weight is not q4gsw";
  if (auto why = q4_gemv_fallback_check(ctx); !why.empty()) return why;
  const uint64_t m = max_rows(ctx);
  if (m <= kGemvRows) return "M is at most " + std::to_string(m) + "; q4_gemm takes M > 4";
  return check_limits(ctx, kBuffers, kStorage);
}

// int8 x of `k` columns at the node's most rows in scratch: M x K bytes of words, then (at a
// binding offset's alignment) M x K / 32 steps.
struct Q8Scratch {
  gpu::BufferBinding x;      // the whole, as q4_gemm's int8 variant binds it
  gpu::BufferBinding words;  // the words, then the steps, as q8_chunks binds them
  gpu::BufferBinding steps;
  uint64_t xd_base = 0;  // the steps' first word in x
};
Q8Scratch q8_scratch(const NodeContext& ctx, uint64_t k) {
  const uint64_t bytes = max_rows(ctx) * k, steps = bytes / 8;
  const uint64_t align = ctx.gpu().limits().min_storage_buffer_offset_alignment;
  const uint64_t at = ceil_div(bytes, align) * align, end = at + ceil_div(steps, 16) * 16;  // whole vec4s
  const gpu::BufferBinding q8 = Steps::scratch(ctx, end);
  return {{q8.buffer, q8.offset, end}, {q8.buffer, q8.offset, bytes}, {q8.buffer, q8.offset + at, steps}, at / 4};
}

}  // namespace

// int8 x a step before the product writes: the gate/up product's reduce pass (`gate_up`: its
// facts) or another op's kernel (at every M > 4).
struct GemmHandover {
  Q8Scratch q8;
  std::optional<Facts> gate_up;
};

namespace {

// The GEMM at the current M (the dispatch for the plan's tile rows and output), then the reduce
// pass where the plan writes partials; q4_gemv's executable part at M <= 4.
class GemmExec : public Steps {
 public:
  GemmExec(const Facts& f, bool int8) : facts(f), x8(int8) {}

  // Where another step of the node writes x in int8 (gemm_handover.h).
  std::shared_ptr<const GemmHandover> from;

  void resize(const NodeContext& ctx) override {
    m_ = rows_now(ctx);
    if (m_ > kGemvRows) plan_ = plan_of(facts, m_, x8);
    gemv->resize(ctx);
    if (norm) norm->resize(ctx);
    if (quantize) quantize->resize(ctx);
    for (auto& [key, d] : gemm) d->resize(ctx);
    if (reduce) reduce->resize(ctx);
  }
  void record(gpu::Recorder& rec) override {
    if (m_ <= kGemvRows) {
      gemv->record(rec);
      return;
    }
    if (norm) norm->record(rec);
    if (quantize && !(from && (!from->gate_up || plan_of(*from->gate_up, m_, x8).partial))) quantize->record(rec);
    gemm.at({plan_.partial, plan_.bm})->record(rec);
    if (plan_.partial) reduce->record(rec);
  }

  const Facts facts;
  const bool x8;
  std::unique_ptr<runtime::NodeExec> gemv;
  std::unique_ptr<runtime::NodeExec> norm;  // add_rms_norm_ products: x normalized into scratch
  std::unique_ptr<DispatchExec> quantize;    // int8 x: x rounded into scratch
  // By whether it writes partials and its tile rows.
  std::map<std::pair<bool, uint64_t>, std::unique_ptr<DispatchExec>> gemm;
  std::unique_ptr<DispatchExec> reduce;

 private:
  uint64_t m_ = 0;
  Plan plan_;
};

auto u32(uint64_t v) { return static_cast<uint32_t>(v); }

// q4_gemm's params that do not change with M: its pipeline constants.
const FixedParams kQ4GemmFixed{"g_", {"n", "k", "flags", "out_n", "group_shift", "groups", "tiles_n"}};

// The GEMM dispatch writing partials or the output: it runs only where the current M's plan says
// so (else no workgroups). With int8 x (`x8`), X is q8_chunks' output: the words, then the steps
// from word xd_base.
std::unique_ptr<DispatchExec> gemm_dispatch(const NodeContext& ctx, const Facts& f, bool x8, bool partial,
                                            uint64_t bm, uint64_t xd_base,
                                            const std::vector<gpu::BufferBinding>& buffers) {
  std::vector<gpu::Binding> b{gpu::Binding::Uniform};
  for (uint32_t i = 0; i < kBuffers; ++i) b.push_back(i < 4 ? gpu::Binding::ReadOnlyStorage : gpu::Binding::Storage);
  const uint32_t flags = (f.bias ? kBias : 0) | (f.q4p.scale_f16 ? kScaleF16 : 0) | (f.f16 ? kXF16 : 0) |
                         (partial ? kPartial : ((f.f16 ? kOutF16 : 0) | (f.swiglu ? kSwiglu : 0)));
  // A kernel per product, its sizes and flags as pipeline constants (kQ4GemmFixed): on the H200
  // prefill went from 14,826-15,049 to 16,365-16,806 tok/s at pp128 on Llama-3.2-1B and from
  // 17,671 to 19,328 at pp512 (Qwen3-0.6B +5-7%; PERFORMANCE.md, 2026-11-30).
  std::vector<std::pair<std::string, double>> constants;
  kQ4GemmFixed.constants(constants, {u32(f.n), u32(f.k), flags, u32(f.out_n), f.q4p.group_shift, f.q4p.groups,
                                     u32(ceil_div(f.n, kTileCols))});
  const char* variant = !x8 ? "q4_gemm.m64" : bm == kSmallTileRows ? "q4_gemm.i8.m16" : "q4_gemm.i8.m64";
  const gpu::Kernel& kernel = product_kernel(ctx, variant, b, "g_out_n()", std::move(constants), &kQ4GemmFixed);
  auto update = [f, x8, partial, bm, flags, xd_base](const NodeContext& c) {
    DispatchExec::Launch l;
    l.params.assign(kGemmParams, 0);
    const uint64_t m = rows_now(c);
    if (m <= kGemvRows) return l;
    const Plan p = plan_of(f, m, x8);
    if (p.partial != partial || p.bm != bm) return l;
    l.params = {u32(m),         u32(f.n),          u32(f.k),       flags,     u32(f.widths[0]), u32(f.widths[0] + f.widths[1]),
                u32(f.out_n),   u32(p.tiles_n),    u32(p.tiles_m), u32(p.chunk), u32(p.splits),  f.q4p.scale_base,
                f.q4p.group_shift, f.q4p.groups,   u32(xd_base),   0};
    l.workgroups = p.workgroups();
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, buffers, kGemmParams, update);
}

// The reduce pass; with `q8` (Q and D bound to the down product's x), act rounded to int8 too.
std::unique_ptr<DispatchExec> reduce_dispatch(const NodeContext& ctx, const Facts& f, bool q8,
                                              const std::vector<gpu::BufferBinding>& buffers) {
  const gpu::Kernel& kernel =
      family_kernel(ctx, std::string("q4_gemm_reduce.") + (f.f16 ? "f16" : "f32"),
                    {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                     gpu::Binding::Storage, gpu::Binding::Storage, gpu::Binding::Storage, gpu::Binding::Storage,
                     gpu::Binding::Storage});
  const uint32_t flags = (f.bias ? kBias : 0) | (f.f16 ? kXF16 : 0) | (f.swiglu ? kSwiglu : 0) | (q8 ? kQ8Out : 0);
  auto update = [f, flags, q8](const NodeContext& c) {
    DispatchExec::Launch l;
    l.params.assign(kReduceParams, 0);
    const uint64_t m = rows_now(c);
    if (m <= kGemvRows) return l;
    const Plan p = plan_of(f, m, false);  // (its splits: the same for either variant)
    const uint64_t per_word = f.f16 ? 2 : 1;
    std::array<uint64_t, 3> words{};
    for (size_t i = 0; i < 3; ++i) words[i] = ceil_div(m * f.widths[i], per_word);
    l.params = {u32(m),        u32(f.n),      u32(f.widths[0]), u32(f.widths[0] + f.widths[1]),
                u32(words[0]), u32(words[1]), u32(words[2]),    flags,
                u32(p.splits), u32(f.out_n),  u32(q8 ? m * f.out_n / kSlice : 0), 0};
    l.workgroups = p.partial ? ceil_div(words[0] + words[1] + words[2], kWorkgroup) : 0;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, buffers, kReduceParams, update);
}

// q8_chunks: x's rows in int8 chunks into `q` (the words) and `d` (the steps).
std::unique_ptr<DispatchExec> quantize_dispatch(const NodeContext& ctx, const Facts& f, gpu::BufferBinding x,
                                                gpu::BufferBinding q, gpu::BufferBinding d) {
  const gpu::Kernel& kernel = family_kernel(
      ctx, std::string("q8_chunks.") + (f.f16 ? "f16" : "f32"),
      {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage, gpu::Binding::Storage});
  auto update = [f](const NodeContext& c) {
    DispatchExec::Launch l;
    const uint64_t m = rows_now(c);
    const uint64_t chunks = m <= kGemvRows ? 0 : m * f.k / kSlice;
    l.params = {u32(chunks), 0, 0, 0};
    l.workgroups = ceil_div(chunks, kWorkgroup);
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, std::vector<gpu::BufferBinding>{x, q, d}, 4, update);
}

// The route's executable part; a linear_swiglu_linear pair's gate/up product makes `to` (with
// int8 x: else it stays null); a product whose x another step writes reads `from`.
std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, const std::string& op,
                                         std::shared_ptr<GemmHandover>* to = nullptr,
                                         std::shared_ptr<const GemmHandover> from = nullptr) {
  const Facts f = facts_of(ctx, op);
  const bool x8 = x8_of(ctx);
  auto exec = std::make_unique<GemmExec>(f, x8);
  const Operands ops = operands_of(ctx);
  const gpu::BufferBinding bias = f.bias ? ctx.input(ops.bias_input).binding() : exec->own(ctx, 4, "no bias");
  std::array<gpu::BufferBinding, 3> outs;
  for (size_t i = 0; i < 3; ++i) {
    outs[i] = i < ops.outputs ? ctx.output(i).binding() : exec->own(ctx, 4, "no output");
  }
  // The plans of every M the GEMM may run at, and the largest partials they write: splits x M x N
  // floats, under (256 + tiles) x 64 x 128 for the 256 workgroups aimed at (16 to 18 MiB at
  // Llama-3.2-1B's shapes).
  std::set<std::pair<bool, uint64_t>> used;
  uint64_t partial_bytes = 0;
  for (uint64_t m = kGemvRows + 1; m <= max_rows(ctx); ++m) {
    const Plan p = plan_of(f, m, x8);
    used.insert({p.partial, p.bm});
    if (p.partial) partial_bytes = std::max(partial_bytes, 4 * p.splits * m * f.n);
  }
  // The partials take the node's first scratch slot, as in every other GEMM node (slots are
  // shared by index); an add_rms_norm_ node's normalized x, the gemv path's, the next.
  gpu::BufferBinding partials{};
  std::array<gpu::BufferBinding, 2> spare{};
  if (partial_bytes > 0) {
    partials = exec->scratch(ctx, partial_bytes);
    spare = {exec->own(ctx, 16, "no output"), exec->own(ctx, 16, "no output")};
  }
  gpu::BufferBinding x = ctx.input(0).binding();
  exec->gemv = q4_gemv_exec(ctx, &x);
  const gpu::BufferBinding sum = ops.norm ? ctx.output(ops.outputs).binding() : gpu::BufferBinding{};
  if (ops.norm && !x8) exec->norm = transformer::add_rms_norm_dispatch(ctx, x, sum);
  const gpu::BufferBinding w = ctx.input(ops.weight).binding();
  // The nibbles as vec2s (K / 2 bytes per row: whole vec2s), the whole tensor for the scales.
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  // int8 x: M x K bytes of words, then (at a binding offset's alignment) M x K / 32 steps, written
  // by q8_chunks or, for the add_rms_norm_ products, by the norm's dispatch itself (its q8 form).
  uint64_t xd_base = 0;
  if (x8) {
    const Q8Scratch q8 = from ? from->q8 : q8_scratch(ctx, f.k);
    xd_base = q8.xd_base;
    if (ops.norm) {
      exec->norm = transformer::add_rms_norm_dispatch(ctx, q8.words, sum, q8.steps);
    } else if (!from || from->gate_up) {  // (another op's kernel writes x at every step)
      exec->quantize = quantize_dispatch(ctx, f, x, q8.words, q8.steps);
    }
    exec->from = from;
    x = q8.x;
  }
  if (partial_bytes > 0) {
    // The pair's gate/up: act's int8 form into the down product's x (f32 act: the reduce pass
    // rounds nothing else).
    if (to && x8 && !f.f16) *to = std::make_shared<GemmHandover>(GemmHandover{q8_scratch(ctx, f.out_n), f});
    const bool q8 = to && *to;
    const gpu::BufferBinding q = q8 ? (*to)->q8.words : spare[0], d = q8 ? (*to)->q8.steps : spare[1];
    exec->reduce = reduce_dispatch(ctx, f, q8, {partials, bias, outs[0], outs[1], outs[2], q, d});
  }
  for (const auto& [partial, bm] : used) {
    const std::vector<gpu::BufferBinding> buffers =
        partial ? std::vector<gpu::BufferBinding>{x, nibbles, w, bias, partials, spare[0], spare[1]}
                : std::vector<gpu::BufferBinding>{x, nibbles, w, bias, outs[0], outs[1], outs[2]};
    exec->gemm[{partial, bm}] = gemm_dispatch(ctx, f, x8, partial, bm, xd_base, buffers);
  }
  return exec;
}

}  // namespace

runtime::Route q4_gemm_route() {
  return {"q4_gemm", guard, [](const NodeContext& c) { return build(c, operands_of(c).product); }};
}

std::unique_ptr<runtime::NodeExec> q4_gemm_gate_up(const NodeContext& ctx, std::shared_ptr<GemmHandover>& handover) {
  return build(ctx, operands_of(ctx).product, &handover);
}

std::string q4_gemm_x8_guard(const NodeContext& product) {
  if (auto why = guard(product); !why.empty()) return why;
  if (!x8_of(product)) return "quant_gemm_x8 is off";
  if (facts_of(product, operands_of(product).product).f16) return "x is f16";
  return "";
}

std::shared_ptr<GemmHandover> q4_gemm_x8_handover(const NodeContext& product) {
  return std::make_shared<GemmHandover>(GemmHandover{q8_scratch(product, facts_of(product, "linear").k), std::nullopt});
}

X8Target x8_target(const GemmHandover& handover) {
  return {handover.q8.x, static_cast<uint32_t>(handover.q8.xd_base)};
}

std::unique_ptr<runtime::NodeExec> q4_gemm_fed(const NodeContext& ctx, const std::shared_ptr<GemmHandover>& handover) {
  return build(ctx, operands_of(ctx).product, nullptr, handover);
}

}  // namespace wgx::ops::quant
