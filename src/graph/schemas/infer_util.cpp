#include "graph/schemas/infer_util.h"

#include <algorithm>
#include <numeric>

#include "graph/checked.h"
#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

size_t norm_dim(int64_t dim, size_t rank, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) {
    throw GraphError(str(what, " ", dim, " is out of range for rank ", rank));
  }
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

Shape broadcast(const Shape& a, const Shape& b, const SymTable& syms) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Position i counts from the left of the result; the inputs align on the right.
    const Dim* da = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Dim* db = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (!da || (db && da->is_const(1))) {
      out[i] = *db;
    } else if (!db || db->is_const(1) || *da == *db) {
      out[i] = *da;
    } else {
      throw GraphError(str("shapes ", to_string(a, &syms), " and ", to_string(b, &syms),
                           " do not broadcast: ", to_string(*da, &syms), " vs ",
                           to_string(*db, &syms)));
    }
  }
  return out;
}

namespace {
bool scalar_fits(DType scalar, DType tensor) {
  if (is_float(tensor)) return scalar != DType::boolean;
  if (is_integer(tensor)) return is_integer(scalar);
  return scalar == tensor;
}
}  // namespace

DType common_dtype(const InferContext& ctx, std::initializer_list<size_t> which) {
  const size_t* first_tensor = nullptr;
  for (const size_t& i : which) {
    if (!ctx.is_tensor(i)) continue;
    if (!first_tensor) {
      first_tensor = &i;
    } else if (ctx.dtype(i) != ctx.dtype(*first_tensor)) {
      throw GraphError(str("input ", *first_tensor, " is ", ctx.dtype(*first_tensor), " but input ",
                           i, " is ", ctx.dtype(i), " (convert one with to_copy)"));
    }
  }
  const DType want = ctx.dtype(first_tensor ? *first_tensor : *which.begin());
  for (size_t i : which) {
    if (ctx.is_tensor(i)) continue;
    const bool ok = first_tensor ? scalar_fits(ctx.dtype(i), want) : ctx.dtype(i) == want;
    if (!ok)
      throw GraphError(
          str("input ", i, " is a ", ctx.dtype(i), " scalar; it cannot combine with ", want));
  }
  return want;
}

SymProduct element_product(const Shape& shape) {
  SymProduct p;
  auto times = [&](int64_t k) {
    auto m = checked_mul(p.constant, k);
    if (!m) throw GraphError("element count overflows");
    p.constant = *m;
  };
  for (const Dim& d : shape) {
    if (d.is_const()) {
      times(d.value());
      continue;
    }
    if (d.coef() == INT64_MIN || d.offset() == INT64_MIN) throw GraphError("size out of range");
    int64_t g = std::gcd(d.coef(), d.offset());  // > 0 because coef != 0
    if (d.coef() < 0) g = -g;
    times(g);
    p.factors.push_back(Dim::affine(d.coef() / g, d.sym(), d.offset() / g));
  }
  if (p.constant == 0) p.factors.clear();
  std::sort(p.factors.begin(), p.factors.end(), [](const Dim& x, const Dim& y) {
    if (x.sym().index != y.sym().index) return x.sym().index < y.sym().index;
    if (x.coef() != y.coef()) return x.coef() < y.coef();
    return x.offset() < y.offset();
  });
  return p;
}

Shape dims_attr(const InferContext& ctx, std::string_view name) {
  const Shape& dims = ctx.attr_dims(name);
  if (dims.size() > kMaxRank) {
    throw GraphError(
        str("attribute '", name, "' has ", dims.size(), " sizes, more than ", kMaxRank));
  }
  for (const Dim& d : dims) {
    if (d.is_const(-1)) continue;
    std::string err = dim_error(d, ctx.syms());
    if (!err.empty()) throw GraphError(str("attribute '", name, "': ", err));
  }
  return dims;
}

std::string shape_text(const InferContext& ctx, const Shape& shape) {
  return to_string(shape, &ctx.syms());
}

}  // namespace wgx::graph::schemas
