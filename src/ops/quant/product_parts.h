// Internal to src/ops/quant's product routes: what products.cpp (a node's facts, the guards, the
// routes), product_kernel.cpp (one product's dispatch: its kernel variant, constants and launch)
// and product_pairs.cpp (the MLP's one-row pair and the projection that merges flash decoding's
// chunks) share. products.cpp's opening comment says how the routes are chosen.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/quant/merged_gemv.h"
#include "ops/quant/quant_routes.h"
#include "shaders/quant_flags.h"

namespace wgx::ops::quant::products {

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
using shaders::quant_flags::kBias, shaders::quant_flags::kScaleF16, shaders::quant_flags::kOutF16,
    shaders::quant_flags::kXF16, shaders::quant_flags::kWQ4, shaders::quant_flags::kWF16,
    shaders::quant_flags::kSwiglu, shaders::quant_flags::kQ8Out;
// q4_gemv's yq (the Q8_OUT epilogue's outputs of a tile, a pair per column group) and the lanes
// per column group up to which a tile makes whole runs of 16 outputs.
constexpr uint64_t kQ8OutStorage = 8 * kWorkgroup;
constexpr uint32_t kQ8OutLanes = 32;

enum class Op { Linear, Qkv, Swiglu };
inline Op op_of(const std::string& product) {
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
inline KernelInfo info(Kernel k) {
  switch (k) {
    case Kernel::Q4Gemv: return {"q4_gemv.", 7, kQ4GemvStorage};
    case Kernel::DenseGemv: return {"dense_gemv", 6, kGemvStorage};
    case Kernel::Bk64: return {"tiled.bk64", 6, 2 * kTile * 64 * 4};
    case Kernel::Bk32: return {"tiled.bk32", 6, 2 * kTile * 32 * 4};
  }
  return {};
}
inline bool is_gemv(Kernel k) { return k == Kernel::Q4Gemv || k == Kernel::DenseGemv; }


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
  // y in int8 (q4_gemv's Q8_OUT), the down product reads that as x (the q8 variant).
  bool q8_out = false;
  bool q8_in = false;

  // Whether `kernel` writes the output itself (else the f32 scratch that the pass finishes).
  bool direct(Kernel kernel) const { return !scratch && (!swiglu || kernel == Kernel::Q4Gemv); }
};

Facts facts_of(const runtime::NodeContext& ctx, Op op);
uint64_t ceil_div(uint64_t a, uint64_t b);
// Rows of x at most, and now.
uint64_t max_rows(const runtime::NodeContext& ctx);
uint64_t rows_now(const runtime::NodeContext& ctx);
// q4_gemv's reduction: whether subgroups have one fixed size dividing 64 (sgwg's condition).
bool subgroups_fixed(const runtime::NodeContext& ctx);
// Lanes per column pair (dense_gemv) or per column group (q4_gemv).
uint32_t lanes(const Facts& f);
// q4_gemv's STOP constant for the quant_gemv_stop option (diagnostics); 0 for off.
uint32_t stop_code(const runtime::NodeContext& ctx);
// "" when the node's weight and sizes suit the q4 (or dense) kernels, else why not.
std::string check_node(const runtime::NodeContext& ctx, bool q4);
// check_node, then M and the device's limits for `kernel`.
std::string guard(const runtime::NodeContext& ctx, bool q4, Kernel kernel);
// Whether q4_gemv's one-row variant stages x in int8.
bool x8(const runtime::NodeContext& ctx, const Facts& f);
// Workgroup bytes of q4_gemv's staged variants.
uint64_t stage_storage(const Facts& f, Stage stage, bool int8);
// Workgroups per row of x where x is staged: the quant_gemv_stage_wgs option, or the default.
uint64_t stage_workgroups(const runtime::NodeContext& ctx, const Facts& f);
// The stage of q4_gemv's one-row variant for this node.
Stage one_row_stage(const runtime::NodeContext& ctx, const Facts& f);

// One product's dispatch (product_kernel.cpp). `rows`: rows of x per workgroup (q4_gemv: 1 or 4;
// dense_gemv: 4; tiled: 64); `comb`: the partial results Stage::Comb merges; `persist`: the down
// product the kernel makes after its own (`down`: that product's weight), over
// persist->workgroups workgroups.
std::unique_ptr<runtime::DispatchExec> product(const runtime::NodeContext& ctx, Kernel k, const Facts& f,
                                               const std::vector<gpu::BufferBinding>& buffers, uint64_t rows,
                                               Stage stage = Stage::None, const SplitPartials* comb = nullptr,
                                               const Persist* persist = nullptr, const Q4Params* down = nullptr);

}  // namespace wgx::ops::quant::products
