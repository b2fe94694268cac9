// Elementwise ops. The families differ only in the dtypes they take and the dtype they produce,
// so each family is one schema factory and each op one line.
#include <optional>

#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

// Two operands, either of which may be a Sym/Scalar; NumPy broadcasting. `out` fixes the result
// dtype (comparisons give bool); otherwise it is the operands' common dtype.
OpSchema binary(std::string name, DTypeSet dtypes, std::optional<DType> out = std::nullopt) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "a", .dtypes = dtypes, .scalar_ok = true},
              {.name = "b", .dtypes = dtypes, .scalar_ok = true}};
  s.infer = [out](const InferContext& ctx) {
    if (!ctx.is_tensor(0) && !ctx.is_tensor(1)) {
      return InferResult::fail("at least one input must be a tensor");
    }
    const DType dtype = common_dtype(ctx, {0, 1});
    return InferResult::success(out.value_or(dtype),
                                broadcast(ctx.shape(0), ctx.shape(1), ctx.syms()));
  };
  return s;
}

// One tensor in, same shape out.
OpSchema unary(std::string name, DTypeSet dtypes, std::optional<DType> out = std::nullopt) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "x", .dtypes = dtypes}};
  s.infer = [out](const InferContext& ctx) {
    TensorType t = ctx.type(0);
    if (out) t.dtype = *out;
    return InferResult::success(t);
  };
  return s;
}

OpSchema gelu() {
  OpSchema s = unary("gelu", kFloatTypes);
  s.attrs = {AttrSpec::defaulted("approximate", "none")};
  s.infer = [](const InferContext& ctx) {
    const std::string& mode = ctx.attr_string("approximate");
    if (mode != "none" && mode != "tanh") {
      return InferResult::fail(str("approximate is \"", mode, "\", not \"none\" or \"tanh\""));
    }
    return InferResult::success(ctx.type(0));
  };
  return s;
}

OpSchema clamp() {
  OpSchema s = unary("clamp", kNumericTypes);
  s.attrs = {AttrSpec::optional("min", AttrKind::Float),
             AttrSpec::optional("max", AttrKind::Float)};
  s.infer = [](const InferContext& ctx) {
    if (!ctx.has("min") && !ctx.has("max")) return InferResult::fail("needs min, max or both");
    if (ctx.has("min") && ctx.has("max") && ctx.attr_float("min") > ctx.attr_float("max")) {
      return InferResult::fail(
          str("min ", ctx.attr_float("min"), " > max ", ctx.attr_float("max")));
    }
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// where(cond, a, b): a where cond is true, else b; all three broadcast.
OpSchema where() {
  OpSchema s;
  s.name = "where";
  s.inputs = {{.name = "cond", .dtypes = kBoolTypes},
              {.name = "a", .dtypes = kAllTypes, .scalar_ok = true},
              {.name = "b", .dtypes = kAllTypes, .scalar_ok = true}};
  s.infer = [](const InferContext& ctx) {
    const DType dtype = common_dtype(ctx, {1, 2});
    Shape shape =
        broadcast(ctx.shape(0), broadcast(ctx.shape(1), ctx.shape(2), ctx.syms()), ctx.syms());
    return InferResult::success(dtype, std::move(shape));
  };
  return s;
}

// to_copy: a dtype conversion (float <-> float, int <-> float, bool <-> anything).
OpSchema to_copy() {
  OpSchema s = unary("to_copy", kAllTypes);
  s.attrs = {AttrSpec::required("dtype", AttrKind::String)};
  s.infer = [](const InferContext& ctx) {
    const std::string& name = ctx.attr_string("dtype");
    std::optional<DType> dtype = dtype_from_name(name);
    if (!dtype || !kAllTypes.contains(*dtype)) {
      return InferResult::fail(str("dtype \"", name, "\" is not one of: ", kAllTypes));
    }
    return InferResult::success(*dtype, ctx.shape(0));
  };
  return s;
}

}  // namespace

void register_elementwise(OpRegistry& r) {
  r.add(binary("add", kNumericTypes));
  r.add(binary("sub", kNumericTypes));
  r.add(binary("mul", kNumericTypes));
  r.add(binary("div", kFloatTypes));  // true division; integer inputs need a to_copy first
  r.add(binary("pow", kFloatTypes));
  r.add(binary("maximum", kNumericTypes));
  r.add(binary("minimum", kNumericTypes));

  r.add(binary("eq", kAllTypes, DType::boolean));
  r.add(binary("ne", kAllTypes, DType::boolean));
  r.add(binary("lt", kNumericTypes, DType::boolean));
  r.add(binary("le", kNumericTypes, DType::boolean));
  r.add(binary("gt", kNumericTypes, DType::boolean));
  r.add(binary("ge", kNumericTypes, DType::boolean));

  r.add(binary("logical_and", kBoolTypes));
  r.add(binary("logical_or", kBoolTypes));
  r.add(binary("logical_xor", kBoolTypes));
  r.add(unary("logical_not", kBoolTypes));
  r.add(where());

  for (const char* op :
       {"exp", "log", "sqrt", "rsqrt", "sigmoid", "silu", "tanh", "sin", "cos", "reciprocal"}) {
    r.add(unary(op, kFloatTypes));
  }
  r.add(gelu());
  r.add(unary("neg", kFloatTypes | DTypeSet{DType::i32, DType::i64}));
  r.add(unary("abs", kNumericTypes));
  r.add(clamp());
  r.add(to_copy());
}

}  // namespace wgx::graph::schemas
