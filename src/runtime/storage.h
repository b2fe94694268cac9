// How each graph dtype is stored in a device buffer, behind one abstraction:
//   f32, i32         one 32-bit word per element
//   f16              native f16 where the device has shader-f16, else pairs packed in u32 words
//                    (element 2k in the low half, as pack2x16float/unpack2x16float do); the two
//                    layouts are the same bytes, only the WGSL that reads them differs
//   bf16             converted to f32 on load (WGSL has no bf16)
//   i64              narrowed to i32 on load, with a range check
//   u8, bool         bytes, four per u32 word (element 4k in the low byte); tails zero-padded
//   q4gsw            packed nibbles + scales, laid out by the quantized-linear kernels
// Every buffer is a whole number of 32-bit words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace wgx::runtime {

enum class Storage : uint8_t { F32, F16Packed, F16Native, I32, Bytes, Q4 };

const char* storage_name(Storage s);
// The storage a dtype gets on a device with or without shader-f16.
Storage storage_for(graph::DType dtype, bool shader_f16);
// The dtype kernels see after load-time conversion (bf16 -> f32, i64 -> i32).
graph::DType compute_dtype(graph::DType dtype);
// Bytes a tensor of `numel` elements occupies, rounded up to whole 32-bit words.
uint64_t storage_bytes(Storage s, uint64_t numel);
// Elements packed in one 32-bit word: 1, 2 or 4.
uint32_t elements_per_word(Storage s);

// Converts host data of dtype `src` (natural little-endian layout) into the bytes of its
// storage (graph::convert_for_storage, then padded to whole words). Throws graph::GraphError
// naming `what` when an i64 does not fit in i32 or a bool is not 0/1.
std::vector<uint8_t> to_storage(graph::DType src, std::span<const uint8_t> bytes, Storage dst,
                                const std::string& what);
// Whether to_storage() only copies (and pads to whole words): data of this dtype then reaches its
// storage in any pieces, without being held whole first.
bool storage_is_copy(graph::DType src, Storage dst);
// Storage bytes back into f32 values (f32, f16, bf16-as-f32) for reading outputs.
std::vector<float> storage_to_f32(Storage s, std::span<const uint8_t> bytes, uint64_t numel);
// Host f32 values into a float storage (F32 or F16*).
std::vector<uint8_t> f32_to_storage(std::span<const float> values, Storage dst);

}  // namespace wgx::runtime
