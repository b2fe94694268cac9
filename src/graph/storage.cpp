#include "graph/storage.h"

#include <cstring>
#include <limits>

#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

DType storage_dtype(DType dtype, const StoragePolicy& policy) {
  if (dtype == DType::bf16) {
    if (policy.bf16_as != DType::f32 && policy.bf16_as != DType::f16) {
      throw GraphError(str("bf16 can be stored as f32 or f16, not ", policy.bf16_as));
    }
    return policy.bf16_as;
  }
  if (dtype == DType::i64) return DType::i32;
  return dtype;
}

TensorType storage_type(const TensorType& type, const StoragePolicy& policy) {
  TensorType out = type;
  out.dtype = storage_dtype(type.dtype, policy);
  return out;
}

bool needs_conversion(DType dtype, const StoragePolicy& policy) {
  return storage_dtype(dtype, policy) != dtype;
}

uint16_t f32_to_f16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  const uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    // Subnormal half: the value is m * 2^-24 with m = full mantissa >> (14 - e).
    const uint32_t full = mant | 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t h = full >> shift;
    const uint32_t rem = full & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  // A carry out of the mantissa bumps the exponent, up to infinity: exactly what rounding wants.
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    float f = static_cast<float>(mant) * 5.9604644775390625e-08f;  // mant * 2^-24, exact
    return sign ? -f : f;
  }
  if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::vector<uint8_t> convert_for_storage(std::string_view tensor, DType dtype,
                                         std::span<const uint8_t> bytes,
                                         const StoragePolicy& policy) {
  const DType out_dtype = storage_dtype(dtype, policy);
  if (out_dtype == dtype) return std::vector<uint8_t>(bytes.begin(), bytes.end());
  const uint32_t in_size = element_bytes(dtype);
  if (bytes.size() % in_size != 0) {
    throw GraphError(str("constant '", tensor, "': ", bytes.size(),
                         " bytes is not a whole number of ", dtype, " elements"));
  }
  const size_t n = bytes.size() / in_size;
  std::vector<uint8_t> out(n * element_bytes(out_dtype));
  for (size_t i = 0; i < n; ++i) {
    if (dtype == DType::i64) {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        throw GraphError(str("constant '", tensor, "': element ", i, " = ", v,
                             " does not fit in i32 (i64 is stored as i32)"));
      }
      const int32_t w = static_cast<int32_t>(v);
      std::memcpy(out.data() + 4 * i, &w, 4);
      continue;
    }
    // bf16 -> f32 or f16
    uint16_t b;
    std::memcpy(&b, bytes.data() + 2 * i, 2);
    const float f = bf16_to_f32(b);
    if (out_dtype == DType::f32) {
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const uint16_t h = f32_to_f16(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

}  // namespace wgx::graph
