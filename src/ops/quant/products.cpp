// linear with a q4gsw weight, and linear_qkv, linear_swiglu and the add_rms_norm_ forms of the
// three (q4gsw, f32 or f16 weight):
// y = x @ W^T (+ bias), x viewed as [M, K], f32 accumulation, the output in x's dtype.
// linear_qkv splits y's columns into q, k and v inside the kernel (one dispatch writes all
// three). linear_swiglu's product columns are gate/up pairs: q4_gemv reduces each pair to
// silu(gate) * up in its epilogue (one dispatch); the other kernels write the f32 product to
// scratch and swiglu_pairs.wgsl finishes it (as does q4_gemv for an f16 output of odd width).
// Routes, in order:
//   q4_gemv   q4gsw, M <= 4 at max shapes: one read of the weights for all rows (decode)
//   q4_gemm   q4gsw, M > 4: the prefill GEMM with split-K (gemm.cpp), where the device has 32 KiB
//             of workgroup memory
//   q4_bk32   q4gsw, any shape: tiled, 32-deep slices (every q4gsw K is a multiple of 32), 16 KiB
//             of workgroup memory: prefill on devices that have less than q4_gemm asks
//   gemv      the above but plain linear with f32/f16 weights, M <= 4
//   tiled     the same, any shape (64-deep slices, K tail read as zero)
// The route is chosen from M's maximum, but a tiled route also builds the matching gemv kernel
// and dispatches it whenever the current M is at most 4: a program whose M is symbolic then
// decodes with gemv and prefills with the tiled kernel (the attested route is the tiled one).
// linear_swiglu_linear's one-row pair (mlp.cpp) is two q4_gemv dispatches built here (q8_gate_up,
// q8_down: act handed over in int8).
// add_rms_norm_linear, _linear_qkv and _linear_swiglu take the same routes: at one row of f32
// x, q4_gemv normalizes x + residual in its prologue (x staged in workgroup memory: one
// dispatch: without it, on the H200, Llama-3.2-1B decoded at 562-564 tok/s against 610-622);
// otherwise add_rms_norm's kernel normalizes into scratch first (two). A staged kernel has 256
// invocations (they share the staging), wg's or sgwg's lane groups, and launches at most
// kStageWorkgroups per row of x, each taking every G-th column tile, so that a wide product does
// not stage x thousands of times (in every workgroup of 64, gate/up was slower fused than
// unfused on the H200). x is staged in int8 (one scale per 32 values) for the one-row products of
// f32 x with K <= 4096 (x8()), which then sum four products per dot4I8Packed: less arithmetic
// per weight, and x rounded to 8 bits (PERFORMANCE.md has what it gains; tests/test_options.cpp
// its bound); other plain products read x where they lie (staging f32 x for them measured
// slower: 545 against 610 tok/s; the reads of x are not what bounds the plain gemv). Runtime
// options: quant_gemv_x8 = on | off stages x in int8 for every or no one-row product;
// quant_gemv_stage_wgs = G sets the workgroups per row (tests); quant_gemv_stop = read | stage |
// products (diagnostics, wrong results): q4_gemv ends after reading x + residual (the norm
// prologue's; the others end after staging), after staging x, or after its products, so a
// profile tells its phases' costs apart. q4_gemv is built per product shape (kQ4GemvFixed).
// Every route also needs 256 invocations per workgroup, its workgroup memory and its storage
// buffers per stage (check_limits), a constant weight shape, and tensors under 2^32 elements. f16 output with an odd width (N, or a
// split) goes through an f32 scratch and a pack pass (split_f16.wgsl): its words straddle rows.
#include <algorithm>
#include <array>
#include <bit>

#include "ops/quant/product_parts.h"
#include "ops/transformer/kernels.h"
#include "runtime/options.h"
#include "shaders/quant_shaders.h"

