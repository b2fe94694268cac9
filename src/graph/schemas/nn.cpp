// Normalization, embedding lookup, the matrix products and conv1d.
#include <optional>

#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

// An optional per-channel parameter (norm weight, bias): x's dtype, shape [x's last dim].
void check_channel_param(const InferContext& ctx, size_t i, const Dim& channels) {
  if (i >= ctx.num_inputs()) return;
  if (ctx.dtype(i) != ctx.dtype(0)) {
    throw GraphError(str("input ", i, " is ", ctx.dtype(i), " but x is ", ctx.dtype(0)));
  }
  if (ctx.shape(i)[0] != channels) {
    throw GraphError(str("input ", i, " has ", to_string(ctx.shape(i)[0], &ctx.syms()),
                         " channels but x has ", to_string(channels, &ctx.syms())));
  }
}

// rms_norm(x, [weight]) and layer_norm(x, [weight], [bias]) normalize over the last dim.
OpSchema norm(std::string name, bool with_bias, double eps) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {
      {.name = "x", .dtypes = kFloatTypes, .min_rank = 1},
      {.name = "weight", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1, .optional = true}};
  if (with_bias) {
    s.inputs.push_back(
        {.name = "bias", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1, .optional = true});
  }
  s.attrs = {AttrSpec::defaulted("eps", eps)};
  s.infer = [](const InferContext& ctx) {
    if (!(ctx.attr_float("eps") >= 0)) return InferResult::fail("eps must be >= 0");
    for (size_t i = 1; i < ctx.num_inputs(); ++i) check_channel_param(ctx, i, ctx.shape(0).back());
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// embedding(table [V, D], ids [...], dtype?) -> [..., D]. A q4gsw table yields its scale dtype;
// the optional dtype attribute (a float dtype) converts the rows on the way (the decoder's
// activations, so that no cast follows the lookup).
OpSchema embedding() {
  OpSchema s;
  s.name = "embedding";
  s.inputs = {{.name = "table", .dtypes = kWeightTypes, .min_rank = 2, .max_rank = 2},
              {.name = "ids", .dtypes = kIndexTypes, .max_rank = kMaxRank - 1}};
  s.attrs = {AttrSpec::optional("dtype", AttrKind::String)};
  s.infer = [](const InferContext& ctx) {
    const TensorType& table = ctx.type(0);
    Shape shape = ctx.shape(1);
    shape.push_back(table.shape[1]);
    DType dtype = table.dtype == DType::q4gsw ? table.quant.scale_dtype : table.dtype;
    if (ctx.has("dtype")) {
      const std::string& name = ctx.attr_string("dtype");
      const std::optional<DType> out = dtype_from_name(name);
      if (!out || !kFloatTypes.contains(*out)) {
        return InferResult::fail(str("dtype \"", name, "\" is not one of: ", kFloatTypes));
      }
      dtype = *out;
    }
    return InferResult::success(dtype, std::move(shape));
  };
  return s;
}

// matmul(a, b) with torch.matmul's rules: 1-D operands get a dim of 1 that is removed again,
// batch dims broadcast.
OpSchema matmul() {
  OpSchema s;
  s.name = "matmul";
  s.inputs = {{.name = "a", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "b", .dtypes = kFloatTypes, .min_rank = 1}};
  s.infer = [](const InferContext& ctx) {
    const DType dtype = common_dtype(ctx, {0, 1});
    const bool a_vec = ctx.rank(0) == 1;
    const bool b_vec = ctx.rank(1) == 1;
    Shape a = ctx.shape(0);
    Shape b = ctx.shape(1);
    if (a_vec) a.insert(a.begin(), Dim(1));
    if (b_vec) b.push_back(Dim(1));
    const Dim& k_a = a.back();
    const Dim& k_b = b[b.size() - 2];
    if (k_a != k_b) {
      return InferResult::fail(str("inner dims differ: a has K = ", to_string(k_a, &ctx.syms()),
                                   ", b has K = ", to_string(k_b, &ctx.syms())));
    }
    Shape out = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), ctx.syms());
    if (!a_vec) out.push_back(a[a.size() - 2]);
    if (!b_vec) out.push_back(b.back());
    if (out.size() > kMaxRank) return InferResult::fail("result rank exceeds 8");
    return InferResult::success(dtype, std::move(out));
  };
  return s;
}

std::vector<InputSpec> linear_inputs() {
  return {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1},
          {.name = "weight", .dtypes = kWeightTypes, .min_rank = 2, .max_rank = 2},
          {.name = "bias", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1, .optional = true}};
}

InferResult infer_linear(const InferContext& ctx) {
  const TensorType& w = ctx.type(1);
  if (w.dtype != DType::q4gsw && w.dtype != ctx.dtype(0)) {
    return InferResult::fail(str("weight is ", w.dtype, " but x is ", ctx.dtype(0),
                                 " (the weight must match x or be q4gsw)"));
  }
  if (ctx.shape(0).back() != w.shape[1]) {
    return InferResult::fail(str("x has ", to_string(ctx.shape(0).back(), &ctx.syms()),
                                 " input features but weight ", to_string(w.shape, &ctx.syms()),
                                 " expects ", to_string(w.shape[1], &ctx.syms())));
  }
  check_channel_param(ctx, 2, w.shape[0]);
  Shape out = ctx.shape(0);
  out.back() = w.shape[0];
  return InferResult::success(ctx.dtype(0), std::move(out));
}

