#include "graph/shape.h"

#include <sstream>

#include "graph/checked.h"
#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

namespace {
// coef * x + offset, or nothing on overflow.
std::optional<int64_t> affine_at(const Dim& d, int64_t x) {
  auto m = checked_mul(d.coef(), x);
  return m ? checked_add(*m, d.offset()) : std::nullopt;
}

const SymInt& sym_of(const Dim& d, const SymTable& syms) {
  if (d.sym().index >= syms.size())
    throw GraphError(str("dim refers to unknown sym ", d.sym().index));
  return syms[d.sym().index];
}

// The dim at both ends of its sym's range, or nothing on overflow.
std::optional<std::pair<int64_t, int64_t>> ends(const Dim& d, const SymTable& syms) {
  if (d.is_const()) return std::pair{d.value(), d.value()};
  const SymInt& s = sym_of(d, syms);
  auto lo = affine_at(d, s.min);
  auto hi = affine_at(d, s.max);
  if (!lo || !hi) return std::nullopt;
  return std::pair{std::min(*lo, *hi), std::max(*lo, *hi)};
}
}  // namespace

int64_t Dim::eval(std::span<const int64_t> sym_values) const {
  if (is_const()) return offset_;
  if (sym_.index >= sym_values.size()) throw GraphError(str("no value for sym ", sym_.index));
  auto v = affine_at(*this, sym_values[sym_.index]);
  if (!v) throw GraphError("dim evaluation overflows");
  return *v;
}

int64_t Dim::min_value(const SymTable& syms) const {
  auto e = ends(*this, syms);
  if (!e) throw GraphError("dim evaluation overflows");
  return e->first;
}

int64_t Dim::max_value(const SymTable& syms) const {
  auto e = ends(*this, syms);
  if (!e) throw GraphError("dim evaluation overflows");
  return e->second;
}

std::optional<int64_t> Dim::solve(int64_t size) const {
  if (is_const()) return std::nullopt;
  auto diff = checked_add(size, -offset_);
  if (!diff || *diff % coef_ != 0) return std::nullopt;
  return *diff / coef_;
}

std::optional<Dim> add(const Dim& a, const Dim& b) {
  if (!a.is_const() && !b.is_const() && a.sym() != b.sym()) return std::nullopt;
  auto coef = checked_add(a.coef(), b.coef());
  auto offset = checked_add(a.offset(), b.offset());
  if (!coef || !offset) return std::nullopt;
  return Dim::affine(*coef, a.is_const() ? b.sym() : a.sym(), *offset);
}

std::optional<Dim> scale(const Dim& a, int64_t k) {
  auto coef = checked_mul(a.coef(), k);
  auto offset = checked_mul(a.offset(), k);
  if (!coef || !offset) return std::nullopt;
  return Dim::affine(*coef, a.sym(), *offset);
}

std::optional<Dim> sub(const Dim& a, const Dim& b) {
  auto neg = scale(b, -1);
  return neg ? add(a, *neg) : std::nullopt;
}

std::string dim_error(const Dim& d, const SymTable& syms) {
  if (!d.is_const() && d.sym().index >= syms.size()) {
    return str("refers to sym ", d.sym().index, " but the graph has ", syms.size());
  }
  auto e = ends(d, syms);
  if (!e) return str("size ", to_string(d, &syms), " overflows over its sym's range");
  if (e->first < 0 || e->second > kMaxDimSize) {
    return str("size ", to_string(d, &syms), " takes values in [", e->first, ", ", e->second,
               "], outside [0, ", kMaxDimSize, "]");
  }
  return {};
}

bool is_static(const Shape& shape) {
  for (const Dim& d : shape) {
    if (!d.is_const()) return false;
  }
  return true;
}

std::vector<int64_t> eval_shape(const Shape& shape, std::span<const int64_t> sym_values) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(d.eval(sym_values));
  return out;
}

std::vector<int64_t> max_shape(const Shape& shape, const SymTable& syms) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(d.max_value(syms));
  return out;
}

std::optional<int64_t> max_numel(const Shape& shape, const SymTable& syms) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    auto e = ends(d, syms);
    if (!e) return std::nullopt;
    auto m = checked_mul(n, e->second);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

std::string to_string(const Dim& d, const SymTable* syms) {
  if (d.is_const()) return std::to_string(d.value());
  std::ostringstream os;
  if (d.coef() == -1) {
    os << "-";
  } else if (d.coef() != 1) {
    os << d.coef() << "*";
  }
  if (syms && d.sym().index < syms->size()) {
    os << (*syms)[d.sym().index].name;
  } else {
    os << "s" << d.sym().index;
  }
  if (d.offset() > 0) os << "+";
  if (d.offset() != 0) os << d.offset();
  return os.str();
}

std::string to_string(const Shape& shape, const SymTable* syms) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << to_string(shape[i], syms);
  os << "]";
  return os.str();
}

}  // namespace wgx::graph
