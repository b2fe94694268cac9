// Writes the graph section. The order of tables and fields here is the format: docs/file-format.md and
// graph_decode.cpp follow it.
#include "format/bytes.h"
#include "format/graph_codec.h"
#include "format/layout.h"

namespace wgx::format {

using namespace wgx::graph;

namespace {

void put_dim(ByteSink& s, const Dim& d) {
  if (d.is_const()) {
    s.u8(kDimConstTag);
    s.i64(d.value());
  } else {
    s.u8(kDimAffineTag);
    s.u32(d.sym().index);
    s.i64(d.coef());
    s.i64(d.offset());
  }
}

void put_value(ByteSink& s, const Value& v) {
  s.u8(static_cast<uint8_t>(v.kind));
  s.u8(static_cast<uint8_t>(v.type.dtype));
  s.u8(static_cast<uint8_t>(v.type.shape.size()));
  s.str(v.name);
  for (const Dim& d : v.type.shape) put_dim(s, d);
  if (v.type.dtype == DType::q4gsw) {
    s.u32(v.type.quant.group_size);
    s.u8(static_cast<uint8_t>(v.type.quant.scale_dtype));
  }
  if (v.kind == ValueKind::Sym) s.u32(v.sym.index);
  if (v.kind == ValueKind::Scalar) {
    if (v.type.dtype == DType::f32) {
      s.f64(v.scalar_f);
    } else {
      s.i64(v.scalar_i);
    }
  }
}

void put_attr(ByteSink& s, const std::string& name, const Attr& a) {
  s.str(name);
  s.u8(static_cast<uint8_t>(a.kind()));
  switch (a.kind()) {
    case AttrKind::Int: s.i64(a.as_int()); break;
    case AttrKind::Float: s.f64(a.as_float()); break;
    case AttrKind::String: s.str(a.as_string()); break;
    case AttrKind::Ints:
      s.u32(static_cast<uint32_t>(a.as_ints().size()));
      for (int64_t v : a.as_ints()) s.i64(v);
      break;
    case AttrKind::Floats:
      s.u32(static_cast<uint32_t>(a.as_floats().size()));
      for (double v : a.as_floats()) s.f64(v);
      break;
    case AttrKind::Bool: s.u8(a.as_bool() ? 1 : 0); break;
    case AttrKind::Dims:
      s.u32(static_cast<uint32_t>(a.as_dims().size()));
      for (const Dim& d : a.as_dims()) put_dim(s, d);
      break;
  }
}

void put_ids(ByteSink& s, const std::vector<ValueId>& ids) {
  s.u32(static_cast<uint32_t>(ids.size()));
  for (ValueId v : ids) s.u32(v);
}

void put_named(ByteSink& s, const std::vector<NamedValue>& list) {
  s.u32(static_cast<uint32_t>(list.size()));
  for (const NamedValue& nv : list) {
    s.str(nv.name);
    s.u32(nv.value);
  }
}

}  // namespace

std::vector<uint8_t> encode_graph(const Graph& g, const Metadata& metadata) {
  ByteSink s;
  s.u32(static_cast<uint32_t>(metadata.size()));
  for (const auto& [key, value] : metadata) {
    s.str(key);
    s.str(value);
  }
  s.u32(static_cast<uint32_t>(g.syms.size()));
  for (const SymInt& sym : g.syms) {
    s.str(sym.name);
    s.i64(sym.min);
    s.i64(sym.max);
  }
  s.u32(static_cast<uint32_t>(g.values.size()));
  for (const Value& v : g.values) put_value(s, v);
  s.u32(static_cast<uint32_t>(g.nodes.size()));
  for (const Node& n : g.nodes) {
    s.str(n.op);
    s.str(n.label);
    put_ids(s, n.inputs);
    put_ids(s, n.outputs);
    s.u32(static_cast<uint32_t>(n.attrs.size()));
    for (const auto& [name, attr] : n.attrs) put_attr(s, name, attr);
  }
  put_named(s, g.inputs);
  put_named(s, g.outputs);
  s.u32(static_cast<uint32_t>(g.constants.size()));
  for (const Constant& c : g.constants) {
    s.str(c.name);
    s.u32(c.value);
    s.u64(c.data.offset);
    s.u64(c.data.bytes);
  }
  s.u32(static_cast<uint32_t>(g.buffers.size()));
  for (const MutableBuffer& b : g.buffers) {
    s.str(b.name);
    s.u32(b.value);
    s.u8(static_cast<uint8_t>(b.init));
    s.u32(b.constant);
  }
  s.u32(static_cast<uint32_t>(g.mutations.size()));
  for (const Mutation& m : g.mutations) {
    s.u32(m.buffer);
    s.u32(m.value);
    s.u8(m.also_output ? 1 : 0);
  }
  return std::move(s.bytes());
}

}  // namespace wgx::format
