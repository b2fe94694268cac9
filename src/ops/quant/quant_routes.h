// Internal to src/ops/quant: the routes of each op (products.cpp, embedding.cpp) and what they
// share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/quant/gemm_handover.h"
#include "runtime/op_kernel.h"

namespace wgx::ops::quant {

// linear, linear_qkv or linear_swiglu (or the add_rms_norm_ form of the last two). linear:
// q4_gemv, q4_gemm, q4_bk32 (q4gsw weights only: linalg's routes take the dense ones).
// linear_qkv and linear_swiglu: those, then gemv and tiled for f32 and f16 weights.
std::vector<runtime::Route> product_routes(const std::string& op);
// q4_gemm (gemm.cpp), the GEMM of linear, linear_qkv or linear_swiglu for a q4gsw weight at
// M > 4; product_routes places it after q4_gemv.
runtime::Route q4_gemm_route();
// What q4_gemv needs of a node besides M <= 4 ("" or why not), and its executable part, which
// the GEMM routes run whenever the current M is at most 4 (products.cpp). `x` is set to where the
// product's x lies: the node's input, or for an add_rms_norm_ node the scratch the normalized x
// is written to, which the GEMM path (never run in the same step) can share.
std::string q4_gemv_fallback_check(const runtime::NodeContext& ctx);
std::unique_ptr<runtime::NodeExec> q4_gemv_exec(const runtime::NodeContext& ctx, gpu::BufferBinding* x);
// linear_swiglu_linear's one-row pair of q4_gemv dispatches (mlp.cpp), on views of its node as
// the gate/up product (linear_swiglu, or add_rms_norm_linear_swiglu) and as the down product
// (linear): "" when they can hand act over in int8 (q4_gemv.wgsl's q8_run: runs of 16 values
// with a step each; the f32 act is written too), else why not. q8_gate_up writes act and its
// int8 form into scratch it takes (`q8`); q8_down reads that as its x.
std::string q8_pair_guard(const runtime::NodeContext& gate_up, const runtime::NodeContext& down);
std::unique_ptr<runtime::NodeExec> q8_gate_up(const runtime::NodeContext& ctx, gpu::BufferBinding& q8);
std::unique_ptr<runtime::NodeExec> q8_down(const runtime::NodeContext& ctx, gpu::BufferBinding q8);
// The same pair in one dispatch (q4_gemv.wgsl's PERSIST: the down product after a handoff inside
// the dispatch) over `workgroups` workgroups, which need not run at once: "" where the pair can
// (`by_default`: and where the route measured faster), else why not (q8_pair_guard's reasons
// too), and its executable part.
std::string q8_persist_guard(const runtime::NodeContext& gate_up, const runtime::NodeContext& down,
                             uint64_t workgroups, bool by_default);
std::unique_ptr<runtime::NodeExec> q8_persist(const runtime::NodeContext& gate_up, const runtime::NodeContext& down,
                                              uint64_t workgroups);
// linear_swiglu_linear and add_rms_norm_linear_swiglu_linear: the pair above at one row, else
// the gate/up op's routes and then linear's (`linear`: all of linear's, dense ones included).
std::vector<runtime::Route> mlp_routes(const std::string& op, const std::vector<runtime::Route>& linear);
// embedding with a q4gsw table: q4_gather.
std::vector<runtime::Route> embedding_routes();

// Where a q4gsw tensor's scales start and how its groups divide K (the kernels' params).
struct Q4Params {
  uint32_t scale_base = 0;   // word index of the first scale
  uint32_t group_shift = 0;  // log2(group size)
  uint32_t groups = 0;       // groups per row
  bool scale_f16 = false;
  uint64_t packed_bytes = 0;  // bytes of nibbles before the scales
};
Q4Params q4_params(const runtime::NodeContext& ctx, size_t input);

// "" when the device runs 256 invocations per workgroup with `storage` bytes of workgroup memory
// and `buffers` storage buffers per stage; otherwise what is missing.
std::string check_limits(const runtime::NodeContext& ctx, uint32_t buffers, uint64_t storage);

// The pipeline of one of the family's variants (the WGSL its template includes: f16_word, silu,
// placed_nibbles, ... from src/shaders/lib).
const gpu::Kernel& family_kernel(const runtime::NodeContext& ctx, const std::string& variant,
                                 std::vector<gpu::Binding> bindings);
// The same for the product kernels (q4_gemv, dense_gemv, tiled, q4_gemm), with put/put2 prepended
// (a column of row m into whichever of Out0..Out2 holds it: params.split0/split1, the last output
// `total_columns` wide, an expression such as "params.n"; with `one_output`, always Out0: they
// call f16_word, which those templates include); `fixed`: the kernel's params fixed per node
// (their accessors join the prelude).
const gpu::Kernel& product_kernel(const runtime::NodeContext& ctx, const std::string& variant,
                                  std::vector<gpu::Binding> bindings, const std::string& total_columns = "params.n",
                                  std::vector<std::pair<std::string, double>> constants = {},
                                  const FixedParams* fixed = nullptr, bool one_output = false);

// Where a product node's operands are: linear, linear_qkv and linear_swiglu take (x, weight,
// [bias]); their add_rms_norm_ forms take (x, residual, norm_weight, weight, [bias]), use
// rms_norm(x + residual) * norm_weight as the product's x and write x + residual as their last
// output.
struct Operands {
  std::string product;  // linear, linear_qkv or linear_swiglu
  bool norm = false;
  size_t weight = 1;
  bool bias = false;
  size_t bias_input = 2;
  size_t outputs = 1;  // the product's outputs (linear_qkv: 3)
};
Operands operands_of(const runtime::NodeContext& ctx);

}  // namespace wgx::ops::quant
