// Shared pieces of the core schemas' inference: dim indices, broadcasting, dtype agreement and the
// element count of a symbolic shape. Helpers throw GraphError, which check() turns into a failed
// inference.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace wgx::graph::schemas {

// A dim index in [-rank, rank) made non-negative; throws naming `what`.
size_t norm_dim(int64_t dim, size_t rank, const char* what = "dim");

// NumPy broadcasting. Dims pair up from the right; a pair broadcasts when equal or when one is
// the constant 1. A symbolic dim never broadcasts against a different one, even when its range
// would allow it: the result must be one Dim for every sym value.
Shape broadcast(const Shape& a, const Shape& b, const SymTable& syms);

// The dtype of an elementwise result over inputs `which`. Tensors must agree exactly (no implicit
// promotion: the model builder inserts to_copy). A Sym/Scalar adapts to the tensors' dtype when
// its category fits (a number for a float tensor, an integer for an integer tensor, a bool for a
// bool tensor). Without tensors, the scalars must agree.
DType common_dtype(const InferContext& ctx, std::initializer_list<size_t> which);

// The element count of a shape as `constant * product(factors)`, each factor a primitive affine
// form (coef > 0, gcd(coef, offset) = 1), sorted. Integer polynomials factor uniquely, so two
// shapes hold the same number of elements for every sym value exactly when these are equal.
struct SymProduct {
  int64_t constant = 1;
  std::vector<Dim> factors;
  friend bool operator==(const SymProduct&, const SymProduct&) = default;
};
SymProduct element_product(const Shape& shape);  // throws on overflow

// The Dims of an attribute given as Dims or Ints, each checked against the sym table; the
// constant -1 passes through as a marker ("infer" for reshape, "keep" for expand).
Shape dims_attr(const InferContext& ctx, std::string_view name);

// "[1, seq_len, 2048]" with the context's sym names.
std::string shape_text(const InferContext& ctx, const Shape& shape);

}  // namespace wgx::graph::schemas