namespace wgx::ops::quant {

namespace products {

Facts facts_of(const NodeContext& ctx, Op op) {
  Facts f;
  f.ops = operands_of(ctx);
  f.q4 = ctx.input(f.ops.weight).storage == runtime::Storage::Q4;
  f.f16 = ctx.input(0).dtype == DType::f16;
  f.bias = f.ops.bias;
  const std::vector<int64_t> w = ctx.input_max_shape(f.ops.weight);
  f.n = static_cast<uint64_t>(w[0]);
  f.k = static_cast<uint64_t>(w[1]);
  f.widths = {f.n, 0, 0};
  f.swiglu = op == Op::Swiglu;
  if (f.swiglu) f.widths = {f.n / 2, 0, 0};
  if (op == Op::Qkv) {
    const std::vector<int64_t>& s = ctx.attr("splits").as_ints();
    f.widths = {static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]), static_cast<uint64_t>(s[2])};
  }
  const bool even = std::all_of(f.widths.begin(), f.widths.end(), [](uint64_t v) { return v % 2 == 0; });
  f.pairs = f.f16 && even;
  f.scratch = f.f16 && !even;
  if (f.q4) f.q4p = q4_params(ctx, f.ops.weight);
  return f;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t max_rows(const NodeContext& ctx) { return numel(ctx.input_max_shape(0)) / ctx.input_max_shape(0).back(); }
uint64_t rows_now(const NodeContext& ctx) {
  const std::vector<int64_t>& x = ctx.input_shape(0);
  return x.back() == 0 ? 0 : numel(x) / static_cast<uint64_t>(x.back());
}

// q4_gemv's reduction: "wg" (workgroup memory, log2(lanes) barriers) runs anywhere; "sgwg" keeps
// wg's lanes and sums each subgroup's with subgroupAdd, then a column group's subgroups through
// workgroup memory after one barrier (none where the group is one subgroup). sgwg is taken where
// subgroups have one fixed size dividing 64 (a product whose column groups are narrower than a
// subgroup takes wg), else wg. On the H200, with linear_swiglu_linear's int8 act: Llama-3.2-1B
// 1,439 / 1,444 -> 1,449 / 1,451 tok/s, Qwen3-0.6B 986 / 989 -> 1,002 / 1,003 (PERFORMANCE.md,
// 2026-11-30 (night 2); before it, the unstaged f32 down_proj at 256 lanes had lost with it). A
// column group of one subgroup of 64 invocations a workgroup (subgroupAdd and no workgroup
// memory) lost 29% there and is gone.
bool subgroups_fixed(const NodeContext& ctx) {
  const gpu::AdapterDescription& a = ctx.gpu().adapter();
  return ctx.gpu().features().subgroups && a.subgroup_min_size > 0 && a.subgroup_min_size == a.subgroup_max_size &&
         64 % a.subgroup_min_size == 0;
}

// Lanes per column pair (dense_gemv) or per column group (q4_gemv): dense, about 8 elements of
// each row per lane; q4, at most one 32-element chunk per lane (the power of two at or above the
// chunks per row), up to the whole workgroup: the gemv is bound by the latency of each lane's
// chain of loads, not by the reduction (on the H200, per decode token: Llama's down_proj, K =
// 8192, 378 us at 64 lanes and 274 at 256; Qwen3's, K = 3072, 466 at 64 and 383 at 128). Built
// per product, with a lane's chunk loop of known trip count, a cap at 64 / 128 lanes still lost:
// Llama-3.2-1B 1,325 -> 1,222 / 1,297 tok/s (PERFORMANCE.md, 2026-11-30 (late)).
uint32_t lanes(const Facts& f) {
  if (f.q4) return static_cast<uint32_t>(std::bit_ceil(std::clamp<uint64_t>(f.k / 32, 1, kWorkgroup)));
  return static_cast<uint32_t>(std::bit_floor(std::clamp<uint64_t>(f.k / 8, 1, 128)));
}

// q4_gemv's STOP constant for the quant_gemv_stop option (diagnostics); 0 for off.
uint32_t stop_code(const NodeContext& ctx) {
  const std::string_view stop = runtime::option_choice(ctx.options(), "quant_gemv_stop");
  return stop == "stage" ? 1 : stop == "products" ? 2 : stop == "read" ? 3 : 0;
}

// The schemas guarantee x, a dense weight and the bias share one float dtype (f32 or f16 as
// computed: bf16 arrives as f32).
std::string check_node(const NodeContext& ctx, bool q4) {
  const size_t weight = operands_of(ctx).weight;
  const bool weight_q4 = ctx.input(weight).storage == runtime::Storage::Q4;
  if (weight_q4 != q4) return q4 ? "the weight is not q4gsw" : "q4gsw weights take the q4 routes";
  for (const graph::Dim& d : ctx.input_type(weight).shape) {
    if (!d.is_const()) return "the weight's shape is symbolic";
  }
  return check_rank_and_size(ctx);
}

std::string guard(const NodeContext& ctx, bool q4, Kernel kernel) {
  if (auto why = check_node(ctx, q4); !why.empty()) return why;
  const uint64_t m = max_rows(ctx);
  const char* name = q4 ? "q4_gemv" : "gemv";
  if (is_gemv(kernel) && m > kGemvRows) return "M is up to " + std::to_string(m) + "; " + name + " takes M <= 4";
  return check_limits(ctx, info(kernel).buffers, info(kernel).storage);
}

// Whether q4_gemv's one-row variant stages x in int8 (four products per dot4I8Packed instead of
// decoding each nibble to f32): the quant_gemv_x8 option (on: every one-row product of f32 x;
// off: none), by default (auto) the products over rows of at most kInt8MaxK. On the H200 (the decode
// step behind queued steps, PERFORMANCE.md 2026-11-30), with x staged a quarter chunk per
// invocation: Llama-3.2-1B 1,018-1,022 us with int8 for the wide products only (N >= 8192:
// gate/up, lm_head), 988-996 with it up to kInt8MaxK, 1,071-1,074 with it everywhere (down_proj,
// K = 8192, staging 8,192 values in each of its 512 workgroups); Qwen3-0.6B (every K <= 3,072)
// 1,470 -> 1,404 us.
constexpr uint64_t kInt8MaxK = 4096;
bool x8(const NodeContext& ctx, const Facts& f) {
  const std::string_view o = runtime::option_choice(ctx.options(), "quant_gemv_x8");
  return o == "auto" ? f.k <= kInt8MaxK : o == "on";
}

// Workgroup bytes of q4_gemv's staged variants (256 invocations share the staging): x (K floats,
// or K bytes and a scale and sum per 32, with the rounding's maxima and sums), the reduction's
// memory, and the prologue's sums of squares (the int8 stages all declare them: ssq, ssq_part).
uint64_t stage_storage(const Facts& f, Stage stage, bool int8) {
  const uint64_t squares = int8 ? 4 * kWorkgroup + 4 * 16 : stage == Stage::Norm ? 4 * kWorkgroup : 0;
  return (int8 ? f.k + f.k / 4 + 8 * kWorkgroup : 4 * f.k) + kQ4GemvStorage + squares +
         (stage == Stage::Comb ? 4 * (2 * kCombWeights + kCombHeads) : 0);
}

// The quant_gemv_stage_wgs option, or by default kStageWorkgroups(X8).
uint64_t stage_workgroups(const NodeContext& ctx, const Facts& f) {
  const std::optional<uint32_t> wgs = runtime::option_count(ctx.options(), "quant_gemv_stage_wgs");
  return wgs ? *wgs : x8(ctx, f) ? kStageWorkgroupsX8 : kStageWorkgroups;
}

// The stage of q4_gemv's one-row variant for this node: the prologue for an add_rms_norm_
// product (f32 x, where the workgroup memory and storage buffers allow), x staged in int8 for the
// others where x8(), else none.
Stage one_row_stage(const NodeContext& ctx, const Facts& f) {
  if (!f.q4 || f.f16 || f.q8_in) return Stage::None;
  const Stage want = f.ops.norm ? Stage::Norm : x8(ctx, f) ? Stage::Staged : Stage::None;
  if (want == Stage::None) return want;
  const uint32_t buffers = info(Kernel::Q4Gemv).buffers + (want == Stage::Norm ? kNormBuffers : 0);
  const uint64_t storage = stage_storage(f, want, x8(ctx, f)) + (f.q8_out ? kQ8OutStorage : 0);
  return check_limits(ctx, buffers, storage).empty() ? want : Stage::None;
}

}  // namespace products

