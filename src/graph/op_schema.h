// Op schemas: what each op accepts and produces, declared in one place and keyed by op name.
//
// A schema lists its inputs (name, dtypes, rank limits, whether a Sym/Scalar value may stand in,
// optional or variadic), its attributes (name, kind, required / default / optional) and an
// inference function that computes the output types. OpSchema::check() runs the generic checks
// (arity, kinds, dtypes, ranks, unknown or missing attributes) before calling the inference, so an
// inference function may assume them.
//
// Registration: OpRegistry::global() holds the core op library (register_core_schemas()), built on
// first use, so there is no static-initialization order to get wrong. Other layers add their ops
// with one line each, e.g. `registry.add(my_op_schema());`, before they build graphs.
//
// Runtime use: `const OpSchema* s = OpRegistry::global().find(node.op);` and read node.attrs
// directly (graphs from the builder and the reader carry defaults filled in).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/attr.h"
#include "graph/dtype.h"
#include "graph/graph.h"

namespace wgx::graph {

struct InputSpec {
  std::string name;
  DTypeSet dtypes = kAllTypes;
  uint32_t min_rank = 0;
  uint32_t max_rank = kMaxRank;
  bool scalar_ok = false;  // a Sym or Scalar value (rank 0) may be given instead of a tensor
  bool optional = false;   // may be left out; only trailing inputs are optional
  bool variadic = false;   // the last input only: given one or more times (cat)
};

struct AttrSpec {
  enum class Presence : uint8_t { Required, Defaulted, Optional };
  std::string name;
  AttrKind kind = AttrKind::Int;
  Presence presence = Presence::Required;
  std::optional<Attr> default_value;  // Defaulted only

  static AttrSpec required(std::string name, AttrKind kind);
  static AttrSpec defaulted(std::string name, Attr value);    // the kind is the value's
  static AttrSpec optional(std::string name, AttrKind kind);  // may be absent, no default
};

// What inference produces: the output types, or why the node is invalid.
struct InferResult {
  std::vector<TensorType> outputs;
  std::string error;

  bool ok() const { return error.empty(); }
  static InferResult success(TensorType type) { return {{std::move(type)}, {}}; }
  static InferResult success(DType dtype, Shape shape) {
    return success(TensorType{dtype, std::move(shape), {}});
  }
  static InferResult fail(std::string message) { return {{}, std::move(message)}; }
};

// An inference function's view of a node: its inputs and its attributes, defaults filled in.
class InferContext {
 public:
  InferContext(std::span<const Value* const> inputs, const Attrs& attrs, const SymTable& syms)
      : inputs_(inputs), attrs_(attrs), syms_(syms) {}

  size_t num_inputs() const { return inputs_.size(); }
  const Value& value(size_t i) const { return *inputs_[i]; }
  const TensorType& type(size_t i) const { return inputs_[i]->type; }
  const Shape& shape(size_t i) const { return inputs_[i]->type.shape; }
  DType dtype(size_t i) const { return inputs_[i]->type.dtype; }
  size_t rank(size_t i) const { return inputs_[i]->type.shape.size(); }
  bool is_tensor(size_t i) const { return inputs_[i]->kind == ValueKind::Tensor; }

  bool has(std::string_view attr) const { return attrs_.find(attr) != attrs_.end(); }
  // Typed attribute access; throws GraphError when absent or of another kind.
  const Attr& attr(std::string_view name) const;
  int64_t attr_int(std::string_view name) const { return attr(name).as_int(); }
  double attr_float(std::string_view name) const { return attr(name).as_float(); }
  bool attr_bool(std::string_view name) const { return attr(name).as_bool(); }
  const std::string& attr_string(std::string_view name) const { return attr(name).as_string(); }
  const std::vector<int64_t>& attr_ints(std::string_view name) const {
    return attr(name).as_ints();
  }
  const Shape& attr_dims(std::string_view name) const { return attr(name).as_dims(); }
  const Attrs& attrs() const { return attrs_; }
  const SymTable& syms() const { return syms_; }

 private:
  std::span<const Value* const> inputs_;
  const Attrs& attrs_;
  const SymTable& syms_;
};

// Returns output types or an error. Throwing GraphError counts as returning fail().
using InferFn = std::function<InferResult(const InferContext&)>;

struct OpSchema {
  std::string name;
  std::vector<InputSpec> inputs;
  uint32_t num_outputs = 1;
  std::vector<AttrSpec> attrs;
  InferFn infer;

  // The attributes with defaults filled in and Int->Float, Ints->Dims/Floats promoted to the
  // declared kind. Throws GraphError for an unknown attribute, a wrong kind or a missing one.
  Attrs resolve_attrs(const Attrs& attrs) const;
  // Generic checks, then inference. On success and with `resolved`, stores the resolved attrs.
  InferResult check(std::span<const Value* const> inputs, const Attrs& attrs, const SymTable& syms,
                    Attrs* resolved = nullptr) const;
  // The spec that input `i` is checked against (the variadic one repeats), or null.
  const InputSpec* input_spec(size_t i) const;
  const AttrSpec* attr_spec(std::string_view name) const;
};

class OpRegistry {
 public:
  OpRegistry() = default;  // empty; global() is the one with the core ops
  // The process-wide registry, holding the core op library. Built on first use (thread-safe);
  // add to it only while no other thread builds or validates graphs.
  static OpRegistry& global();

  // Throws GraphError for a duplicate name or a malformed schema (no inference, optional inputs
  // before required ones, a variadic input that is not last).
  void add(OpSchema schema);
  const OpSchema* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSchema, std::less<>> schemas_;
};

// Adds the core op library (elementwise, reductions, normalization, matmul/linear, layout ops).
void register_core_schemas(OpRegistry& registry);

}  // namespace wgx::graph
