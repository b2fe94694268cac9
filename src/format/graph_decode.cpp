// Reads the graph section written by graph_encode.cpp. Nothing read from the file is trusted: every
// code is checked, every count is bounded by the bytes left before anything is reserved, every
// index is checked against its table, and weight ranges against the weight section.
#include "format/bytes.h"
#include "format/graph_codec.h"
#include "format/layout.h"
#include "graph/text.h"

namespace wgx::format {

using namespace wgx::graph;

namespace {

class Decoder {
 public:
  Decoder(std::span<const uint8_t> section, uint64_t file_offset, uint64_t weights_size)
      : c_(section, file_offset, "graph"), weights_size_(weights_size) {}

  DecodedGraph run() {
    read_metadata();
    read_syms();
    read_values();
    read_nodes();
    read_named(out_.graph.inputs, "input");
    read_named(out_.graph.outputs, "output");
    read_constants();
    read_buffers();
    read_mutations();
    c_.set_item("end");
    if (c_.remaining() != 0) c_.fail("", str(c_.remaining(), " bytes follow the last table"));
    return std::move(out_);
  }

 private:
  Graph& g() { return out_.graph; }

  uint32_t table(const char* name, uint64_t min_item_bytes) {
    c_.set_item(str(name, " table"));
    return c_.count("count", min_item_bytes);
  }

  DType dtype(const char* field) {
    const uint64_t at = pos();
    const uint8_t code = c_.u8(field);
    auto d = dtype_from_code(code);
    if (!d) c_.fail_at(at, field, str("unknown dtype code ", int{code}));
    return *d;
  }

  uint64_t pos() const { return c_.pos(); }

  Dim dim() {
    const uint64_t at = pos();
    const uint8_t tag = c_.u8("dim tag");
    if (tag == kDimConstTag) return Dim(c_.i64("dim value"));
    if (tag != kDimAffineTag) c_.fail_at(at, "dim tag", str("unknown dim tag ", int{tag}));
    const SymId sym{c_.index("dim sym", g().syms.size(), "sym")};
    const uint64_t coef_at = pos();
    const int64_t coef = c_.i64("dim coef");
    if (coef == 0) c_.fail_at(coef_at, "dim coef", "an affine dim has coefficient 0");
    return Dim::affine(coef, sym, c_.i64("dim offset"));
  }

  void read_metadata() {
    const uint32_t n = table("metadata", min_bytes::kMetadata);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("metadata entry ", i));
      const uint64_t at = pos();
      std::string key = c_.str("key");
      std::string value = c_.str("value");
      if (!out_.metadata.emplace(key, std::move(value)).second) {
        c_.fail_at(at, "key", "key '" + key + "' repeats");
      }
    }
  }

