// The quantized family: q4gsw routes for linear and embedding (ahead of linalg's dense ones,
// which reject q4gsw), linear_qkv and linear_swiglu (and the add_rms_norm_ forms of those and of
// linear) for q4gsw,
// f32 and f16 weights, and linear_swiglu_linear (and its add_rms_norm_ form, mlp.cpp). Host quantization is in
// quantize.h.
#include <stdexcept>

#include "ops/families.h"
#include "ops/quant/quant_routes.h"

namespace wgx::ops {

void register_quant(runtime::KernelRegistry& registry) {
  registry.prepend_routes("linear", quant::product_routes("linear"));
  registry.prepend_routes("embedding", quant::embedding_routes());
  registry.add({"linear_qkv", quant::product_routes("linear_qkv")});
  registry.add({"linear_swiglu", quant::product_routes("linear_swiglu")});
  registry.add({"add_rms_norm_linear", quant::product_routes("add_rms_norm_linear")});
  registry.add({"add_rms_norm_linear_qkv", quant::product_routes("add_rms_norm_linear_qkv")});
  registry.add({"add_rms_norm_linear_swiglu", quant::product_routes("add_rms_norm_linear_swiglu")});
  // The gated MLP as one node: its down product takes linear's routes (linalg's and the above).
  const runtime::OpKernels* linear = registry.find("linear");
  if (!linear) throw std::logic_error("linear_swiglu_linear needs linear's routes registered first");
  for (const char* op : {"linear_swiglu_linear", "add_rms_norm_linear_swiglu_linear"}) {
    registry.add({op, quant::mlp_routes(op, linear->routes)});
  }
}

}  // namespace wgx::ops
