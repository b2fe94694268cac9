#include "graph/builder.h"

#include <algorithm>

#include "graph/error.h"
#include "graph/text.h"
#include "graph/validate.h"

namespace wgx::graph {

namespace {
void check_shape(const Shape& shape, const SymTable& syms, const std::string& what) {
  if (shape.size() > kMaxRank) {
    throw GraphError(str(what, ": rank ", shape.size(), " exceeds ", kMaxRank));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    std::string err = dim_error(shape[i], syms);
    if (!err.empty()) throw GraphError(str(what, ": dim ", i, " ", err));
  }
}

void check_static(const Shape& shape, const std::string& what) {
  if (!is_static(shape)) throw GraphError(what + ": the shape must be constant");
}
}  // namespace

GraphBuilder::GraphBuilder(const OpRegistry& registry) : registry_(registry) {}

ValueId GraphBuilder::add_value(Value v) {
  graph_.values.push_back(std::move(v));
  return static_cast<ValueId>(graph_.values.size() - 1);
}

void GraphBuilder::claim_name(const std::string& name, const char* what) {
  if (name.empty()) throw GraphError(str(what, " without a name"));
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.name == name; });
  };
  if (taken(graph_.inputs) || taken(graph_.constants) || taken(graph_.buffers)) {
    throw GraphError(
        str(what, " '", name, "': the name is already used by an input, constant or buffer"));
  }
}

SymId GraphBuilder::sym(std::string name, int64_t min, int64_t max) {
  if (name.empty()) throw GraphError("sym without a name");
  for (const SymInt& s : graph_.syms) {
    if (s.name == name) throw GraphError(str("sym '", name, "' is declared twice"));
  }
  if (min < 0 || min > max || max > kMaxDimSize) {
    throw GraphError(str("sym '", name, "': range [", min, ", ", max, "] is not within [0, ",
                         kMaxDimSize, "] or is empty"));
  }
  const SymId id{static_cast<uint32_t>(graph_.syms.size())};
  graph_.syms.push_back({std::move(name), min, max});
  Value v;
  v.kind = ValueKind::Sym;
  v.type.dtype = DType::i64;
  v.name = graph_.syms.back().name;
  v.sym = id;
  sym_values_.push_back(add_value(std::move(v)));
  return id;
}

ValueId GraphBuilder::sym_value(SymId sym) const {
  if (sym.index >= sym_values_.size()) throw GraphError(str("sym ", sym.index, " does not exist"));
  return sym_values_[sym.index];
}

ValueId GraphBuilder::input(std::string name, DType dtype, Shape shape) {
  claim_name(name, "input");
  const std::string what = "input '" + name + "'";
  if (!kAllTypes.contains(dtype))
    throw GraphError(str(what, ": dtype ", dtype, " cannot be an input"));
  check_shape(shape, graph_.syms, what);
  Value v;
  v.type = {dtype, std::move(shape), {}};
  v.name = name;
  const ValueId id = add_value(std::move(v));
  graph_.inputs.push_back({std::move(name), id});
  return id;
}

ValueId GraphBuilder::scalar(double value) {
  Value v;
  v.kind = ValueKind::Scalar;
  v.type.dtype = DType::f32;
  v.scalar_f = value;
  return add_value(std::move(v));
}

ValueId GraphBuilder::scalar_int(int64_t value) {
  Value v;
  v.kind = ValueKind::Scalar;
  v.type.dtype = DType::i64;
  v.scalar_i = value;
  return add_value(std::move(v));
}

ValueId GraphBuilder::scalar_bool(bool value) {
  Value v;
  v.kind = ValueKind::Scalar;
  v.type.dtype = DType::boolean;
  v.scalar_i = value ? 1 : 0;
  return add_value(std::move(v));
}

ValueId GraphBuilder::add_constant(std::string name, const TensorType& type, WeightRef ref, bool later) {
  claim_name(name, "constant");
  const std::string what = "constant '" + name + "'";
  check_shape(type.shape, graph_.syms, what);
  check_static(type.shape, what);
  std::string err = quant_error(type);
  if (!err.empty()) throw GraphError(what + ": " + err);
  auto bytes = tensor_bytes(type, graph_.syms);
  if (!bytes) throw GraphError(what + ": the byte size overflows");
  if (ref.bytes != *bytes) {
    throw GraphError(str(what, ": ", ref.bytes, " bytes given, ", to_string(type, &graph_.syms),
                         " needs ", *bytes));
  }
  if (!later) weights_.bytes(ref);  // throws when the range is not in the store
  Value v;
  v.type = type;
  v.name = name;
  const ValueId id = add_value(std::move(v));
  graph_.constants.push_back({std::move(name), id, ref});
  return id;
}

ValueId GraphBuilder::constant(std::string name, const TensorType& type,
                               std::vector<uint8_t> bytes) {
  const uint64_t size = bytes.size();
  const uint32_t blob = weights_.add(std::move(bytes));
  return add_constant(std::move(name), type, {blob, 0, size});
}

ValueId GraphBuilder::later_constant(std::string name, const TensorType& type) {
  const auto bytes = tensor_bytes(type, graph_.syms);
  const uint32_t blob = weights_.add_view({});
  return add_constant(std::move(name), type, {blob, 0, bytes.value_or(0)}, true);
}

