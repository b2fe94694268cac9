// Element types. The numeric codes are part of the .wgx file format: never renumber them.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace wgx::graph {

enum class DType : uint8_t {
  f32 = 1,
  f16 = 2,
  bf16 = 3,
  i32 = 4,
  i64 = 5,
  u8 = 6,
  boolean = 7,
  // 4-bit group-wise symmetric quantized weights. The group size and the scale type live in the
  // tensor type (QuantParams); the byte layout is described by q4gsw_layout() in graph.h.
  q4gsw = 8,
};

constexpr uint8_t kMaxDTypeCode = 8;

// "f32", "f16", "bf16", "i32", "i64", "u8", "bool", "q4gsw".
const char* dtype_name(DType dtype);
std::optional<DType> dtype_from_name(std::string_view name);
// The dtype a file code stands for, or nothing for an unknown code.
std::optional<DType> dtype_from_code(uint8_t code);

// Bytes per element; 0 for q4gsw, whose size depends on the whole tensor (see tensor_bytes()).
uint32_t element_bytes(DType dtype);

bool is_float(DType dtype);    // f32, f16, bf16
bool is_integer(DType dtype);  // i32, i64, u8

// Sets of dtypes, for op schemas: a bit per dtype code.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= bit(d);
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr DTypeSet operator|(DTypeSet o) const { return from_bits(bits_ | o.bits_); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }

 private:
  static constexpr uint32_t bit(DType d) { return 1u << static_cast<uint32_t>(d); }
  static constexpr DTypeSet from_bits(uint32_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DType::f32, DType::f16, DType::bf16};
inline constexpr DTypeSet kIntTypes{DType::i32, DType::i64, DType::u8};
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kBoolTypes{DType::boolean};
// Every dtype an activation can have (q4gsw only ever appears as a weight).
inline constexpr DTypeSet kAllTypes = kNumericTypes | kBoolTypes;
inline constexpr DTypeSet kIndexTypes{DType::i32, DType::i64};
inline constexpr DTypeSet kWeightTypes = kFloatTypes | DTypeSet{DType::q4gsw};

inline std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }
// "f32, f16" for error messages.
std::ostream& operator<<(std::ostream& os, DTypeSet set);

}  // namespace wgx::graph
