// The .wgx layout constants and codes, shared by the writer and the reader. docs/file-format.md describes
// the layout field by field; keep the two in step.
#pragma once

#include <cstdint>

namespace wgx::format {

inline constexpr uint8_t kMagic[4] = {'W', 'G', 'X', 0};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderSize = 64;
// The weight section starts on a page boundary so that it can be memory-mapped and uploaded
// without a copy; each tensor in it starts on a 256-byte boundary (WebGPU's
// minStorageBufferOffsetAlignment is at most 256).
inline constexpr uint64_t kWeightSectionAlign = 4096;
inline constexpr uint64_t kTensorAlign = 256;

// Header field offsets.
namespace header {
inline constexpr uint64_t kMagicAt = 0;
inline constexpr uint64_t kVersionAt = 4;
inline constexpr uint64_t kHeaderSizeAt = 8;
inline constexpr uint64_t kFlagsAt = 12;
inline constexpr uint64_t kGraphOffsetAt = 16;
inline constexpr uint64_t kGraphSizeAt = 24;
inline constexpr uint64_t kWeightsOffsetAt = 32;
inline constexpr uint64_t kWeightsSizeAt = 40;
inline constexpr uint64_t kFileSizeAt = 48;
inline constexpr uint64_t kReservedAt = 56;
}  // namespace header

// Dim encoding tags.
inline constexpr uint8_t kDimConstTag = 0;
inline constexpr uint8_t kDimAffineTag = 1;

// Smallest encoded size of each table entry, used to bound counts by the bytes that remain
// before anything is reserved.
namespace min_bytes {
inline constexpr uint64_t kString = 4;
inline constexpr uint64_t kMetadata = 2 * kString;
inline constexpr uint64_t kSym = kString + 16;
inline constexpr uint64_t kValue = 3 + kString;
inline constexpr uint64_t kDim = 1 + 8;
inline constexpr uint64_t kNode = 2 * kString + 3 * 4;
inline constexpr uint64_t kValueId = 4;
inline constexpr uint64_t kAttr = kString + 1 + 1;
inline constexpr uint64_t kNamedValue = kString + 4;
inline constexpr uint64_t kConstant = kString + 4 + 16;
inline constexpr uint64_t kBuffer = kString + 4 + 1 + 4;
inline constexpr uint64_t kMutation = 4 + 4 + 1;
}  // namespace min_bytes

inline constexpr uint64_t round_up(uint64_t v, uint64_t align) {
  return (v + align - 1) / align * align;
}

}  // namespace wgx::format
