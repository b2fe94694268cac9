#include "graph/attr.h"

#include <sstream>

#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::Bool: return "bool";
    case AttrKind::Dims: return "dims";
  }
  return "<bad attr kind>";
}

AttrKind Attr::kind() const { return static_cast<AttrKind>(v_.index() + 1); }

namespace {
template <typename T>
const T& get(const std::variant<int64_t, double, std::string, std::vector<int64_t>,
                                std::vector<double>, bool, Shape>& v,
             AttrKind want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw GraphError(str("attribute is ", attr_kind_name(static_cast<AttrKind>(v.index() + 1)),
                       ", not ", attr_kind_name(want)));
}

std::string float_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

int64_t Attr::as_int() const { return get<int64_t>(v_, AttrKind::Int); }
double Attr::as_float() const { return get<double>(v_, AttrKind::Float); }
const std::string& Attr::as_string() const { return get<std::string>(v_, AttrKind::String); }
const std::vector<int64_t>& Attr::as_ints() const {
  return get<std::vector<int64_t>>(v_, AttrKind::Ints);
}
const std::vector<double>& Attr::as_floats() const {
  return get<std::vector<double>>(v_, AttrKind::Floats);
}
bool Attr::as_bool() const { return get<bool>(v_, AttrKind::Bool); }
const Shape& Attr::as_dims() const { return get<Shape>(v_, AttrKind::Dims); }

std::string to_string(const Attr& attr, const SymTable* syms) {
  switch (attr.kind()) {
    case AttrKind::Int: return std::to_string(attr.as_int());
    case AttrKind::Float: return float_text(attr.as_float());
    case AttrKind::String: return enclose("\"", attr.as_string(), "\"");
    case AttrKind::Ints: return enclose("[", join(attr.as_ints()), "]");
    case AttrKind::Floats: {
      std::vector<std::string> parts;
      for (double v : attr.as_floats()) parts.push_back(float_text(v));
      return enclose("[", join(parts), "]");
    }
    case AttrKind::Bool: return attr.as_bool() ? "true" : "false";
    case AttrKind::Dims: return to_string(attr.as_dims(), syms);
  }
  return "?";
}

}  // namespace wgx::graph