namespace {

using namespace products;

// The executable part: the main kernel or the gemv kernel a tiled route falls back to at small
// M, then the steps after the product (the pack pass, if any), and the buffers they own.
class Exec : public Steps {
 public:
  void resize(const NodeContext& ctx) override {
    for (runtime::NodeExec* e : {norm.get(), main.get(), gemv.get(), gemv_one.get()}) {
      if (e) e->resize(ctx);
    }
    Steps::resize(ctx);
    use_gemv_ = gemv && (!main || rows_now(ctx) <= kGemvRows);
    one_row_ = gemv_one && rows_now(ctx) == 1;
  }
  void record(gpu::Recorder& rec) override {
    const bool fused = use_gemv_ && one_row_ && one_row_norm;
    if (norm && !fused) norm->record(rec);
    (use_gemv_ ? (one_row_ ? gemv_one : gemv) : main)->record(rec);
    if (!(use_gemv_ ? gemv_direct : main_direct)) Steps::record(rec);  // the pass after a product into scratch
  }

  // The product kernel, the gemv kernel for few rows (M <= 4) and q4_gemv's one-row variant.
  std::unique_ptr<runtime::NodeExec> main, gemv, gemv_one;
  bool main_direct = false, gemv_direct = false;  // the kernel writes the output itself
  // add_rms_norm_ products: the add_rms_norm dispatch that normalizes x into scratch for the
  // product kernels, unless the one-row kernel has the prologue (one_row_norm).
  std::unique_ptr<runtime::NodeExec> norm;
  bool one_row_norm = false;

