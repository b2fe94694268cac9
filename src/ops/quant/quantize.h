// Host-side q4gsw quantization: weights in, bytes in the graph's q4gsw layout out (graph.h,
// Q4Layout), and back again for references.
//
// Symmetric, per group of `group_size` consecutive elements of a row:
//   scale = max |w| over the group / 7, stored in the scale dtype (f32 or f16);
//   q     = clamp(round_half_away(w / scale), -8, 7), stored as the nibble q + 8;
//   value = (nibble - 8) * scale.
// The divisor 7 (not 8) keeps the largest magnitude exactly representable on both sides
// (|q| <= 7), so no element is clamped and every element is within scale / 2 of its input,
// at the price of never using the nibble 0 (q = -8). The quotient uses the scale as stored
// (after rounding to f16), so the bound holds for the stored scale. An all-zero group gets
// scale 0 and nibbles 8 (value 0). Where max|w| / 7 is outside f16's normal range the f16 scale
// saturates at 65504 or loses precision to subnormals, and the scale / 2 bound is no longer
// promised (clamping or flushing to zero); f32 scales have no such limits for finite input.
// Deterministic: the same input gives the same bytes on every platform (IEEE double math).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/dtype.h"

namespace wgx::ops {

// Quantizes `rows` x `cols` row-major floats. Throws std::invalid_argument for a group size
// other than 32/64/128, a scale dtype other than f32/f16, cols not a multiple of the group, or a
// value that is not finite.
std::vector<uint8_t> quantize_q4gsw(const float* w, int64_t rows, int64_t cols, uint32_t group_size,
                                    graph::DType scale_dtype);
// The same from f16 or bf16 bits (converted to f32 first; both convert exactly).
std::vector<uint8_t> quantize_q4gsw_f16(const uint16_t* w, int64_t rows, int64_t cols, uint32_t group_size,
                                        graph::DType scale_dtype);
std::vector<uint8_t> quantize_q4gsw_bf16(const uint16_t* w, int64_t rows, int64_t cols, uint32_t group_size,
                                         graph::DType scale_dtype);

// The values q4gsw bytes hold, row-major, computed as float((nibble - 8) * scale) exactly as the
// kernels do in f32. Throws std::invalid_argument when `bytes` is shorter than the layout.
std::vector<float> dequantize_q4gsw(const std::vector<uint8_t>& bytes, int64_t rows, int64_t cols,
                                    uint32_t group_size, graph::DType scale_dtype);

}  // namespace wgx::ops
