// Reductions over dims, and the softmax family (which reduces internally but keeps the shape).
#include <algorithm>

#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

// The dims to reduce, normalized, each once. Absent or empty "dims" reduces every dim.
std::vector<bool> reduced_dims(const InferContext& ctx) {
  const size_t rank = ctx.rank(0);
  std::vector<bool> reduce(rank, false);
  if (!ctx.has("dims") || ctx.attr_ints("dims").empty()) {
    reduce.assign(rank, true);
    return reduce;
  }
  for (int64_t d : ctx.attr_ints("dims")) {
    const size_t i = norm_dim(d, rank);
    if (reduce[i]) throw GraphError(str("dim ", d, " is listed twice"));
    reduce[i] = true;
  }
  return reduce;
}

Shape reduce_shape(const InferContext& ctx, const std::vector<bool>& reduce, bool need_nonempty) {
  Shape out;
  for (size_t i = 0; i < reduce.size(); ++i) {
    const Dim& d = ctx.shape(0)[i];
    if (!reduce[i]) {
      out.push_back(d);
      continue;
    }
    // A max/min/argmax over nothing has no answer; sum and mean of nothing do (0 and NaN).
    if (need_nonempty && d.min_value(ctx.syms()) < 1) {
      throw GraphError(str("reduced dim ", i, " (", to_string(d, &ctx.syms()), ") may be empty"));
    }
    if (ctx.attr_bool("keepdim")) out.push_back(Dim(1));
  }
  return out;
}

// amax, amin, sum, mean: dims (empty: all), keepdim.
OpSchema reduction(std::string name, DTypeSet dtypes, bool need_nonempty) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "x", .dtypes = dtypes}};
  s.attrs = {AttrSpec::optional("dims", AttrKind::Ints), AttrSpec::defaulted("keepdim", false)};
  const bool is_sum = s.name == "sum";
  s.infer = [need_nonempty, is_sum](const InferContext& ctx) {
    Shape shape = reduce_shape(ctx, reduced_dims(ctx), need_nonempty);
    DType dtype = ctx.dtype(0);
    // Sums of small integers and bools widen to i32, the narrowest type that is stored natively.
    if (is_sum && (dtype == DType::u8 || dtype == DType::boolean)) dtype = DType::i32;
    return InferResult::success(dtype, std::move(shape));
  };
  return s;
}

OpSchema argmax() {
  OpSchema s;
  s.name = "argmax";
  s.inputs = {{.name = "x", .dtypes = kNumericTypes, .min_rank = 1}};
  s.attrs = {AttrSpec::required("dim", AttrKind::Int), AttrSpec::defaulted("keepdim", false)};
  s.infer = [](const InferContext& ctx) {
    std::vector<bool> reduce(ctx.rank(0), false);
    reduce[norm_dim(ctx.attr_int("dim"), ctx.rank(0))] = true;
    return InferResult::success(DType::i32, reduce_shape(ctx, reduce, true));
  };
  return s;
}

OpSchema softmax(std::string name) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1}};
  s.attrs = {AttrSpec::required("dim", AttrKind::Int)};
  s.infer = [](const InferContext& ctx) {
    norm_dim(ctx.attr_int("dim"), ctx.rank(0));
    return InferResult::success(ctx.type(0));
  };
  return s;
}

}  // namespace

void register_reductions(OpRegistry& r) {
  r.add(reduction("amax", kNumericTypes, true));
  r.add(reduction("amin", kNumericTypes, true));
  r.add(reduction("sum", kNumericTypes | kBoolTypes, false));
  r.add(reduction("mean", kFloatTypes, false));
  r.add(argmax());
  r.add(softmax("softmax"));
  r.add(softmax("log_softmax"));
}

}  // namespace wgx::graph::schemas
