#include "graph/validate.h"

#include <set>

#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

std::string describe_node(size_t index, std::string_view op, std::string_view label) {
  if (label.empty()) return str("node ", index, " (", op, ")");
  return str("node ", index, " '", label, "' (", op, ")");
}

std::string describe_node(const Graph& graph, size_t index) {
  if (index >= graph.nodes.size()) return str("node ", index);
  return describe_node(index, graph.nodes[index].op, graph.nodes[index].label);
}

namespace {

[[noreturn]] void fail(const std::string& message) { throw GraphError(message); }

class Validator {
 public:
  Validator(const Graph& g, const OpRegistry& registry)
      : g_(g), registry_(registry), source_(g.values.size()) {}

  void run() {
    check_syms();
    check_values();
    check_inputs();
    check_constants();
    check_buffers();
    check_nodes();
    check_outputs();
    check_mutations();
    check_all_defined();
  }

 private:
  std::string type_text(const TensorType& t) const { return to_string(t, &g_.syms); }

  const Value& tensor(ValueId v, const std::string& where) const {
    if (v >= g_.values.size()) fail(str(where, ": value %", v, " does not exist"));
    const Value& val = g_.values[v];
    if (val.kind != ValueKind::Tensor) {
      fail(str(where, ": value %", v, " is a ", value_kind_name(val.kind), ", not a tensor"));
    }
    return val;
  }

  // Records `where` as the definition of tensor value v; a second definition is an error.
  void define(ValueId v, const std::string& where) {
    tensor(v, where);
    if (!source_[v].empty())
      fail(str(where, ": value %", v, " is already defined by ", source_[v]));
    source_[v] = where;
  }

  void claim_name(const std::string& name, const std::string& where) {
    if (name.empty()) fail(where + " has no name");
    if (!names_.insert(name).second) {
      fail(str(where, ": name '", name, "' is already used by an input, constant or buffer"));
    }
  }

  void check_syms() {
    std::set<std::string> seen;
    for (size_t i = 0; i < g_.syms.size(); ++i) {
      const SymInt& s = g_.syms[i];
      if (s.name.empty()) fail(str("sym ", i, " has no name"));
      if (!seen.insert(s.name).second) fail(str("sym ", i, ": name '", s.name, "' repeats"));
      if (s.min < 0 || s.min > s.max || s.max > kMaxDimSize) {
        fail(str("sym '", s.name, "': range [", s.min, ", ", s.max,
                 "] is not a non-empty range within [0, ", kMaxDimSize, "]"));
      }
    }
  }

  void check_values() {
    for (size_t i = 0; i < g_.values.size(); ++i) {
      const Value& v = g_.values[i];
      const std::string where = str("value %", i);
      if (!dtype_from_code(static_cast<uint8_t>(v.type.dtype))) fail(where + ": bad dtype");
      if (v.type.shape.size() > kMaxRank) fail(str(where, ": rank exceeds ", kMaxRank));
      std::string err = quant_error(v.type);
      if (!err.empty()) fail(where + ": " + err);
      switch (v.kind) {
        case ValueKind::Tensor:
          for (size_t d = 0; d < v.type.shape.size(); ++d) {
            err = dim_error(v.type.shape[d], g_.syms);
            if (!err.empty()) fail(str(where, ": dim ", d, " ", err));
          }
          if (!tensor_bytes(v.type, g_.syms)) fail(where + ": the byte size overflows");
          break;
        case ValueKind::Sym:
          if (v.sym.index >= g_.syms.size())
            fail(str(where, ": sym ", v.sym.index, " does not exist"));
          if (v.type.dtype != DType::i64 || !v.type.shape.empty())
            fail(where + ": a sym value is i64[]");
          break;
        case ValueKind::Scalar:
          if (!v.type.shape.empty()) fail(where + ": a scalar has rank 0");
          if (v.type.dtype != DType::f32 && v.type.dtype != DType::i64 &&
              v.type.dtype != DType::boolean) {
            fail(str(where, ": a scalar is f32, i64 or bool, not ", v.type.dtype));
          }
          if (v.type.dtype == DType::boolean && v.scalar_i != 0 && v.scalar_i != 1) {
            fail(where + ": a bool scalar is 0 or 1");
          }
          break;
        default: fail(where + ": bad value kind");
      }
    }
  }

  void check_inputs() {
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const NamedValue& in = g_.inputs[i];
      const std::string where = str("input ", i, " '", in.name, "'");
      claim_name(in.name, where);
      define(in.value, where);
      if (!kAllTypes.contains(g_.type(in.value).dtype)) fail(where + ": q4gsw cannot be an input");
    }
  }

  void check_constants() {
    for (size_t i = 0; i < g_.constants.size(); ++i) {
      const Constant& c = g_.constants[i];
      const std::string where = str("constant ", i, " '", c.name, "'");
      claim_name(c.name, where);
      define(c.value, where);
      const TensorType& t = g_.type(c.value);
      if (!is_static(t.shape)) fail(where + ": the shape must be constant");
      const uint64_t want = *tensor_bytes(t, g_.syms);
      if (c.data.bytes != want) {
        fail(str(where, ": ", c.data.bytes, " bytes of data but ", type_text(t), " is ", want,
                 " bytes"));
      }
    }
  }

