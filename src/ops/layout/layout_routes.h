// What the layout routes share: the element mapping of a strided copy, the gather and buffer-copy
// executables built from such mappings, and the guards both need.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/op_kernel.h"

namespace wgx::ops::layout {

using runtime::NodeContext;
using Guard = std::function<std::string(const NodeContext&)>;

// Output element -> source element of a copy op: src = base + sum_d c_d * strides[d], c the
// output's multi-index over `sizes`. Computed from the current shapes on every resize.
struct Strided {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t base = 0;
};
using StridedFn = std::function<Strided(const NodeContext&)>;

// Bytes the recorder copies from input `input` into the output (offsets into each tensor).
struct CopyRange {
  size_t input = 0;
  uint64_t src_offset = 0;
  uint64_t dst_offset = 0;
  uint64_t bytes = 0;
};
using CopyFn = std::function<std::vector<CopyRange>(const NodeContext&)>;

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
size_t norm_dim(int64_t dim, size_t rank);
uint64_t product(const std::vector<int64_t>& shape, size_t from, size_t to);
// The variant suffix for a storage's element width ("w32", "w16", "w8"), or "" for a storage the
// layout kernels do not move.
std::string width_label(runtime::Storage storage);
// Bytes of one element of a storage the layout kernels move (4, 2 or 1).
uint64_t element_size(runtime::Storage storage);
// True when, for every sym value, the product of dims [from, to) of `shape` times `element_bytes`
// is a multiple of 4 (so offsets in steps of it suit a buffer copy).
bool aligned_rows(const graph::Shape& shape, size_t from, size_t to, uint64_t element_bytes);
// "" when every dim of `shape` before `axis` is at most 1 at its max, so the dims from `axis` on
// hold one contiguous block per step of the axis.
std::string leading_dims_unit(const std::vector<int64_t>& max_shape, size_t axis);

// "" when the node's tensors have a storage these kernels move (f32, i32, f16, bytes), all alike,
// with rank <= 8 and fewer than 2^32 elements.
std::string storage_guard(const NodeContext& ctx);

// "gather": one dispatch of the strided gather kernel; `guard` adds to storage_guard.
runtime::Route gather_route(Guard guard, StridedFn map);
// "copy": buffer copies only; `guard` must ensure every range is 4-byte aligned in offset and
// size, or is a whole tensor's storage (whole words, its zero tail included).
runtime::Route copy_route(Guard guard, CopyFn ranges);

// cat's routes (cat.cpp).
runtime::Route cat_copy_route();
runtime::Route cat_gather_route();

}  // namespace wgx::ops::layout