ValueId GraphBuilder::constant(std::string name, DType dtype, Shape shape,
                               std::vector<uint8_t> bytes) {
  return constant(std::move(name), TensorType{dtype, std::move(shape), {}}, std::move(bytes));
}

ValueId GraphBuilder::constant(std::string name, const TensorType& type, WeightRef ref) {
  return add_constant(std::move(name), type, ref);
}

ValueId GraphBuilder::mutable_buffer(std::string name, DType dtype, Shape shape, BufferInit init) {
  claim_name(name, "mutable buffer");
  const std::string what = "mutable buffer '" + name + "'";
  if (!kAllTypes.contains(dtype))
    throw GraphError(str(what, ": dtype ", dtype, " cannot be a buffer"));
  if (init == BufferInit::Constant) throw GraphError(what + ": give the initial constant instead");
  check_shape(shape, graph_.syms, what);
  check_static(shape, what);
  Value v;
  v.type = {dtype, std::move(shape), {}};
  v.name = name;
  const ValueId id = add_value(std::move(v));
  graph_.buffers.push_back({std::move(name), id, init, kNoIndex});
  return id;
}

ValueId GraphBuilder::mutable_buffer(std::string name, ValueId initial) {
  auto it = std::find_if(graph_.constants.begin(), graph_.constants.end(),
                         [&](const Constant& c) { return c.value == initial; });
  if (it == graph_.constants.end()) {
    throw GraphError(str("mutable buffer '", name, "': value %", initial, " is not a constant"));
  }
  const TensorType type = graph_.type(initial);
  const uint32_t index = static_cast<uint32_t>(it - graph_.constants.begin());
  const ValueId id = mutable_buffer(std::move(name), type.dtype, type.shape, BufferInit::Zeros);
  graph_.buffers.back().init = BufferInit::Constant;
  graph_.buffers.back().constant = index;
  return id;
}

std::vector<ValueId> GraphBuilder::op(std::string_view op_name, std::vector<ValueId> inputs,
                                      Attrs attrs, std::string label) {
  Node node;
  node.op = std::string(op_name);
  node.label = std::move(label);
  const std::string where = describe_node(graph_.nodes.size(), node.op, node.label) + ": ";

  const OpSchema* schema = registry_.find(op_name);
  if (!schema) throw GraphError(where + "unknown op");
  std::vector<const Value*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] >= graph_.values.size()) {
      throw GraphError(str(where, "input ", i, " is %", inputs[i], ", which does not exist"));
    }
    in.push_back(&graph_.values[inputs[i]]);
  }
  InferResult r = schema->check(in, attrs, graph_.syms, &node.attrs);
  if (!r.ok()) throw GraphError(where + r.error);
  node.inputs = std::move(inputs);
  for (TensorType& t : r.outputs) {
    Value v;
    v.type = std::move(t);
    node.outputs.push_back(add_value(std::move(v)));
  }
  graph_.nodes.push_back(std::move(node));
  return graph_.nodes.back().outputs;
}

ValueId GraphBuilder::op1(std::string_view op_name, std::vector<ValueId> inputs, Attrs attrs,
                          std::string label) {
  std::vector<ValueId> out = op(op_name, std::move(inputs), std::move(attrs), std::move(label));
  if (out.size() != 1) {
    throw GraphError(str("op1(", op_name, "): the op has ", out.size(), " outputs, use op()"));
  }
  return out[0];
}

void GraphBuilder::mutate(ValueId buffer, ValueId value) {
  auto it = std::find_if(graph_.buffers.begin(), graph_.buffers.end(),
                         [&](const MutableBuffer& b) { return b.value == buffer; });
  if (it == graph_.buffers.end()) {
    throw GraphError(str("mutation of %", buffer, ": not a mutable buffer"));
  }
  const std::string what = "mutation of buffer '" + it->name + "'";
  const uint32_t index = static_cast<uint32_t>(it - graph_.buffers.begin());
  for (const Mutation& m : graph_.mutations) {
    if (m.buffer == index) throw GraphError(what + ": the buffer is already mutated");
  }
  if (value >= graph_.values.size() || producers(graph_)[value] == kNoIndex) {
    throw GraphError(str(what, ": %", value, " is not a node output"));
  }
  if (graph_.type(value) != graph_.type(buffer)) {
    throw GraphError(str(what, ": value is ", to_string(graph_.type(value), &graph_.syms),
                         " but the buffer is ", to_string(graph_.type(buffer), &graph_.syms)));
  }
  graph_.mutations.push_back({index, value, false});
}

void GraphBuilder::output(std::string name, ValueId value) {
  if (name.empty()) throw GraphError("output without a name");
  for (const NamedValue& o : graph_.outputs) {
    if (o.name == name) throw GraphError("output '" + name + "' is declared twice");
  }
  if (value >= graph_.values.size() || graph_.values[value].kind != ValueKind::Tensor) {
    throw GraphError(str("output '", name, "': %", value, " is not a tensor value"));
  }
  graph_.outputs.push_back({std::move(name), value});
}

Graph GraphBuilder::build() const {
  Graph g = graph_;
  for (Mutation& m : g.mutations) {
    m.also_output = std::any_of(g.outputs.begin(), g.outputs.end(),
                                [&](const NamedValue& o) { return o.value == m.value; });
  }
  validate(g, registry_);
  return g;
}

}  // namespace wgx::graph