  void read_syms() {
    const uint32_t n = table("sym", min_bytes::kSym);
    g().syms.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("sym ", i));
      SymInt s;
      s.name = c_.str("name");
      s.min = c_.i64("min");
      s.max = c_.i64("max");
      g().syms.push_back(std::move(s));
    }
  }

  void read_values() {
    const uint32_t n = table("value", min_bytes::kValue);
    g().values.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("value %", i));
      Value v;
      const uint64_t kind_at = pos();
      const uint8_t kind = c_.u8("kind");
      if (kind < 1 || kind > 3) c_.fail_at(kind_at, "kind", str("unknown value kind ", int{kind}));
      v.kind = static_cast<ValueKind>(kind);
      v.type.dtype = dtype("dtype");
      const uint64_t rank_at = pos();
      const uint8_t rank = c_.u8("rank");
      if (rank > kMaxRank)
        c_.fail_at(rank_at, "rank", str("rank ", int{rank}, " exceeds ", kMaxRank));
      v.name = c_.str("name");
      for (uint8_t d = 0; d < rank; ++d) v.type.shape.push_back(dim());
      if (v.type.dtype == DType::q4gsw) {
        v.type.quant.group_size = c_.u32("group size");
        v.type.quant.scale_dtype = dtype("scale dtype");
      }
      if (v.kind == ValueKind::Sym) v.sym = SymId{c_.index("sym", g().syms.size(), "sym")};
      if (v.kind == ValueKind::Scalar) {
        if (v.type.dtype == DType::f32) {
          v.scalar_f = c_.f64("scalar");
        } else {
          v.scalar_i = c_.i64("scalar");
        }
      }
      g().values.push_back(std::move(v));
    }
  }

  ValueId value_id(const char* field) { return c_.index(field, g().values.size(), "value"); }

  std::vector<ValueId> ids(const char* field) {
    const uint32_t n = c_.count(field, min_bytes::kValueId);
    std::vector<ValueId> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; ++i) out.push_back(value_id(field));
    return out;
  }

  Attr attr_payload(AttrKind kind) {
    switch (kind) {
      case AttrKind::Int: return Attr(c_.i64("value"));
      case AttrKind::Float: return Attr(c_.f64("value"));
      case AttrKind::String: return Attr(c_.str("value"));
      case AttrKind::Bool: return Attr(c_.boolean("value"));
      case AttrKind::Ints: {
        std::vector<int64_t> v(c_.count("length", 8));
        for (int64_t& x : v) x = c_.i64("value");
        return Attr(std::move(v));
      }
      case AttrKind::Floats: {
        std::vector<double> v(c_.count("length", 8));
        for (double& x : v) x = c_.f64("value");
        return Attr(std::move(v));
      }
      case AttrKind::Dims: {
        const uint32_t n = c_.count("length", min_bytes::kDim);
        Shape dims;
        dims.reserve(n);
        for (uint32_t i = 0; i < n; ++i) dims.push_back(dim());
        return Attr(std::move(dims));
      }
    }
    c_.fail("kind", "unknown attribute kind");
  }

  void read_nodes() {
    const uint32_t n = table("node", min_bytes::kNode);
    g().nodes.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("node ", i));
      Node node;
      node.op = c_.str("op");
      c_.set_item(str("node ", i, " (", node.op, ")"));
      node.label = c_.str("label");
      node.inputs = ids("inputs");
      node.outputs = ids("outputs");
      const uint32_t attrs = c_.count("attribute count", min_bytes::kAttr);
      for (uint32_t a = 0; a < attrs; ++a) {
        const uint64_t at = pos();
        std::string name = c_.str("attribute name");
        const uint64_t kind_at = pos();
        const uint8_t kind = c_.u8("attribute kind");
        if (kind < 1 || kind > kMaxAttrKindCode) {
          c_.fail_at(kind_at, "attribute kind", str("unknown attribute kind ", int{kind}));
        }
        Attr value = attr_payload(static_cast<AttrKind>(kind));
        if (!node.attrs.emplace(name, std::move(value)).second) {
          c_.fail_at(at, "attribute name", "attribute '" + name + "' repeats");
        }
      }
      g().nodes.push_back(std::move(node));
    }
  }

  void read_named(std::vector<NamedValue>& list, const char* what) {
    const uint32_t n = table(what, min_bytes::kNamedValue);
    list.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str(what, " ", i));
      NamedValue nv;
      nv.name = c_.str("name");
      nv.value = value_id("value");
      list.push_back(std::move(nv));
    }
  }

  void read_constants() {
    const uint32_t n = table("constant", min_bytes::kConstant);
    g().constants.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("constant ", i));
      Constant k;
      k.name = c_.str("name");
      c_.set_item(str("constant ", i, " '", k.name, "'"));
      k.value = value_id("value");
      const uint64_t offset_at = pos();
      k.data.offset = c_.u64("offset");
      k.data.bytes = c_.u64("bytes");
      if (k.data.offset % kTensorAlign != 0) {
        c_.fail_at(offset_at, "offset",
                   str("weight offset ", k.data.offset, " is not a multiple of ", kTensorAlign));
      }
      if (k.data.offset > weights_size_ || k.data.bytes > weights_size_ - k.data.offset) {
        c_.fail_at(offset_at, "offset",
                   str("weight range [", k.data.offset, ", +", k.data.bytes, ") is outside the ",
                       weights_size_, "-byte weight section"));
      }
      g().constants.push_back(std::move(k));
    }
  }

  void read_buffers() {
    const uint32_t n = table("buffer", min_bytes::kBuffer);
    g().buffers.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("buffer ", i));
      MutableBuffer b;
      b.name = c_.str("name");
      c_.set_item(str("buffer ", i, " '", b.name, "'"));
      b.value = value_id("value");
      const uint64_t init_at = pos();
      const uint8_t init = c_.u8("init");
      if (init > 2) c_.fail_at(init_at, "init", str("unknown init kind ", int{init}));
      b.init = static_cast<BufferInit>(init);
      const uint64_t constant_at = pos();
      b.constant = c_.u32("constant");
      if (b.constant != kNoIndex && b.constant >= g().constants.size()) {
        c_.fail_at(constant_at, "constant",
                   str("constant ", b.constant, " is out of range (", g().constants.size(),
                       " constants)"));
      }
      g().buffers.push_back(std::move(b));
    }
  }

  void read_mutations() {
    const uint32_t n = table("mutation", min_bytes::kMutation);
    g().mutations.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      c_.set_item(str("mutation ", i));
      Mutation m;
      m.buffer = c_.index("buffer", g().buffers.size(), "buffer");
      m.value = value_id("value");
      m.also_output = c_.boolean("also output");
      g().mutations.push_back(m);
    }
  }

  Cursor c_;
  uint64_t weights_size_;
  DecodedGraph out_;
};

}  // namespace

DecodedGraph decode_graph(std::span<const uint8_t> section, uint64_t file_offset,
                          uint64_t weights_size) {
  return Decoder(section, file_offset, weights_size).run();
}

}  // namespace wgx::format
