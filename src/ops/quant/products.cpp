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

#include "ops/common.h"
#include "ops/quant/merged_gemv.h"
#include "ops/quant/quant_routes.h"
#include "ops/transformer/kernels.h"
#include "runtime/handoff_pool.h"
#include "runtime/options.h"
#include "shaders/quant_shaders.h"

namespace wgx::ops::quant {

namespace {

using graph::DType;
using runtime::DispatchExec;
using runtime::NodeContext;

constexpr uint64_t kGemvRows = 4;    // R in *_gemv.wgsl
constexpr uint64_t kTile = 64;       // BM = BN in tiled.wgsl
constexpr uint64_t kWorkgroup = 256;
constexpr size_t kParamWords = 12;
constexpr size_t kQ4GemvParamWords = 20;
// Workgroups per row of x for q4_gemv's staged variants (each stages x once, then takes every
// G-th column tile): the quant_gemv_stage_wgs option, else this (measured on the H200,
// PERFORMANCE.md).
constexpr uint64_t kStageWorkgroups = 256;
constexpr uint64_t kStageWorkgroupsX8 = 512;  // with x in int8
constexpr uint64_t kGemvStorage = 256 * 32;    // red in dense_gemv.wgsl
constexpr uint64_t kQ4GemvStorage = 256 * 16;  // red in q4_gemv.wgsl
constexpr uint64_t kQ4GemvColumns = 4;         // C in q4_gemv.wgsl: columns per lane group
constexpr uint32_t kNormBuffers = 3;           // q4_gemv's prologue: Res, NormW, Sum
// Flags of the product kernels.
constexpr uint32_t kBias = 1, kScaleF16 = 2, kOutF16 = 4, kXF16 = 8, kWQ4 = 16, kWF16 = 32, kSwiglu = 64, kQ8Out = 128;
// q4_gemv's yq (the Q8OUT epilogue's outputs of a tile, a pair per column group) and the lanes
// per column group up to which a tile makes whole runs of 16 outputs.
constexpr uint64_t kQ8OutStorage = 8 * kWorkgroup;
constexpr uint32_t kQ8OutLanes = 32;

enum class Op { Linear, Qkv, Swiglu };
Op op_of(const std::string& product) {
  return product == "linear_qkv" ? Op::Qkv : product == "linear_swiglu" ? Op::Swiglu : Op::Linear;
}

// How q4_gemv's one-row variant reads x: where it lies, staged in workgroup memory, staged
// after the add_rms_norm prologue, or merged from flash decoding's chunks (merged_gemv.h).
enum class Stage { None, Staged, Norm, Comb };
// stage_comb_i8's workgroup arrays: a weight and a sum per (query head, chunk), a sum per head.
constexpr uint64_t kCombWeights = 1024;  // COMB_WEIGHTS
constexpr uint64_t kCombHeads = 128;     // COMB_HEADS

enum class Kernel { Q4Gemv, DenseGemv, Bk64, Bk32 };

// Where the persist variant's claim words and act lie in its handoff buffer (q4_gemv.wgsl's
// D_CLAIMS and D_ACT): each on 128-byte lines of its own, act past the most claim words a node
// may have (kPersistClaimWords).
constexpr uint32_t kPersistClaims = 32;
constexpr uint32_t kPersistClaimWords = 2048;
constexpr uint32_t kPersistAct = kPersistClaims + kPersistClaimWords;
// q4_gemv's persist variant (q8_persist): the down product it makes after the handoff, over
// `workgroups` workgroups.
struct Persist {
  uint32_t n = 0, k = 0, tpc = 0, tiles = 0;
  bool fault = false;  // every wait sets the fault word at once (quant_mlp_persist_fault)
  bool help = false;   // workgroup 0 leaves its tiles to the help (quant_mlp_persist_help)
  uint64_t workgroups = 0;
  bool sgwg = false;  // its lanes are whole subgroups (sgwg's reduction serves it)
  uint32_t act_vec4s = 0;  // act staged in workgroup memory after the handoff (ACTS), or 0
};

struct KernelInfo {
  const char* variant_prefix;  // the activation dtype is appended for q4_gemv
  uint32_t buffers;            // storage buffers bound
  uint64_t storage;            // workgroup bytes
};
KernelInfo info(Kernel k) {
  switch (k) {
    case Kernel::Q4Gemv: return {"q4_gemv.", 7, kQ4GemvStorage};
    case Kernel::DenseGemv: return {"dense_gemv", 6, kGemvStorage};
    case Kernel::Bk64: return {"tiled.bk64", 6, 2 * kTile * 64 * 4};
    case Kernel::Bk32: return {"tiled.bk32", 6, 2 * kTile * 32 * 4};
  }
  return {};
}
bool is_gemv(Kernel k) { return k == Kernel::Q4Gemv || k == Kernel::DenseGemv; }

// What is fixed about a node at build time.
struct Facts {
  bool q4 = false;
  bool f16 = false;  // x, bias and y in f16
  bool bias = false;
  uint64_t n = 0, k = 0;
  std::array<uint64_t, 3> widths{};  // of the outputs (linear: {N, 0, 0}; linear_swiglu: {N / 2, 0, 0})
  bool swiglu = false;
  bool pairs = false;    // f16 output written in word pairs: every width is even
  bool scratch = false;  // f16 output of an odd width: f32 scratch, then split_f16 / swiglu_pairs
  Q4Params q4p;
  Operands ops;
  // linear_swiglu_linear's one-row pair (q8_gate_up, q8_down): the gate/up product also writes
  // y in int8 (q4_gemv's Q8OUT), the down product reads that as x (the q8 variant).
  bool q8_out = false;
  bool q8_in = false;