 private:
  bool use_gemv_ = false, one_row_ = false;
};

std::unique_ptr<DispatchExec> split_pass(const NodeContext& ctx, const Facts& f, gpu::BufferBinding scratch,
                                         const std::array<gpu::BufferBinding, 3>& outs) {
  const gpu::Kernel& kernel =
      family_kernel(ctx, "split_f16",
                    {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage,
                     gpu::Binding::Storage, gpu::Binding::Storage});
  auto update = [f](const NodeContext& c) {
    const uint64_t m = rows_now(c);
    std::array<uint64_t, 3> words{};
    for (size_t i = 0; i < 3; ++i) words[i] = ceil_div(m * f.widths[i], 2);
    auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
    DispatchExec::Launch l;
    l.params = {u32(m),        u32(f.n),      u32(f.widths[0]), u32(f.widths[0] + f.widths[1]),
                u32(words[0]), u32(words[1]), u32(words[2]),    0};
    l.workgroups = ceil_div(words[0] + words[1] + words[2], kWorkgroup);
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel, std::vector<gpu::BufferBinding>{scratch, outs[0], outs[1], outs[2]}, 8, update);
}

std::unique_ptr<DispatchExec> swiglu_pass(const NodeContext& ctx, gpu::BufferBinding scratch, gpu::BufferBinding out) {
  const gpu::Kernel& kernel =
      family_kernel(ctx, "swiglu_pairs." + dtype_label(ctx.output(0).dtype),
                    {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const uint32_t per_word = runtime::elements_per_word(ctx.output(0).storage);
  auto update = [per_word](const NodeContext& c) {
    const uint64_t n = numel(c.output_shape(0));
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), 0, 0, 0};
    l.workgroups = ceil_div(ceil_div(n, per_word), kWorkgroup);
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel, std::vector<gpu::BufferBinding>{scratch, out}, 4, update);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx, Op op, Kernel kernel,
                                         gpu::BufferBinding* x_out = nullptr) {
  const Facts f = facts_of(ctx, op);
  auto exec = std::make_unique<Exec>();
  const gpu::BufferBinding bias = f.bias ? ctx.input(f.ops.bias_input).binding() : exec->own(ctx, 4, "no bias");
  std::array<gpu::BufferBinding, 3> outs;
  for (size_t i = 0; i < 3; ++i) {
    outs[i] = i < f.ops.outputs ? ctx.output(i).binding() : exec->own(ctx, 4, "no output");
  }
  // An add_rms_norm_ product's kernels read the normalized x from scratch (x's shape and dtype),
  // but for the one-row kernel with the prologue, which reads x and the residual themselves.
  gpu::BufferBinding x = ctx.input(0).binding();
  if (f.ops.norm) {
    x = exec->scratch(ctx, ceil_div((f.f16 ? 2 : 4) * max_rows(ctx) * f.k, 4) * 4);
    exec->norm = transformer::add_rms_norm_dispatch(ctx, x, ctx.output(f.ops.outputs).binding());
  }
  if (x_out) *x_out = x;
  const Kernel small = f.q4 ? Kernel::Q4Gemv : Kernel::DenseGemv;
  const bool gemv_fallback = !is_gemv(kernel) && check_limits(ctx, info(small).buffers, info(small).storage).empty();
  std::array<gpu::BufferBinding, 3> scratch = outs;
  if (!f.direct(kernel) || (gemv_fallback && !f.direct(small))) {
    scratch = {exec->scratch(ctx, 4 * max_rows(ctx) * f.n), exec->own(ctx, 4, "no output"),
               exec->own(ctx, 4, "no output")};
    exec->add(f.swiglu ? swiglu_pass(ctx, scratch[0], outs[0]) : split_pass(ctx, f, scratch[0], outs));
  }
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  auto make = [&](Kernel k, uint64_t rows, Stage stage = Stage::None) {
    const std::array<gpu::BufferBinding, 3>& t = f.direct(k) ? outs : scratch;
    if (k == Kernel::Q4Gemv) {
      // The nibbles as vec4s (K / 2 bytes per row: whole vec4s), the whole tensor for the scales.
      const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
      if (stage == Stage::Norm) {
        return product(ctx, k, f,
                       {ctx.input(0).binding(), nibbles, w, bias, t[0], t[1], t[2], ctx.input(1).binding(),
                        ctx.input(2).binding(), ctx.output(f.ops.outputs).binding()},
                       rows, stage);
      }
      return product(ctx, k, f, {x, nibbles, w, bias, t[0], t[1], t[2]}, rows, stage);
    }
    return product(ctx, k, f, {x, w, bias, t[0], t[1], t[2]}, rows);
  };
  auto add_gemv = [&](Kernel k) {
    exec->gemv = make(k, kGemvRows);
    if (k == Kernel::Q4Gemv) {
      const Stage stage = one_row_stage(ctx, f);
      exec->gemv_one = make(k, 1, stage);
      exec->one_row_norm = stage == Stage::Norm;
    }
    exec->gemv_direct = f.direct(k);
  };
  if (is_gemv(kernel)) {
    add_gemv(kernel);
    return exec;
  }
  exec->main = make(kernel, kTile);
  exec->main_direct = f.direct(kernel);
  if (gemv_fallback) add_gemv(small);
  return exec;
}

runtime::Route route(const char* name, Op op, bool q4, Kernel k) {
  return {name, [q4, k](const NodeContext& c) { return guard(c, q4, k); },
          [op, k](const NodeContext& c) { return build(c, op, k); }};
}

}  // namespace

