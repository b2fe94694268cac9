#include "graph/graph.h"

#include "graph/checked.h"
#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

std::string to_string(const TensorType& type, const SymTable* syms) {
  std::string out = dtype_name(type.dtype);
  if (type.dtype == DType::q4gsw) {
    out += str("<g", type.quant.group_size, ",", type.quant.scale_dtype, ">");
  }
  return out + to_string(type.shape, syms);
}

std::optional<Q4Layout> q4gsw_layout(const std::vector<int64_t>& dims, QuantParams quant) {
  if (dims.empty() || quant.group_size == 0) return std::nullopt;
  uint64_t scale_size = element_bytes(quant.scale_dtype);
  int64_t cols = dims.back();
  if (cols < 0 || cols % quant.group_size != 0) return std::nullopt;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i] < 0) return std::nullopt;
    auto r = checked_mul(rows, dims[i]);
    if (!r) return std::nullopt;
    rows = *r;
  }
  Q4Layout l;
  l.rows = static_cast<uint64_t>(rows);
  l.cols = static_cast<uint64_t>(cols);
  l.groups_per_row = l.cols / quant.group_size;
  // The group size is even, so every row packs into whole bytes.
  auto packed = checked_mul_u(l.rows, l.cols / 2);
  auto groups = checked_mul_u(l.rows, l.groups_per_row);
  auto scales = groups ? checked_mul_u(*groups, scale_size) : std::nullopt;
  auto total = packed && scales ? checked_add_u(*packed, *scales) : std::nullopt;
  if (!total) return std::nullopt;
  l.packed_bytes = *packed;
  l.scales_offset = *packed;
  l.scale_bytes = *scales;
  l.total_bytes = *total;
  return l;
}

std::string quant_error(const TensorType& type) {
  const QuantParams& q = type.quant;
  if (type.dtype != DType::q4gsw) {
    if (q != QuantParams{}) return "quant params are set on a dtype that is not q4gsw";
    return {};
  }
  if (q.group_size != 32 && q.group_size != 64 && q.group_size != 128) {
    return str("q4gsw group size ", q.group_size, " is not 32, 64 or 128");
  }
  if (q.scale_dtype != DType::f32 && q.scale_dtype != DType::f16) {
    return str("q4gsw scale dtype ", q.scale_dtype, " is not f32 or f16");
  }
  if (type.shape.empty()) return "q4gsw tensor has rank 0";
  const Dim& last = type.shape.back();
  if (!last.is_const() || last.value() % q.group_size != 0) {
    return str("q4gsw last dim ", to_string(last), " is not a multiple of the group size ",
               q.group_size);
  }
  return {};
}

std::optional<uint64_t> tensor_bytes(const TensorType& type, const SymTable& syms) {
  for (const Dim& d : type.shape) {
    if (!dim_error(d, syms).empty()) return std::nullopt;
  }
  if (type.dtype == DType::q4gsw) {
    if (!quant_error(type).empty()) return std::nullopt;
    auto layout = q4gsw_layout(max_shape(type.shape, syms), type.quant);
    if (!layout) return std::nullopt;
    return layout->total_bytes;
  }
  auto n = max_numel(type.shape, syms);
  if (!n) return std::nullopt;
  return checked_mul_u(static_cast<uint64_t>(*n), element_bytes(type.dtype));
}

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Sym: return "sym";
    case ValueKind::Scalar: return "scalar";
  }
  return "<bad value kind>";
}

const Value& Graph::value(ValueId id) const {
  if (id >= values.size()) {
    throw GraphError(str("value %", id, " is out of range (", values.size(), " values)"));
  }
  return values[id];
}

std::vector<uint32_t> producers(const Graph& graph) {
  std::vector<uint32_t> out(graph.values.size(), kNoIndex);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId v : graph.nodes[n].outputs) {
      if (v < out.size()) out[v] = static_cast<uint32_t>(n);
    }
  }
  return out;
}

std::vector<uint32_t> use_counts(const Graph& graph) {
  std::vector<uint32_t> out(graph.values.size(), 0);
  auto use = [&](ValueId v) {
    if (v < out.size()) ++out[v];
  };
  for (const Node& node : graph.nodes) {
    for (ValueId v : node.inputs) use(v);
  }
  for (const NamedValue& o : graph.outputs) use(o.value);
  for (const Mutation& m : graph.mutations) use(m.value);
  return out;
}

std::optional<SymId> find_sym(const Graph& graph, std::string_view name) {
  for (size_t i = 0; i < graph.syms.size(); ++i) {
    if (graph.syms[i].name == name) return SymId{static_cast<uint32_t>(i)};
  }
  return std::nullopt;
}

}  // namespace wgx::graph
