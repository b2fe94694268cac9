// Ops that rearrange dims without computing: permute, transpose, squeeze, unsqueeze, cat,
// contiguous. (reshape and expand are in reshape.cpp, slice and select in indexing.cpp.)
#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

OpSchema one_input(std::string name) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "x", .dtypes = kAllTypes}};
  return s;
}

OpSchema permute() {
  OpSchema s = one_input("permute");
  s.attrs = {AttrSpec::required("dims", AttrKind::Ints)};
  s.infer = [](const InferContext& ctx) {
    const std::vector<int64_t>& dims = ctx.attr_ints("dims");
    if (dims.size() != ctx.rank(0)) {
      return InferResult::fail(str("dims has ", dims.size(), " entries for rank ", ctx.rank(0)));
    }
    std::vector<bool> seen(dims.size(), false);
    Shape out;
    for (int64_t d : dims) {
      const size_t i = norm_dim(d, ctx.rank(0));
      if (seen[i]) return InferResult::fail(str("dims is not a permutation: ", d, " repeats"));
      seen[i] = true;
      out.push_back(ctx.shape(0)[i]);
    }
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

OpSchema transpose() {
  OpSchema s = one_input("transpose");
  s.attrs = {AttrSpec::required("dim0", AttrKind::Int), AttrSpec::required("dim1", AttrKind::Int)};
  s.infer = [](const InferContext& ctx) {
    Shape out = ctx.shape(0);
    std::swap(out[norm_dim(ctx.attr_int("dim0"), out.size(), "dim0")],
              out[norm_dim(ctx.attr_int("dim1"), out.size(), "dim1")]);
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

// squeeze(x, [dim]): without dim, drops every constant-1 dim. With dim, drops it when it is 1
// and (as torch does) leaves x unchanged when it is another constant; a symbolic dim whose range
// includes 1 is refused, since the result rank would depend on the run-time value.
OpSchema squeeze() {
  OpSchema s = one_input("squeeze");
  s.attrs = {AttrSpec::optional("dim", AttrKind::Int)};
  s.infer = [](const InferContext& ctx) {
    const Shape& in = ctx.shape(0);
    Shape out;
    if (!ctx.has("dim")) {
      for (const Dim& d : in) {
        if (!d.is_const(1)) out.push_back(d);
      }
      return InferResult::success(ctx.dtype(0), std::move(out));
    }
    const size_t i = norm_dim(ctx.attr_int("dim"), in.size());
    if (!in[i].is_const() && in[i].min_value(ctx.syms()) <= 1) {
      return InferResult::fail(
          str("dim ", i, " (", to_string(in[i], &ctx.syms()), ") is symbolic and may be 1"));
    }
    out = in;
    if (in[i].is_const(1)) out.erase(out.begin() + static_cast<ptrdiff_t>(i));
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

OpSchema unsqueeze() {
  OpSchema s = one_input("unsqueeze");
  s.inputs[0].max_rank = kMaxRank - 1;
  s.attrs = {AttrSpec::required("dim", AttrKind::Int)};
  s.infer = [](const InferContext& ctx) {
    Shape out = ctx.shape(0);
    const size_t i = norm_dim(ctx.attr_int("dim"), out.size() + 1);
    out.insert(out.begin() + static_cast<ptrdiff_t>(i), Dim(1));
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

// cat(x...; dim): sizes along dim add up, which must stay one Dim (constants, or one sym).
OpSchema cat() {
  OpSchema s;
  s.name = "cat";
  s.inputs = {{.name = "x", .dtypes = kAllTypes, .min_rank = 1, .variadic = true}};
  s.attrs = {AttrSpec::defaulted("dim", 0)};
  s.infer = [](const InferContext& ctx) {
    const Shape& first = ctx.shape(0);
    const size_t axis = norm_dim(ctx.attr_int("dim"), first.size());
    Shape out = first;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.dtype(i) != ctx.dtype(0)) {
        return InferResult::fail(
            str("input ", i, " is ", ctx.dtype(i), " but input 0 is ", ctx.dtype(0)));
      }
      const Shape& in = ctx.shape(i);
      if (in.size() != first.size()) {
        return InferResult::fail(
            str("input ", i, " has rank ", in.size(), " but input 0 has ", first.size()));
      }
      for (size_t d = 0; d < in.size(); ++d) {
        if (d != axis && in[d] != first[d]) {
          return InferResult::fail(str("input ", i, " ", shape_text(ctx, in),
                                       " differs from input 0 ", shape_text(ctx, first),
                                       " outside dim ", axis));
        }
      }
      auto sum = add(out[axis], in[axis]);
      if (!sum) {
        return InferResult::fail(
            str("sizes along dim ", axis, " (", to_string(out[axis], &ctx.syms()), " + ",
                to_string(in[axis], &ctx.syms()), ") do not add up to one affine size"));
      }
      out[axis] = *sum;
    }
    std::string err = dim_error(out[axis], ctx.syms());
    if (!err.empty()) return InferResult::fail("result " + err);
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

OpSchema contiguous() {
  OpSchema s = one_input("contiguous");
  s.infer = [](const InferContext& ctx) { return InferResult::success(ctx.type(0)); };
  return s;
}

}  // namespace

void register_layout(OpRegistry& r) {
  r.add(permute());
  r.add(transpose());
  r.add(squeeze());
  r.add(unsqueeze());
  r.add(cat());
  r.add(contiguous());
}

}  // namespace wgx::graph::schemas
