// NodeContext: what a route sees of its node while the program builds and resizes it.
#include <stdexcept>

#include "runtime/program_impl.h"

namespace wgx::runtime {

NodeContext::NodeContext(const Program& program, uint32_t node_index)
    : program_(program), index_(node_index) {}
NodeContext::NodeContext(const NodeContext& node, const OperandMap& operands)
    : program_(node.program_), index_(node.index_), operands_(&operands) {
  if (!node.operands_) return;
  auto resolve = [&node](const Operand& o) {
    const Operand& outer = (o.output ? node.operands_->outputs : node.operands_->inputs).at(o.index);
    return Operand{outer.output, outer.index, o.held ? o.held : outer.held};
  };
  auto map = std::make_shared<OperandMap>();
  map->op = operands.op.empty() ? node.operands_->op : operands.op;
  for (const Operand& o : operands.inputs) map->inputs.push_back(resolve(o));
  for (const Operand& o : operands.outputs) map->outputs.push_back(resolve(o));
  composed_ = std::move(map);
  operands_ = composed_.get();
}
const Graph& NodeContext::graph() const { return program_.impl_->graph; }
const graph::Node& NodeContext::node() const { return graph().nodes[index_]; }
const std::string& NodeContext::op() const { return operands_ && !operands_->op.empty() ? operands_->op : node().op; }
std::string NodeContext::label() const {
  const graph::Node& n = node();
  return n.label.empty() ? "#" + std::to_string(index_) + " " + n.op : n.label;
}
gpu::Context& NodeContext::gpu() const { return program_.impl_->gpu; }
gpu::PipelineCache& NodeContext::pipelines() const { return program_.impl_->pipelines; }
ParamArena& NodeContext::params() const { return program_.impl_->params; }
gpu::BufferBinding NodeContext::scratch(uint64_t bytes) const { return program_.impl_->scratch.get(index_, bytes); }
gpu::BufferBinding NodeContext::handoff(uint64_t bytes, const std::string& user) const {
  return program_.impl_->handoff.get(bytes, user, label());
}
const RuntimeOptions& NodeContext::options() const { return program_.impl_->options; }
void NodeContext::when_constants_ready(std::function<void()> fn) const {
  program_.impl_->constants_ready.push_back(std::move(fn));
}
std::vector<NodeContext::Constant> NodeContext::constants_ahead(size_t nodes) const {
  const Graph& g = graph();
  std::vector<bool> constant(g.values.size(), false), taken(g.values.size(), false);
  for (const graph::Constant& c : g.constants) constant[c.value] = true;
  std::vector<Constant> out;
  const size_t end = std::min(g.nodes.size(), size_t{index_} + nodes + 1);
  for (size_t n = index_; n < end; ++n) {
    for (const ValueId v : g.nodes[n].inputs) {
      if (!constant[v] || taken[v]) continue;
      taken[v] = true;
      out.push_back({v, program_.impl_->refs.at(v)});
    }
  }
  return out;
}
graph::ValueId NodeContext::operand_id(bool output, size_t i) const {
  if (!operands_) return (output ? node().outputs : node().inputs).at(i);
  const Operand& o = (output ? operands_->outputs : operands_->inputs).at(i);
  return (o.output ? node().outputs : node().inputs).at(o.index);
}
const TensorRef* NodeContext::held(bool output, size_t i) const {
  if (!operands_) return nullptr;
  const Operand& o = (output ? operands_->outputs : operands_->inputs).at(i);
  return o.held ? &*o.held : nullptr;
}
const graph::Value& NodeContext::input_value(size_t i) const { return graph().value(operand_id(false, i)); }
const graph::TensorType& NodeContext::input_type(size_t i) const { return input_value(i).type; }
const graph::TensorType& NodeContext::output_type(size_t i) const { return graph().type(operand_id(true, i)); }
const TensorRef& NodeContext::input(size_t i) const {
  const TensorRef* h = held(false, i);
  return h ? *h : program_.impl_->refs.at(operand_id(false, i));
}
const TensorRef& NodeContext::output(size_t i) const {
  const TensorRef* h = held(true, i);
  return h ? *h : program_.impl_->refs.at(operand_id(true, i));
}
const std::vector<int64_t>& NodeContext::input_shape(size_t i) const {
  return program_.impl_->shapes.at(operand_id(false, i));
}
const std::vector<int64_t>& NodeContext::output_shape(size_t i) const {
  return program_.impl_->shapes.at(operand_id(true, i));
}
std::vector<int64_t> NodeContext::input_max_shape(size_t i) const {
  const auto* syms = program_.impl_->build_syms;
  return graph::max_shape(input_type(i).shape, syms ? *syms : graph().syms);
}
std::vector<int64_t> NodeContext::output_max_shape(size_t i) const {
  const auto* syms = program_.impl_->build_syms;
  return graph::max_shape(output_type(i).shape, syms ? *syms : graph().syms);
}
int64_t NodeContext::sym_input(size_t i) const {
  const graph::Value& v = input_value(i);
  if (v.kind == ValueKind::Sym) return program_.impl_->sym_values.at(v.sym.index);
  if (v.kind == ValueKind::Scalar) return v.scalar_i;
  throw graph::GraphError(label() + ": input " + std::to_string(i) + " is not a SymInt");
}
double NodeContext::scalar_input(size_t i) const {
  const graph::Value& v = input_value(i);
  if (v.kind == ValueKind::Scalar) return v.type.dtype == graph::DType::f32 ? v.scalar_f : static_cast<double>(v.scalar_i);
  if (v.kind == ValueKind::Sym) return static_cast<double>(program_.impl_->sym_values.at(v.sym.index));
  throw graph::GraphError(label() + ": input " + std::to_string(i) + " is not a scalar");
}
const graph::Attr& NodeContext::attr(const std::string& name) const {
  auto it = node().attrs.find(name);
  if (it == node().attrs.end()) throw graph::GraphError(label() + ": no attribute '" + name + "'");
  return it->second;
}
bool NodeContext::has_attr(const std::string& name) const { return node().attrs.count(name) > 0; }

}  // namespace wgx::runtime
