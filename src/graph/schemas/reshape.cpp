// reshape and expand: the ops whose target sizes come from an attribute and may be symbolic.
#include <algorithm>

#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

// The Dim that stands for -1: the input's element count divided by the other target sizes. It
// must be one Dim (a constant, or a constant times one factor), else the reshape is refused.
Dim infer_missing(const InferContext& ctx, const SymProduct& in, const SymProduct& rest) {
  if (rest.constant == 0) throw GraphError("cannot infer -1 next to a size of 0");
  if (in.constant % rest.constant != 0) {
    throw GraphError(
        str("cannot infer -1: ", in.constant, " is not a multiple of ", rest.constant));
  }
  std::vector<Dim> left = in.factors;
  for (const Dim& f : rest.factors) {
    auto it = std::find(left.begin(), left.end(), f);
    if (it == left.end()) {
      throw GraphError(str("cannot infer -1: the input has no factor ", to_string(f, &ctx.syms())));
    }
    left.erase(it);
  }
  const int64_t k = in.constant / rest.constant;
  if (left.empty()) return Dim(k);
  if (left.size() > 1) throw GraphError("cannot infer -1: it would be a product of symbolic sizes");
  auto d = scale(left[0], k);
  if (!d) throw GraphError("cannot infer -1: size overflows");
  return *d;
}

// reshape(x, shape): the same elements in a new shape; one entry may be -1. Element counts must
// match for every sym value (compared as factored polynomials), which covers keeping sym dims in
// place while constant dims are split or merged, and moving a sym between dims.
OpSchema reshape() {
  OpSchema s;
  s.name = "reshape";
  s.inputs = {{.name = "x", .dtypes = kAllTypes}};
  s.attrs = {AttrSpec::required("shape", AttrKind::Dims)};
  s.infer = [](const InferContext& ctx) {
    Shape target = dims_attr(ctx, "shape");
    const auto infer_count = std::count(target.begin(), target.end(), Dim(-1));
    if (infer_count > 1) return InferResult::fail("shape has more than one -1");
    const SymProduct in = element_product(ctx.shape(0));
    Shape known;
    for (const Dim& d : target) {
      if (!d.is_const(-1)) known.push_back(d);
    }
    const SymProduct rest = element_product(known);
    if (infer_count == 1) {
      std::replace(target.begin(), target.end(), Dim(-1), infer_missing(ctx, in, rest));
    } else if (in != rest) {
      return InferResult::fail(str("cannot reshape ", shape_text(ctx, ctx.shape(0)), " to ",
                                   shape_text(ctx, target), ": element counts differ"));
    }
    return InferResult::success(ctx.dtype(0), std::move(target));
  };
  return s;
}

// expand(x, sizes): broadcast x to `sizes`; -1 keeps a dim, new dims may only be added in front.
OpSchema expand() {
  OpSchema s;
  s.name = "expand";
  s.inputs = {{.name = "x", .dtypes = kAllTypes}};
  s.attrs = {AttrSpec::required("sizes", AttrKind::Dims)};
  s.infer = [](const InferContext& ctx) {
    const Shape sizes = dims_attr(ctx, "sizes");
    const Shape& in = ctx.shape(0);
    if (sizes.size() < in.size()) {
      return InferResult::fail(str("sizes has ", sizes.size(), " entries for rank ", in.size()));
    }
    const size_t lead = sizes.size() - in.size();
    Shape out;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const Dim& want = sizes[i];
      if (i < lead) {
        if (want.is_const(-1)) return InferResult::fail(str("new dim ", i, " cannot be -1"));
        out.push_back(want);
        continue;
      }
      const Dim& have = in[i - lead];
      if (want.is_const(-1) || want == have) {
        out.push_back(have);
      } else if (have.is_const(1)) {
        out.push_back(want);
      } else {
        return InferResult::fail(str("cannot expand dim ", i - lead, " of size ",
                                     to_string(have, &ctx.syms()), " to ",
                                     to_string(want, &ctx.syms())));
      }
    }
    return InferResult::success(ctx.dtype(0), std::move(out));
  };
  return s;
}

}  // namespace

void register_reshape(OpRegistry& r) {
  r.add(reshape());
  r.add(expand());
}

}  // namespace wgx::graph::schemas
