#include "graph/op_schema.h"

#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

AttrSpec AttrSpec::required(std::string name, AttrKind kind) {
  return {std::move(name), kind, Presence::Required, std::nullopt};
}

AttrSpec AttrSpec::defaulted(std::string name, Attr value) {
  AttrKind kind = value.kind();
  return {std::move(name), kind, Presence::Defaulted, std::move(value)};
}

AttrSpec AttrSpec::optional(std::string name, AttrKind kind) {
  return {std::move(name), kind, Presence::Optional, std::nullopt};
}

const Attr& InferContext::attr(std::string_view name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) throw GraphError(str("attribute '", name, "' is missing"));
  return it->second;
}

namespace {
// An attribute given as a looser kind, converted to the declared one; nothing if it cannot be.
std::optional<Attr> promote(const Attr& a, AttrKind want) {
  if (a.kind() == want) return a;
  if (a.kind() == AttrKind::Int && want == AttrKind::Float) {
    return Attr(static_cast<double>(a.as_int()));
  }
  if (a.kind() == AttrKind::Ints && want == AttrKind::Dims) {
    Shape dims(a.as_ints().begin(), a.as_ints().end());
    return Attr(std::move(dims));
  }
  if (a.kind() == AttrKind::Ints && want == AttrKind::Floats) {
    return Attr(std::vector<double>(a.as_ints().begin(), a.as_ints().end()));
  }
  return std::nullopt;
}

std::string input_list(const std::vector<InputSpec>& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string n = specs[i].name + (specs[i].variadic ? "..." : "");
    out += (i ? ", " : "") + (specs[i].optional ? "[" + n + "]" : n);
  }
  return out;
}

std::string check_input(const InputSpec& spec, size_t i, const Value& v) {
  std::string where = str("input ", i, " (", spec.name, ")");
  if (v.kind != ValueKind::Tensor && !spec.scalar_ok) {
    return str(where, " must be a tensor, not a ", value_kind_name(v.kind));
  }
  if (!spec.dtypes.contains(v.type.dtype)) {
    return str(where, ": dtype ", v.type.dtype, " is not one of: ", spec.dtypes);
  }
  const size_t rank = v.type.shape.size();
  if (v.kind == ValueKind::Tensor && (rank < spec.min_rank || rank > spec.max_rank)) {
    if (spec.min_rank == spec.max_rank) {
      return str(where, ": rank ", rank, " but must be ", spec.min_rank);
    }
    return str(where, ": rank ", rank, " is outside [", spec.min_rank, ", ", spec.max_rank, "]");
  }
  return {};
}
}  // namespace

Attrs OpSchema::resolve_attrs(const Attrs& given) const {
  Attrs out;
  for (const auto& [key, value] : given) {
    const AttrSpec* spec = attr_spec(key);
    if (!spec) throw GraphError(str("unknown attribute '", key, "'"));
    auto promoted = promote(value, spec->kind);
    if (!promoted) {
      throw GraphError(str("attribute '", key, "' is ", attr_kind_name(value.kind()),
                           " but must be ", attr_kind_name(spec->kind)));
    }
    out.emplace(key, std::move(*promoted));
  }
  for (const AttrSpec& spec : this->attrs) {
    if (out.count(spec.name)) continue;
    if (spec.presence == AttrSpec::Presence::Required) {
      throw GraphError(str("required attribute '", spec.name, "' is missing"));
    }
    if (spec.presence == AttrSpec::Presence::Defaulted) out.emplace(spec.name, *spec.default_value);
  }
  return out;
}

const InputSpec* OpSchema::input_spec(size_t i) const {
  if (i < inputs.size()) return &inputs[i];
  if (!inputs.empty() && inputs.back().variadic) return &inputs.back();
  return nullptr;
}

const AttrSpec* OpSchema::attr_spec(std::string_view attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  return nullptr;
}

InferResult OpSchema::check(std::span<const Value* const> given, const Attrs& given_attrs,
                            const SymTable& syms, Attrs* resolved) const {
  size_t required = 0;
  for (const InputSpec& spec : inputs) required += spec.optional ? 0 : 1;
  const bool variadic = !inputs.empty() && inputs.back().variadic;
  if (given.size() < required || (!variadic && given.size() > inputs.size())) {
    return InferResult::fail(
        str("expects inputs (", input_list(inputs), ") but got ", given.size()));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    std::string err = check_input(*input_spec(i), i, *given[i]);
    if (!err.empty()) return InferResult::fail(err);
  }
  try {
    Attrs attrs_full = resolve_attrs(given_attrs);
    InferResult r = infer(InferContext(given, attrs_full, syms));
    if (r.ok() && r.outputs.size() != num_outputs) {
      return InferResult::fail(
          str("inference gave ", r.outputs.size(), " outputs, the schema says ", num_outputs));
    }
    if (r.ok() && resolved) *resolved = std::move(attrs_full);
    return r;
  } catch (const GraphError& e) {
    return InferResult::fail(e.what());
  }
}

void OpRegistry::add(OpSchema schema) {
  if (schema.name.empty()) throw GraphError("op schema without a name");
  const std::string where = "op schema '" + schema.name + "': ";
  if (!schema.infer) throw GraphError(where + "no inference function");
  bool seen_optional = false;
  for (size_t i = 0; i < schema.inputs.size(); ++i) {
    const InputSpec& in = schema.inputs[i];
    if (in.variadic && (i + 1 != schema.inputs.size() || in.optional)) {
      throw GraphError(where + "only the last input may be variadic, and not optional");
    }
    if (seen_optional && !in.optional) {
      throw GraphError(where + "a required input follows an optional one");
    }
    seen_optional = seen_optional || in.optional;
  }
  for (const AttrSpec& a : schema.attrs) {
    if (a.presence == AttrSpec::Presence::Defaulted && !a.default_value) {
      throw GraphError(where + "attribute '" + a.name + "' has no default value");
    }
  }
  if (schemas_.count(schema.name)) throw GraphError(where + "registered twice");
  std::string key = schema.name;
  schemas_.emplace(std::move(key), std::move(schema));
}

const OpSchema* OpRegistry::find(std::string_view op_name) const {
  auto it = schemas_.find(op_name);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : schemas_) out.push_back(entry.first);
  return out;
}

OpRegistry& OpRegistry::global() {
  // A function-local static: built on first use, after every other static is ready.
  static OpRegistry registry = [] {
    OpRegistry r;
    register_core_schemas(r);
    return r;
  }();
  return registry;
}

}  // namespace wgx::graph
