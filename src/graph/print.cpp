#include "graph/print.h"

#include <sstream>

#include "graph/text.h"

namespace wgx::graph {

namespace {
std::string type_of(const Graph& g, ValueId v) {
  if (v >= g.values.size()) return "?";
  return to_string(g.values[v].type, &g.syms);
}

std::string value_ref(ValueId v) { return str("%", v); }

const char* init_name(BufferInit init) {
  switch (init) {
    case BufferInit::None: return "none";
    case BufferInit::Zeros: return "zeros";
    case BufferInit::Constant: return "constant";
  }
  return "?";
}
}  // namespace

std::string node_to_string(const Graph& g, size_t index) {
  const Node& n = g.nodes[index];
  std::ostringstream os;
  for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << value_ref(n.outputs[i]);
  os << " = " << n.op << "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n.inputs[i]);
  os << ")";
  if (!n.attrs.empty()) {
    os << " {";
    bool first = true;
    for (const auto& [key, attr] : n.attrs) {
      os << (first ? "" : ", ") << key << "=" << to_string(attr, &g.syms);
      first = false;
    }
    os << "}";
  }
  os << " : ";
  for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << type_of(g, n.outputs[i]);
  if (!n.label.empty()) os << "  # " << n.label;
  return os.str();
}

std::string to_string(const Graph& g) {
  std::ostringstream os;
  for (const SymInt& s : g.syms)
    os << "sym " << s.name << " in [" << s.min << ", " << s.max << "]\n";
  for (const NamedValue& in : g.inputs) {
    os << "input " << value_ref(in.value) << " \"" << in.name << "\" : " << type_of(g, in.value)
       << "\n";
  }
  for (const Constant& c : g.constants) {
    os << "const " << value_ref(c.value) << " \"" << c.name << "\" : " << type_of(g, c.value)
       << " @ blob " << c.data.blob << " [" << c.data.offset << ", +" << c.data.bytes << ")\n";
  }
  for (const MutableBuffer& b : g.buffers) {
    os << "buffer " << value_ref(b.value) << " \"" << b.name << "\" : " << type_of(g, b.value)
       << " init " << init_name(b.init);
    if (b.init == BufferInit::Constant && b.constant < g.constants.size()) {
      os << " \"" << g.constants[b.constant].name << "\"";
    }
    os << "\n";
  }
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.kind == ValueKind::Scalar) {
      os << value_ref(static_cast<ValueId>(i)) << " = scalar ";
      if (v.type.dtype == DType::f32) {
        os << v.scalar_f;
      } else if (v.type.dtype == DType::boolean) {
        os << (v.scalar_i ? "true" : "false");
      } else {
        os << v.scalar_i;
      }
      os << " : " << v.type.dtype << "\n";
    } else if (v.kind == ValueKind::Sym) {
      const bool known = v.sym.index < g.syms.size();
      os << value_ref(static_cast<ValueId>(i)) << " = sym "
         << (known ? g.syms[v.sym.index].name : "?") << "\n";
    }
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) os << node_to_string(g, n) << "\n";
  for (const NamedValue& o : g.outputs)
    os << "output \"" << o.name << "\" = " << value_ref(o.value) << "\n";
  for (const Mutation& m : g.mutations) {
    const bool known = m.buffer < g.buffers.size();
    os << "mutate \"" << (known ? g.buffers[m.buffer].name : "?") << "\" <- " << value_ref(m.value)
       << (m.also_output ? " (also output)" : "") << "\n";
  }
  return os.str();
}

}  // namespace wgx::graph