  void check_buffers() {
    for (size_t i = 0; i < g_.buffers.size(); ++i) {
      const MutableBuffer& b = g_.buffers[i];
      const std::string where = str("mutable buffer ", i, " '", b.name, "'");
      claim_name(b.name, where);
      define(b.value, where);
      const TensorType& t = g_.type(b.value);
      if (!is_static(t.shape)) fail(where + ": the shape must be constant");
      if (!kAllTypes.contains(t.dtype)) fail(where + ": q4gsw cannot be a buffer");
      if (b.init == BufferInit::Constant) {
        if (b.constant >= g_.constants.size())
          fail(str(where, ": initial constant ", b.constant, " does not exist"));
        const TensorType& ct = g_.type(g_.constants[b.constant].value);
        if (ct != t)
          fail(str(where, ": is ", type_text(t), " but its initial constant is ", type_text(ct)));
      } else if (b.init == BufferInit::None || b.init == BufferInit::Zeros) {
        if (b.constant != kNoIndex) fail(where + ": names an initial constant but does not use it");
      } else {
        fail(where + ": bad init kind");
      }
    }
  }

  void check_node_inputs(size_t n, const std::string& where,
                         const std::vector<uint32_t>& producer) {
    const Node& node = g_.nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v >= g_.values.size())
        fail(str(where, ": input ", i, " is %", v, ", which does not exist"));
      if (g_.values[v].kind != ValueKind::Tensor || !source_[v].empty()) continue;
      if (producer[v] == kNoIndex) fail(str(where, ": input ", i, " (%", v, ") is never defined"));
      fail(str(where, ": input ", i, " (%", v, ") is used before its definition by ",
               describe_node(g_, producer[v])));
    }
  }

  void check_nodes() {
    const std::vector<uint32_t> producer = producers(g_);
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      const Node& node = g_.nodes[n];
      const std::string where = describe_node(g_, n);
      const OpSchema* schema = registry_.find(node.op);
      if (!schema) fail(where + ": unknown op '" + node.op + "'");
      check_node_inputs(n, where, producer);
      if (node.outputs.size() != schema->num_outputs) {
        fail(str(where, ": has ", node.outputs.size(), " outputs, the op has ",
                 schema->num_outputs));
      }
      std::vector<const Value*> in;
      for (ValueId v : node.inputs) in.push_back(&g_.values[v]);
      const InferResult r = schema->check(in, node.attrs, g_.syms);
      if (!r.ok()) fail(where + ": " + r.error);
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const std::string out_where = str(where, ": output ", k);
        define(node.outputs[k], out_where);
        const TensorType& declared = g_.type(node.outputs[k]);
        if (declared != r.outputs[k]) {
          fail(str(out_where, " (%", node.outputs[k], ") is declared ", type_text(declared),
                   " but the op gives ", type_text(r.outputs[k])));
        }
      }
    }
  }

  void check_outputs() {
    std::set<std::string> seen;
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const NamedValue& o = g_.outputs[i];
      const std::string where = str("output ", i, " '", o.name, "'");
      if (o.name.empty()) fail(str("output ", i, " has no name"));
      if (!seen.insert(o.name).second) fail(where + ": the name repeats");
      tensor(o.value, where);
      if (source_[o.value].empty()) fail(str(where, ": value %", o.value, " is never defined"));
    }
  }

  void check_mutations() {
    const std::vector<uint32_t> producer = producers(g_);
    std::vector<uint32_t> last_reader(g_.values.size(), kNoIndex);
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      for (ValueId v : g_.nodes[n].inputs) last_reader[v] = static_cast<uint32_t>(n);
    }
    std::vector<bool> buffer_done(g_.buffers.size(), false);
    std::set<ValueId> values_done;
    for (size_t i = 0; i < g_.mutations.size(); ++i) {
      const Mutation& m = g_.mutations[i];
      std::string where = str("mutation ", i);
      if (m.buffer >= g_.buffers.size()) {
        fail(str(where, ": target ", m.buffer, " is not a mutable buffer (the graph has ",
                 g_.buffers.size(), ")"));
      }
      const MutableBuffer& b = g_.buffers[m.buffer];
      where += " of buffer '" + b.name + "'";
      if (buffer_done[m.buffer]) fail(where + ": the buffer is mutated twice");
      buffer_done[m.buffer] = true;
      const TensorType& t = tensor(m.value, where).type;
      if (producer[m.value] == kNoIndex)
        fail(str(where, ": value %", m.value, " is not a node output"));
      if (!values_done.insert(m.value).second)
        fail(str(where, ": value %", m.value, " already mutates another buffer"));
      if (t != g_.type(b.value)) {
        fail(str(where, ": value %", m.value, " is ", type_text(t), " but the buffer is ",
                 type_text(g_.type(b.value))));
      }
      bool listed = false;
      for (const NamedValue& o : g_.outputs) listed = listed || o.value == m.value;
      if (listed != m.also_output) {
        fail(str(where, ": also_output is ", m.also_output ? "set" : "clear", " but the value is ",
                 listed ? "" : "not ", "a graph output"));
      }
      // The new value aliases the buffer, so the old value is gone once the producer ran.
      const uint32_t reader = last_reader[b.value];
      if (reader != kNoIndex && reader > producer[m.value]) {
        fail(str(where, ": ", describe_node(g_, reader), " reads the buffer's old value after ",
                 describe_node(g_, producer[m.value]), " wrote the new one"));
      }
    }
  }

  void check_all_defined() const {
    for (size_t i = 0; i < g_.values.size(); ++i) {
      if (g_.values[i].kind == ValueKind::Tensor && source_[i].empty()) {
        fail(str("value %", i, " is a tensor that no input, constant, buffer or node defines"));
      }
    }
  }

  const Graph& g_;
  const OpRegistry& registry_;
  std::vector<std::string> source_;  // what defines each tensor value; empty: nothing yet
  std::set<std::string> names_;
};

}  // namespace

void validate(const Graph& graph, const OpRegistry& registry) { Validator(graph, registry).run(); }

}  // namespace wgx::graph
