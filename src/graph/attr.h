// Node attributes: a small tagged value (int64, double, string, list of int64, list of double,
// bool, or a symbolic shape) keyed by name. The kind codes are part of the .wgx file format.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "graph/shape.h"

namespace wgx::graph {

enum class AttrKind : uint8_t {
  Int = 1,
  Float = 2,
  String = 3,
  Ints = 4,
  Floats = 5,
  Bool = 6,
  Dims = 7,  // a Shape: sizes that may be symbolic (reshape, expand)
};
constexpr uint8_t kMaxAttrKindCode = 7;

const char* attr_kind_name(AttrKind kind);

class Attr {
 public:
  Attr(int v) : v_(int64_t{v}) {}              // NOLINT: attributes read like literals: {"dim", -1}
  Attr(int64_t v) : v_(v) {}                   // NOLINT
  Attr(double v) : v_(v) {}                    // NOLINT
  Attr(bool v) : v_(v) {}                      // NOLINT
  Attr(const char* v) : v_(std::string(v)) {}  // NOLINT
  Attr(std::string v) : v_(std::move(v)) {}    // NOLINT
  Attr(std::vector<int64_t> v) : v_(std::move(v)) {}                       // NOLINT
  Attr(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}  // NOLINT
  Attr(std::vector<double> v) : v_(std::move(v)) {}                        // NOLINT
  Attr(Shape v) : v_(std::move(v)) {}                                      // NOLINT

  AttrKind kind() const;
  // Accessors throw GraphError when the kind differs.
  int64_t as_int() const;
  double as_float() const;
  const std::string& as_string() const;
  const std::vector<int64_t>& as_ints() const;
  const std::vector<double>& as_floats() const;
  bool as_bool() const;
  const Shape& as_dims() const;

  friend bool operator==(const Attr&, const Attr&) = default;

 private:
  // Alternative order follows AttrKind (index + 1 == code).
  std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, bool, Shape>
      v_;
};

// Sorted by name, so printing and serialization are deterministic.
using Attrs = std::map<std::string, Attr, std::less<>>;

// "-1", "1e-05", "\"tanh\"", "[0, 2, 1, 3]", "true", "[1, seq_len, 32, 64]"
std::string to_string(const Attr& attr, const SymTable* syms = nullptr);

}  // namespace wgx::graph