  // Whether `kernel` writes the output itself (else the f32 scratch that the pass finishes).
  bool direct(Kernel kernel) const { return !scratch && (!swiglu || kernel == Kernel::Q4Gemv); }
};

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

// q4_gemv's params that do not change with M (the comb variants' head_dim and slots too): its
// pipeline constants.
const FixedParams kQ4GemvFixed{
    "p_", {"n", "k", "flags", "tpc", "tiles_n", "group_shift", "groups", "tile_stride", "head_dim", "slots"}};

// `reduce`: q4_gemv's reduction variant (wg or sgwg); `touch`: its TOUCH constant
// (touch_first before the staging); `fixed`: kQ4GemvFixed's values for this product.
const gpu::Kernel& kernel_of(const NodeContext& ctx, Kernel k, const Facts& f, uint64_t rows, Stage stage,
                             const std::string& reduce, bool touch, const std::vector<uint32_t>& fixed,
                             const Persist* persist = nullptr, const Q4Params* down = nullptr) {
  std::string name = info(k).variant_prefix;
  std::vector<std::pair<std::string, double>> constants;
  if (k == Kernel::Q4Gemv) {
    // A kernel per product shape (kQ4GemvFixed): the driver compiles the chunk loop and
    // the reduction with known trip counts and the flags' branches away. On the H200 that took
    // decode from 1,173 to 1,315 tok/s on Llama-3.2-1B and from 902 to 981 on Qwen3-0.6B
    // (PERFORMANCE.md, 2026-11-30), against one kernel reading them from params.
    kQ4GemvFixed.constants(constants, fixed);
    name += std::string(f.q8_in ? "q8" : f.f16 ? "f16" : "f32") + "." + reduce + ".r" + std::to_string(rows);
    if (f.q8_out) constants.emplace_back("YQ", static_cast<double>(kWorkgroup));
    if (stage != Stage::None) {
      name += stage == Stage::Norm ? ".norm" : stage == Stage::Comb ? ".comb" : ".xs";
      if (x8(ctx, f)) {
        name += ".i8";
        constants.emplace_back("XQ", static_cast<double>(f.k / 16));
        constants.emplace_back("XD", static_cast<double>(f.k / 32));
      } else {
        name += ".f32";
        constants.emplace_back("XS", static_cast<double>(f.k / 4));
      }
      if (touch) constants.emplace_back("TOUCH", 1.0);
    }
    if (persist) {
      name += ".persist";
      for (const auto& [c, v] : std::initializer_list<std::pair<const char*, uint32_t>>{
               {"PERSIST", 1},
               {"D_N", persist->n},
               {"D_K", persist->k},
               {"D_TPC", persist->tpc},
               {"D_TILES", persist->tiles},
               {"D_GROUP_SHIFT", down->group_shift},
               {"D_GROUPS", down->groups},
               {"D_SCALE_BASE", down->scale_base},
               {"D_SCALE_F16", down->scale_f16 ? 1u : 0u},
               {"D_CLAIMS", kPersistClaims},
               {"D_ACT", kPersistAct}}) {
        constants.emplace_back(c, static_cast<double>(v));
      }
      if (persist->act_vec4s) constants.emplace_back("ACTS", static_cast<double>(persist->act_vec4s));
      if (persist->fault) constants.emplace_back("FAULT_NOW", 1.0);
      if (persist->help) constants.emplace_back("HELP_TEST", 1.0);
    }
    // Diagnostics: the kernel ends after one of its phases (q4_gemv.wgsl's STOP, stop_code); the
    // product's output is not written.
    if (const uint32_t stop = stop_code(ctx); stop != 0) constants.emplace_back("STOP", static_cast<double>(stop));
  }
  std::vector<gpu::Binding> b{gpu::Binding::Uniform};
  for (uint32_t i = 0; i < info(k).buffers; ++i) {
    b.push_back(i + 3 < info(k).buffers ? gpu::Binding::ReadOnlyStorage : gpu::Binding::Storage);
  }
  if (stage == Stage::Norm || stage == Stage::Comb) {
    b.insert(b.end(), {gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  }
  if (k != Kernel::Q4Gemv) return product_kernel(ctx, name, b, "params.n", std::move(constants));
  return product_kernel(ctx, name, b, "p_n()", std::move(constants), &kQ4GemvFixed, persist != nullptr);
}

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

// `rows`: rows of x per workgroup (q4_gemv: 1 or 4; dense_gemv: 4; tiled: 64); `comb`: the
// partial results Stage::Comb merges; `persist`: the down product the kernel makes after its own
// (`down`: that product's weight), over persist->workgroups workgroups.
std::unique_ptr<DispatchExec> product(const NodeContext& ctx, Kernel k, const Facts& f,
                                      const std::vector<gpu::BufferBinding>& buffers, uint64_t rows,
                                      Stage stage = Stage::None, const SplitPartials* comb = nullptr,
                                      const Persist* persist = nullptr, const Q4Params* down = nullptr) {
  uint32_t tpc = lanes(f);
  // Workgroups per row of x: one per column tile, or at most stage_workgroups where x is staged
  // (each stages x once and takes every G-th tile).
  const uint64_t stage_wgs = stage == Stage::None ? 0 : persist ? persist->workgroups : stage_workgroups(ctx, f);
  // q4_gemv's column tiles per row of x at `lanes` lanes per column group (C columns a group).
  const auto q4_tiles = [&f](uint32_t lanes) { return ceil_div(f.n, kQ4GemvColumns * kWorkgroup / lanes); };
  // A staged q4_gemv with more column tiles than workgroups halves its lanes per column group
  // (each lane then takes more chunks of a row, a tile twice the columns) where that once makes
  // one tile per workgroup, so that it touches its first weights below: Llama-3.2-1B's gate/up
  // (2 tiles at 64 lanes) went from ~340 to ~306 us per decode token on the H200, -4% of the
  // step (PERFORMANCE.md, 2026-11-30). Narrower still, until one tile however few lanes that
  // takes (lm_head: 4), measured no better.
  if (k == Kernel::Q4Gemv && stage != Stage::None && tpc > 1 && q4_tiles(tpc) > stage_wgs &&
      q4_tiles(tpc / 2) <= stage_wgs) {
    tpc /= 2;
  }
  // Q8OUT: a tile makes whole runs of 16 outputs (2 * 256 / lanes of them).
  if (f.q8_out) tpc = std::min(tpc, kQ8OutLanes);
  const bool direct = f.direct(k);
  uint32_t flags = (f.bias ? kBias : 0) | (f.q4p.scale_f16 ? kScaleF16 : 0) | (direct && f.pairs ? kOutF16 : 0) |
                   (f.f16 ? kXF16 : 0) | (f.q4 ? kWQ4 : f.f16 ? kWF16 : 0) | (direct && f.swiglu ? kSwiglu : 0) |
                   (f.q8_out ? kQ8Out : 0);
  // The scratch holds all of the product's columns: one output as far as the product is concerned.
  const uint64_t split0 = direct ? f.widths[0] : f.n;
  const uint64_t split1 = direct ? f.widths[0] + f.widths[1] : f.n;
  // A staged q4_gemv whose workgroups take one column tile each loads the first words of its
  // tile before staging x (touch_first in q4_gemv.wgsl, compiled in by the TOUCH constant): on
  // the H200 that took Qwen3-0.6B's decode step from ~1,400 to ~1,240 us and Llama-3.2-1B's
  // from ~990 to ~960; in workgroups of two or more tiles (Llama's gate/up, every lm_head) it
  // cost more than it saved (PERFORMANCE.md, 2026-11-30). Touching each next tile's first words
  // as a tile starts, in workgroups of several tiles, paid with generic kernels but not once each
  // was built for its product (Llama-3.2-1B 1,140 -> 1,158 tok/s at 3,900 rows without it,
  // the same at 128: PERFORMANCE.md, 2026-11-30 (late)), and is gone.
  const bool touch = k == Kernel::Q4Gemv && stage != Stage::None && q4_tiles(tpc) <= stage_wgs;
  // sgwg where a column group is whole subgroups (subgroupAdd, then one barrier where it is
  // several), else wg.
  const uint32_t sg_size = ctx.gpu().adapter().subgroup_min_size;
  const bool sgwg = k == Kernel::Q4Gemv && subgroups_fixed(ctx) && sg_size > 0 && tpc >= sg_size &&
                    tpc % sg_size == 0 && (!persist || persist->sgwg);
  const std::string reduce = sgwg ? "sgwg" : "wg";
  const uint32_t eps = stage == Stage::Norm ? std::bit_cast<uint32_t>(static_cast<float>(ctx.attr("eps").as_float())) : 0;
  std::shared_ptr<const uint32_t> chunks = comb ? comb->chunks : nullptr;
  const uint32_t slots = comb ? comb->slots : 0, head_dim = comb ? comb->head_dim : 0;
  const uint64_t cols = k == Kernel::Q4Gemv    ? kQ4GemvColumns * kWorkgroup / tpc
                        : k == Kernel::DenseGemv ? 2 * kWorkgroup / tpc
                                                 : kTile;
  const uint64_t tiles_n = ceil_div(f.n, cols);
  // The persist variant launches all its workgroups: the down product's tiles may outnumber the
  // gate/up product's.
  const uint64_t per_row = persist ? persist->workgroups : stage_wgs ? std::min(tiles_n, stage_wgs) : tiles_n;
  const std::vector<uint32_t> fixed{static_cast<uint32_t>(f.n), static_cast<uint32_t>(f.k), flags, tpc,
                                    static_cast<uint32_t>(tiles_n), f.q4p.group_shift, f.q4p.groups,
                                    static_cast<uint32_t>(per_row), head_dim, slots};
  auto update = [k, f, tpc, flags, split0, split1, rows, eps, tiles_n, per_row, chunks, slots,
                 head_dim](const NodeContext& c) {
    const uint64_t m = rows_now(c);
    auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
    DispatchExec::Launch l;
    l.params = {u32(m),       u32(f.n),          u32(f.k),       flags,  u32(split0), u32(split1),
                u32(tiles_n), tpc,               f.q4p.scale_base, f.q4p.group_shift, f.q4p.groups, eps};
    if (k == Kernel::Q4Gemv) {
      l.params.insert(l.params.end(), {u32(per_row), 0, 0, 0, chunks ? *chunks : 0, slots, head_dim, 0});
    }
    l.workgroups = ceil_div(m, rows) * per_row;
    return l;
  };
  return std::make_unique<DispatchExec>(ctx, kernel_of(ctx, k, f, rows, stage, reduce, touch, fixed, persist, down),
                                        buffers, k == Kernel::Q4Gemv ? kQ4GemvParamWords : kParamWords, update);
}

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

std::string q4_gemv_fallback_check(const runtime::NodeContext& ctx) {
  if (auto why = check_node(ctx, true); !why.empty()) return why;
  return check_limits(ctx, info(Kernel::Q4Gemv).buffers, info(Kernel::Q4Gemv).storage);
}

std::unique_ptr<runtime::NodeExec> q4_gemv_exec(const runtime::NodeContext& ctx, gpu::BufferBinding* x) {
  return build(ctx, op_of(operands_of(ctx).product), Kernel::Q4Gemv, x);
}

std::string merged_gemv_guard(const NodeContext& ctx, uint32_t heads, uint32_t head_dim, uint32_t chunks) {
  if (auto why = check_node(ctx, true); !why.empty()) return why;
  const Facts f = facts_of(ctx, Op::Linear);
  if (f.f16) return "x is f16 (the merged x is staged from f32)";
  if (f.bias) return "the projection has a bias";
  if (!x8(ctx, f)) return "K = " + std::to_string(f.k) + " is staged in f32, not int8 (quant_gemv_x8)";
  if (head_dim == 0 || head_dim % 8 != 0) return "head_dim " + std::to_string(head_dim) + " is not a multiple of 8";
  if (uint64_t{heads} * head_dim != f.k) return "K = " + std::to_string(f.k) + " is not heads * head_dim";
  if (heads > kCombHeads || uint64_t{heads} * chunks > kCombWeights) {
    return std::to_string(heads) + " heads of up to " + std::to_string(chunks) + " chunks are more than " +
           std::to_string(kCombWeights) + " weights (or " + std::to_string(kCombHeads) + " heads)";
  }
  return check_limits(ctx, info(Kernel::Q4Gemv).buffers + 3, stage_storage(f, Stage::Comb, true));
}

std::unique_ptr<runtime::NodeExec> merged_gemv(const NodeContext& ctx, const SplitPartials& partials) {
  const Facts f = facts_of(ctx, Op::Linear);
  auto exec = std::make_unique<Steps>();
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  // x is not read (the weight stands in for it: a read-only binding of no consequence).
  exec->add(product(ctx, Kernel::Q4Gemv, f,
                    {nibbles, nibbles, w, exec->own(ctx, 4, "no bias"), ctx.output(0).binding(),
                     exec->own(ctx, 4, "no output"), exec->own(ctx, 4, "no output"), partials.stats, partials.acc,
                     partials.attn},
                    1, Stage::Comb, &partials));
  return exec;
}

std::string q8_pair_guard(const NodeContext& gate_up, const NodeContext& down) {
  if (runtime::option_choice(gate_up.options(), "quant_gemv_x8") == "off") {
    return "quant_gemv_x8 is off (x in f32 for the one-row products)";
  }
  if (auto why = guard(gate_up, true, Kernel::Q4Gemv); !why.empty()) return "gate/up: " + why;
  if (auto why = guard(down, true, Kernel::Q4Gemv); !why.empty()) return "down: " + why;
  if (max_rows(gate_up) != 1) return "x has up to " + std::to_string(max_rows(gate_up)) + " rows (the int8 act is for one)";
  Facts f = facts_of(gate_up, Op::Swiglu);
  if (f.f16) return "x is f16";
  if (f.bias || facts_of(down, Op::Linear).bias) return "a product has a bias";
  if ((f.n / 2) % 32 != 0) return "act is " + std::to_string(f.n / 2) + " wide, not a multiple of 32";
  f.q8_out = true;
  if (f.ops.norm && one_row_stage(gate_up, f) != Stage::Norm) return "the gate/up product has no norm prologue here";
  if (auto why = check_limits(gate_up, info(Kernel::Q4Gemv).buffers, info(Kernel::Q4Gemv).storage + kQ8OutStorage);
      !why.empty()) {
    return why;
  }
  return "";
}

std::unique_ptr<runtime::NodeExec> q8_gate_up(const NodeContext& ctx, gpu::BufferBinding& q8) {
  Facts f = facts_of(ctx, Op::Swiglu);
  f.q8_out = true;
  auto exec = std::make_unique<Steps>();
  q8 = Steps::scratch(ctx, 4 * 3 * f.n / 16);  // a row of act: N / 2 bytes, and 16 per 32 values
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  const Stage stage = one_row_stage(ctx, f);  // the guard saw Norm for an add_rms_norm_ view
  std::vector<gpu::BufferBinding> buffers{ctx.input(0).binding(), nibbles, w, exec->own(ctx, 4, "no bias"),
                                          ctx.output(0).binding(), q8, exec->own(ctx, 4, "no output")};
  if (stage == Stage::Norm) {
    buffers.insert(buffers.end(), {ctx.input(1).binding(), ctx.input(2).binding(), ctx.output(1).binding()});
  }
  exec->add(product(ctx, Kernel::Q4Gemv, f, buffers, 1, stage));
  return exec;
}

std::unique_ptr<runtime::NodeExec> q8_down(const NodeContext& ctx, gpu::BufferBinding q8) {
  Facts f = facts_of(ctx, Op::Linear);
  f.q8_in = true;
  auto exec = std::make_unique<Steps>();
  const gpu::BufferBinding w = ctx.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  exec->add(product(ctx, Kernel::Q4Gemv, f,
                    {q8, nibbles, w, exec->own(ctx, 4, "no bias"), ctx.output(0).binding(),
                     exec->own(ctx, 4, "no output"), exec->own(ctx, 4, "no output")},
                    1));
  return exec;
}

// The most column tiles the persist variant's gate/up product can have: tiles of 32 columns at
// least (32 lanes per column group at most, as Q8OUT has it).
uint64_t max_gate_up_tiles(const Facts& f) { return ceil_div(f.n, kQ4GemvColumns * kWorkgroup / kQ8OutLanes); }

std::string q8_persist_guard(const NodeContext& gate_up, const NodeContext& down, uint64_t workgroups,
                             bool by_default) {
  if (auto why = q8_pair_guard(gate_up, down); !why.empty()) return why;
  const Facts f = facts_of(gate_up, Op::Swiglu);
  if (!f.ops.norm) return "the gate/up product has no norm prologue (the persist variant is add_rms_norm_'s)";
  if (!x8(gate_up, f)) return "x is not staged in int8";
  if (stop_code(gate_up) != 0) {
    return "quant_gemv_stop is set (a diagnostic of the separate products)";
  }
  if (workgroups == 0 || workgroups > gate_up.gpu().workgroups_per_dimension()) {
    return std::to_string(workgroups) + " workgroups is not 1 to " + std::to_string(gate_up.gpu().workgroups_per_dimension());
  }
  if (workgroups > 1 && gate_up.gpu().adapter().is_cpu) {
    return "a CPU adapter may suspend a started workgroup while another waits for it: 1 workgroup there";
  }
  if (workgroups > 1 && ceil_div(max_gate_up_tiles(f), workgroups) > 32) {  // a claim word's bits
    return std::to_string(workgroups) + " workgroups may take more than 32 gate/up tiles each";
  }
  if (std::min(workgroups, max_gate_up_tiles(f)) > kPersistClaimWords) {
    return "more than " + std::to_string(kPersistClaimWords) + " workgroups with gate/up tiles";
  }
  if (by_default && gate_up.gpu().adapter().is_cpu) return "a CPU adapter (quant_mlp_persist=on takes it)";
  if (by_default && max_gate_up_tiles(f) > workgroups) {
    return "up to " + std::to_string(max_gate_up_tiles(f)) + " gate/up tiles for " + std::to_string(workgroups) +
           " workgroups, where it measured slower (quant_mlp_persist=on takes it)";
  }
  return "";
}

std::unique_ptr<runtime::NodeExec> q8_persist(const NodeContext& gate_up, const NodeContext& down, uint64_t workgroups) {
  Facts f = facts_of(gate_up, Op::Swiglu);
  f.q8_out = true;
  const Facts d = facts_of(down, Op::Linear);
  auto exec = std::make_unique<Steps>();
  // The handoff words, the claim words (a word per workgroup that has gate/up tiles, from word
  // kPersistClaims), then act in int8 as q8_run writes it (a row: N / 2 bytes, and 16 per 32
  // values) from word kPersistAct: the same places in every node (q4_gemv.wgsl's PERSIST).
  const uint64_t act_words = 3 * f.n / 16;
  const gpu::BufferBinding q8 = gate_up.handoff(
      4 * (kPersistAct - runtime::HandoffPool::kWords + act_words),
      "route q4_gemv_persist (--option quant_mlp_persist=off runs the MLP as two dispatches)");
  const uint32_t sg_size = gate_up.gpu().adapter().subgroup_min_size;
  Persist p;
  p.n = static_cast<uint32_t>(d.n);
  p.k = static_cast<uint32_t>(d.k);
  p.tpc = lanes(d);
  p.tiles = static_cast<uint32_t>(ceil_div(d.n, kQ4GemvColumns * kWorkgroup / p.tpc));
  p.fault = runtime::option_on(gate_up.options(), "quant_mlp_persist_fault");
  p.help = runtime::option_on(gate_up.options(), "quant_mlp_persist_help");
  p.workgroups = workgroups;
  p.sgwg = sg_size > 0 && p.tpc >= sg_size && p.tpc % sg_size == 0;
  // act staged once per workgroup after the handoff (q4_gemv.wgsl's stage_act) where the
  // workgroup memory holds it beside the gate/up product's, else read where it lies. Staged, on
  // the H200, Qwen3-0.6B decoded 4% faster (1,050.7 / 1,050.6 tok/s against 1,010.4 / 1,015.2:
  // PERFORMANCE.md, 2026-12-01 (afternoon)).
  const uint64_t storage = stage_storage(f, Stage::Norm, true) + kQ8OutStorage + 4 * act_words;
  if (check_limits(gate_up, info(Kernel::Q4Gemv).buffers + kNormBuffers, storage).empty()) {
    p.act_vec4s = static_cast<uint32_t>(act_words / 4);
  }
  const gpu::BufferBinding w = gate_up.input(f.ops.weight).binding();
  const gpu::BufferBinding nibbles{w.buffer, w.offset, f.q4p.packed_bytes};
  // The down weight (nibbles, then scales) as X, x where the bias would be; the down output as
  // Out2.
  const std::vector<gpu::BufferBinding> buffers{down.input(d.ops.weight).binding(), nibbles,
                                                w,                                  gate_up.input(0).binding(),
                                                gate_up.output(0).binding(), q8,
                                                down.output(0).binding(),    gate_up.input(1).binding(),
                                                gate_up.input(2).binding(),  gate_up.output(1).binding()};
  exec->add(product(gate_up, Kernel::Q4Gemv, f, buffers, 1, Stage::Norm, nullptr, &p, &d.q4p));
  return exec;
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
