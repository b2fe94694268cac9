// q4_gemm products whose x another step of the same node rounds to int8 (q8_chunks.wgsl's
// chunks of 32, a step each), so that the product runs no q8_chunks of its own:
// linear_swiglu_linear's down product (the gate/up product's reduce pass rounds act, where it
// runs: mlp.cpp) and sdpa_rows_linear's projection (the attention rounds its output:
// attention/sdpa_rows_linear.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/op_kernel.h"

namespace wgx::ops::quant {

struct GemmHandover;

// Where the int8 x lies: the chunks' words, then their steps from word steps_word (one binding).
struct X8Target {
  gpu::BufferBinding words;
  uint32_t steps_word = 0;
};

// "" when q4_gemm takes `product` (a view of the node as linear) with int8 x, else why not.
std::string q4_gemm_x8_guard(const runtime::NodeContext& product);
// For `product`: scratch for its int8 x at its most rows, which the step before it writes
// (every step of more than four rows; at four or fewer the product reads f32 x).
std::shared_ptr<GemmHandover> q4_gemm_x8_handover(const runtime::NodeContext& product);
X8Target x8_target(const GemmHandover& handover);
// The product itself, reading x from `handover`.
std::unique_ptr<runtime::NodeExec> q4_gemm_fed(const runtime::NodeContext& product,
                                               const std::shared_ptr<GemmHandover>& handover);
// linear_swiglu_linear's gate/up product (a view of the node as linear_swiglu): where it ends in
// its reduce pass, that pass rounds act into the handover it makes (null where K is never split,
// or x is not in int8), which q4_gemm_fed's down product reads at those steps.
std::unique_ptr<runtime::NodeExec> q4_gemm_gate_up(const runtime::NodeContext& ctx,
                                                   std::shared_ptr<GemmHandover>& handover);

}  // namespace wgx::ops::quant
