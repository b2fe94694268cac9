// slice and select. On a constant dim they follow Python's rules (negative indices count from the
// end, slice bounds clamp). On a symbolic dim the result must be one Dim for every sym value, so a
// bound is accepted only where the clamping it needs is the same over the whole sym range.
#include <limits>

#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

Dim slice_const(int64_t n, int64_t start, int64_t end, int64_t step) {
  auto bound = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, 0) : std::min(v, n); };
  const int64_t s = bound(start);
  const int64_t e = bound(end);
  return Dim(e > s ? ceil_div(e - s, step) : 0);
}

// A slice bound on the symbolic dim `n`, clamped to [0, n]; refused where the clamp would depend
// on the sym's value.
Dim sym_bound(const InferContext& ctx, const Dim& n, int64_t v, const char* what) {
  const int64_t lo = n.min_value(ctx.syms());
  const int64_t hi = n.max_value(ctx.syms());
  if (v >= 0) {
    if (v >= hi) return n;
    if (v <= lo) return Dim(v);
  } else {
    if (lo + v >= 0) return *add(n, Dim(v));  // n's range is small, so this cannot overflow
    if (hi + v <= 0) return Dim(0);
  }
  throw GraphError(str(what, " ", v, " on ", to_string(n, &ctx.syms()), " (range [", lo, ", ", hi,
                       "]) clamps differently across the range"));
}

Dim slice_sym(const InferContext& ctx, const Dim& n, int64_t start, int64_t end, int64_t step) {
  const Dim s = sym_bound(ctx, n, start, "start");
  const Dim e = sym_bound(ctx, n, end, "end");
  auto len = sub(e, s);
  if (!len) throw GraphError("slice length is not one affine size");
  if (len->min_value(ctx.syms()) < 0) {
    if (len->max_value(ctx.syms()) > 0) {
      throw GraphError(
          str("slice length ", to_string(*len, &ctx.syms()), " is negative for some values"));
    }
    return Dim(0);
  }
  if (step == 1) return *len;
  if (len->is_const()) return Dim(ceil_div(len->value(), step));
  throw GraphError(str("step ", step, " on a symbolic length (", to_string(*len, &ctx.syms()),
                       ") is not an affine size"));
}

// slice(x; dim, start, end, step): end defaults to "to the end" and is clamped.
OpSchema slice() {
  OpSchema s;
  s.name = "slice";
  s.inputs = {{.name = "x", .dtypes = kAllTypes, .min_rank = 1}};
  s.attrs = {AttrSpec::defaulted("dim", 0), AttrSpec::defaulted("start", 0),
             AttrSpec::defaulted("end", std::numeric_limits<int64_t>::max()),
             AttrSpec::defaulted("step", 1)};
  s.infer = [](const InferContext& ctx) {
    const int64_t step = ctx.attr_int("step");
    if (step < 1) return InferResult::fail(str("step ", step, " must be >= 1"));
    Shape out = ctx.shape(0);
    const size_t axis = norm_dim(ctx.attr_int("dim"), out.size());
    const Dim& n = out[axis];
    const int64_t start = ctx.attr_int("start");
    const int64_t end = ctx.attr_int("end");
    out[axis] = n.is_const() ? slice_const(n.value(), start, end, step)
                             : slice_sym(ctx, n, start, end, step);
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

// select(x; dim, index): drops dim, keeping entry `index` (negative counts from the end).
OpSchema select() {
  OpSchema s;
  s.name = "select";
  s.inputs = {{.name = "x", .dtypes = kAllTypes, .min_rank = 1}};
  s.attrs = {AttrSpec::required("dim", AttrKind::Int), AttrSpec::required("index", AttrKind::Int)};
  s.infer = [](const InferContext& ctx) {
    Shape out = ctx.shape(0);
    const size_t axis = norm_dim(ctx.attr_int("dim"), out.size());
    const int64_t index = ctx.attr_int("index");
    // The index must be in range for every value of the dim, i.e. for its smallest one.
    const int64_t smallest = out[axis].min_value(ctx.syms());
    if (index >= smallest || index < -smallest) {
      return InferResult::fail(str("index ", index, " is out of range for dim ", axis, " of size ",
                                   to_string(out[axis], &ctx.syms())));
    }
    out.erase(out.begin() + static_cast<ptrdiff_t>(axis));
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

}  // namespace

void register_indexing(OpRegistry& r) {
  r.add(slice());
  r.add(select());
}

}  // namespace wgx::graph::schemas