// linear(x [..., in], weight [out, in], [bias [out]]) -> [..., out] in x's dtype. The weight is
// x's dtype or q4gsw.
OpSchema linear() {
  OpSchema s;
  s.name = "linear";
  s.inputs = linear_inputs();
  s.infer = infer_linear;
  return s;
}

// linear_swiglu(x [..., in], weight [2n, in], [bias [2n]]) -> [..., n]: the gated MLP's input
// side in one product. The weight's rows interleave the gate and up projections (gate row j at
// 2j, up row j at 2j + 1), and y_j = silu(x . w_2j + b_2j) * (x . w_2j+1 + b_2j+1).
OpSchema linear_swiglu() {
  OpSchema s;
  s.name = "linear_swiglu";
  s.inputs = linear_inputs();
  s.infer = [](const InferContext& ctx) {
    InferResult r = infer_linear(ctx);
    if (!r.error.empty()) return r;
    const Dim rows = ctx.type(1).shape[0];
    if (!rows.is_const() || rows.value() % 2 != 0) {
      return InferResult::fail(str("the weight's rows (", to_string(rows, &ctx.syms()),
                                   ") must be a constant even number: gate and up rows interleaved"));
    }
    r.outputs[0].shape.back() = Dim(rows.value() / 2);
    return r;
  };
  return s;
}

// conv1d(x [N, Cin, L], weight [Cout, Cin, K], [bias [Cout]]) -> [N, Cout, Lout], as
// torch.nn.functional.conv1d computes it (a cross-correlation): stride, zero padding on both
// sides, dilation; groups = 1 only. Lout = floor((L + 2 padding - dilation (K - 1) - 1) / stride)
// + 1. L may be symbolic when stride divides its coefficient (Lout stays affine in the sym).
OpSchema conv1d() {
  OpSchema s;
  s.name = "conv1d";
  const DTypeSet dtypes{DType::f32, DType::f16};
  s.inputs = {{.name = "x", .dtypes = dtypes, .min_rank = 3, .max_rank = 3},
              {.name = "weight", .dtypes = dtypes, .min_rank = 3, .max_rank = 3},
              {.name = "bias", .dtypes = dtypes, .min_rank = 1, .max_rank = 1, .optional = true}};
  s.attrs = {AttrSpec::defaulted("stride", int64_t{1}), AttrSpec::defaulted("padding", int64_t{0}),
             AttrSpec::defaulted("dilation", int64_t{1}), AttrSpec::defaulted("groups", int64_t{1})};
  s.infer = [](const InferContext& ctx) {
    const int64_t stride = ctx.attr_int("stride"), padding = ctx.attr_int("padding");
    const int64_t dilation = ctx.attr_int("dilation"), groups = ctx.attr_int("groups");
    if (groups != 1) return InferResult::fail(str("groups = ", groups, " is not supported (only 1)"));
    if (stride < 1 || dilation < 1 || padding < 0) {
      return InferResult::fail(str("stride (", stride, ") and dilation (", dilation, ") must be >= 1, padding (",
                                   padding, ") >= 0"));
    }
    const Shape& x = ctx.shape(0);
    const Shape& w = ctx.shape(1);
    if (ctx.dtype(1) != ctx.dtype(0)) {
      return InferResult::fail(str("weight is ", ctx.dtype(1), " but x is ", ctx.dtype(0)));
    }
    if (x[1] != w[1]) {
      return InferResult::fail(str("x has ", to_string(x[1], &ctx.syms()), " input channels but weight ",
                                   shape_text(ctx, w), " expects ", to_string(w[1], &ctx.syms())));
    }
    if (!w[2].is_const() || w[2].value() < 1) {
      return InferResult::fail(str("the kernel size K (", to_string(w[2], &ctx.syms()), ") must be a constant >= 1"));
    }
    check_channel_param(ctx, 2, w[0]);
    // Lout = floor((L + span) / stride) + 1, span = 2 padding - dilation (K - 1) - 1. With L =
    // coef * sym + offset and stride dividing coef, that is coef / stride * sym + floor((offset +
    // span) / stride) + 1.
    const int64_t span = 2 * padding - dilation * (w[2].value() - 1) - 1;
    const Dim& l = x[2];
    if (l.coef() % stride != 0) {
      return InferResult::fail(str("L = ", to_string(l, &ctx.syms()), " is symbolic and stride ", stride,
                                   " does not divide its coefficient: Lout would not be affine in the sym"));
    }
    const int64_t num = l.offset() + span;
    const int64_t floor_div = num >= 0 ? num / stride : -((-num + stride - 1) / stride);
    const Dim lout = Dim::affine(l.coef() / stride, l.sym(), floor_div + 1);
    if (lout.min_value(ctx.syms()) < 1) {
      return InferResult::fail(str("the output length Lout = floor((L + 2 padding - dilation (K - 1) - 1) / stride) + 1 is ",
                                   lout.min_value(ctx.syms()), " for L = ", l.min_value(ctx.syms()), ", K = ",
                                   w[2].value(), ", padding ", padding, ", dilation ", dilation, ", stride ", stride,
                                   "; it must be >= 1"));
    }
    return InferResult::success(ctx.dtype(0), Shape{x[0], w[0], lout});
  };
  return s;
}

}  // namespace

void register_nn(OpRegistry& r) {
  r.add(norm("rms_norm", false, 1e-6));
  r.add(norm("layer_norm", true, 1e-5));
  r.add(embedding());
  r.add(matmul());
  r.add(linear());
  r.add(linear_swiglu());
  r.add(conv1d());
}

}  // namespace wgx::graph::schemas