using namespace products;

std::string q4_gemv_fallback_check(const runtime::NodeContext& ctx) {
  if (auto why = check_node(ctx, true); !why.empty()) return why;
  return check_limits(ctx, info(Kernel::Q4Gemv).buffers, info(Kernel::Q4Gemv).storage);
}

std::unique_ptr<runtime::NodeExec> q4_gemv_exec(const runtime::NodeContext& ctx, gpu::BufferBinding* x) {
  return build(ctx, op_of(operands_of(ctx).product), Kernel::Q4Gemv, x);
}

std::vector<runtime::Route> product_routes(const std::string& op_name) {
  constexpr std::string_view kNorm = "add_rms_norm_";
  const Op op = op_of(op_name.starts_with(kNorm) ? op_name.substr(kNorm.size()) : op_name);
  std::vector<runtime::Route> r{route("q4_gemv", op, true, Kernel::Q4Gemv), q4_gemm_route(),
                                route("q4_bk32", op, true, Kernel::Bk32)};
  // linalg's routes take plain linear with dense weights; its add_rms_norm_ form is this family's.
  if (op != Op::Linear || op_name.starts_with(kNorm)) {
    r.push_back(route("gemv", op, false, Kernel::DenseGemv));
    r.push_back(route("tiled", op, false, Kernel::Bk64));
  }
  return r;
}

}  // namespace wgx::ops::quant
