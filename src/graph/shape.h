// Symbolic sizes. A SymInt is a named run-time integer (seq_len, input_pos) with an inclusive
// range; the runtime allocates at the range's max. A Dim is a constant or `coef * sym + offset`,
// affine in one SymInt; a Shape is a list of Dims. Dims are kept in one canonical form, so two Dims
// are equal exactly when their fields are equal.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wgx::graph {

// Index of a SymInt in the graph's sym table.
struct SymId {
  uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(SymId, SymId) = default;
};

struct SymInt {
  std::string name;
  int64_t min = 0;  // inclusive
  int64_t max = 0;  // inclusive; the runtime allocates for this value
  friend bool operator==(const SymInt&, const SymInt&) = default;
};
using SymTable = std::vector<SymInt>;

// Sizes (and sym ranges) stay within [0, kMaxDimSize]: kernels index with 32-bit integers.
inline constexpr int64_t kMaxDimSize = (int64_t{1} << 31) - 1;
inline constexpr size_t kMaxRank = 8;

class Dim {
 public:
  constexpr Dim() = default;
  // Implicit, so that Shape{1, seq, 64} reads like the sizes it holds.
  constexpr Dim(int64_t value) : offset_(value) {}   // NOLINT
  constexpr Dim(SymId sym) : coef_(1), sym_(sym) {}  // NOLINT
  // coef * sym + offset; coef == 0 gives the constant `offset`.
  static constexpr Dim affine(int64_t coef, SymId sym, int64_t offset) {
    Dim d(offset);
    if (coef != 0) {
      d.coef_ = coef;
      d.sym_ = sym;
    }
    return d;
  }

  constexpr bool is_const() const { return coef_ == 0; }
  // The constant value; for a symbolic Dim, its offset.
  constexpr int64_t value() const { return offset_; }
  constexpr int64_t coef() const { return coef_; }
  constexpr SymId sym() const { return sym_; }
  constexpr int64_t offset() const { return offset_; }
  constexpr bool is_const(int64_t v) const { return is_const() && offset_ == v; }
  friend constexpr bool operator==(const Dim&, const Dim&) = default;

  // The size for the given sym values (indexed by SymId). Throws GraphError when a sym is missing
  // or the arithmetic overflows.
  int64_t eval(std::span<const int64_t> sym_values) const;
  // Smallest and largest size over the sym's range (affine, so reached at its ends).
  int64_t min_value(const SymTable& syms) const;
  int64_t max_value(const SymTable& syms) const;
  // The sym value for which this Dim equals `size`, if there is an integer one.
  std::optional<int64_t> solve(int64_t size) const;

 private:
  int64_t coef_ = 0;
  SymId sym_{};
  int64_t offset_ = 0;
};

using Shape = std::vector<Dim>;

// Dim arithmetic; nothing when the result is not affine in one sym or overflows.
std::optional<Dim> add(const Dim& a, const Dim& b);
std::optional<Dim> sub(const Dim& a, const Dim& b);
std::optional<Dim> scale(const Dim& a, int64_t k);

// An empty string when `d` is well formed for `syms` (sym in range, every value in the range
// within [0, kMaxDimSize]); otherwise what is wrong.
std::string dim_error(const Dim& d, const SymTable& syms);

bool is_static(const Shape& shape);
// Sizes for the given sym values, and at every sym's max (what the runtime allocates).
std::vector<int64_t> eval_shape(const Shape& shape, std::span<const int64_t> sym_values);
std::vector<int64_t> max_shape(const Shape& shape, const SymTable& syms);
// Element count of a shape at its max (1 for rank 0); nothing on overflow.
std::optional<int64_t> max_numel(const Shape& shape, const SymTable& syms);

// "2048", "seq_len", "2*seq_len+1"; without a table syms print as s0, s1, ...
std::string to_string(const Dim& d, const SymTable* syms = nullptr);
// "[1, seq_len, 2048]"
std::string to_string(const Shape& shape, const SymTable* syms = nullptr);

}  // namespace wgx::graph
