// Helpers for graph tests: values of a given type, a sym table with a sequence length (min 1)
// and a position (min 0), and a one-call schema check.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/op_schema.h"

namespace wgx::graph::testing {

inline constexpr SymId kSeq{0};  // seq_len in [1, 128]
inline constexpr SymId kPos{1};  // input_pos in [0, 2047]

inline const SymTable& test_syms() {
  static const SymTable syms = {{"seq_len", 1, 128}, {"input_pos", 0, 2047}};
  return syms;
}

inline Value tensor(DType dtype, Shape shape) {
  Value v;
  v.type = {dtype, std::move(shape), {}};
  return v;
}
inline Value f32(Shape shape) { return tensor(DType::f32, std::move(shape)); }
inline Value f16(Shape shape) { return tensor(DType::f16, std::move(shape)); }
inline Value i32(Shape shape) { return tensor(DType::i32, std::move(shape)); }
inline Value i64(Shape shape) { return tensor(DType::i64, std::move(shape)); }
inline Value u8(Shape shape) { return tensor(DType::u8, std::move(shape)); }
inline Value boolean(Shape shape) { return tensor(DType::boolean, std::move(shape)); }
inline Value q4(Shape shape, uint32_t group, DType scale = DType::f32) {
  Value v = tensor(DType::q4gsw, std::move(shape));
  v.type.quant = {group, scale};
  return v;
}
inline Value scalar_f(double x) {
  Value v;
  v.kind = ValueKind::Scalar;
  v.type.dtype = DType::f32;
  v.scalar_f = x;
  return v;
}
inline Value scalar_i(int64_t x) {
  Value v;
  v.kind = ValueKind::Scalar;
  v.type.dtype = DType::i64;
  v.scalar_i = x;
  return v;
}
inline Value sym_value(SymId s) {
  Value v;
  v.kind = ValueKind::Sym;
  v.type.dtype = DType::i64;
  v.sym = s;
  return v;
}

// Runs the op's schema on the inputs: "f32[11, 37]" on success, "error: <message>" otherwise.
inline std::string infer_text(const std::string& op, const std::vector<Value>& inputs,
                              const Attrs& attrs = {}) {
  const OpSchema* schema = OpRegistry::global().find(op);
  if (!schema) return "error: no schema for " + op;
  std::vector<const Value*> ptrs;
  for (const Value& v : inputs) ptrs.push_back(&v);
  InferResult r = schema->check(ptrs, attrs, test_syms());
  if (!r.ok()) return "error: " + r.error;
  std::string out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    out += (i ? ", " : "") + to_string(r.outputs[i], &test_syms());
  }
  return out;
}

}  // namespace wgx::graph::testing
