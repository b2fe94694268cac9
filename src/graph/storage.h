// How graph dtypes are stored on the device. A graph keeps the dtypes the model was exported with;
// the runtime maps every value through storage_dtype(), so types that were equal stay equal:
//   bf16 -> f32 (or f16, by policy): WGSL has no bf16.
//   i64  -> i32: WGSL has no 64-bit integers; constants are narrowed on load with a range check.
// Everything else is stored as it is.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "graph/dtype.h"
#include "graph/graph.h"

namespace wgx::graph {

struct StoragePolicy {
  DType bf16_as = DType::f32;  // f32 or f16
};

DType storage_dtype(DType dtype, const StoragePolicy& policy = {});
TensorType storage_type(const TensorType& type, const StoragePolicy& policy = {});
// True when storage_dtype() differs, i.e. a constant's bytes must be converted on load.
bool needs_conversion(DType dtype, const StoragePolicy& policy = {});

// Converts a constant's bytes (little-endian, `dtype`) to its storage dtype. Throws GraphError
// naming `tensor` when an i64 element is outside the i32 range or the byte count is not a whole
// number of elements.
std::vector<uint8_t> convert_for_storage(std::string_view tensor, DType dtype,
                                         std::span<const uint8_t> bytes,
                                         const StoragePolicy& policy = {});

// Scalar conversions (round to nearest even; NaN stays NaN, overflow becomes infinity).
uint16_t f32_to_f16(float value);
float f16_to_f32(uint16_t bits);
// bf16 is f32's upper half: inline, as loading converts billions of them.
inline float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace wgx::graph
