// Shared by the reduce family's routes: which dims a node reduces, x seen as groups of kept and
// reduced dims, the guard parts every route has, and workgroup tiling helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/op_kernel.h"

namespace wgx::ops::reduce {

// Every kernel of the family runs 256 invocations per workgroup: WebGPU's guaranteed minimum of
// maxComputeInvocationsPerWorkgroup and SwiftShader's maximum. The tiles adapt to the shapes
// within it instead (rows of several lengths, columns of several counts).
constexpr uint32_t kWorkgroupSize = 256;

// Workgroups that keep a large GPU busy (about two per multiprocessor of an H200): tilings with
// fewer trade outputs per workgroup, or split long outputs, to get there.
constexpr uint64_t kFillWorkgroups = 256;

// "" when the device runs kWorkgroupSize invocations with `shared_bytes` of workgroup memory and
// every tensor of the node has rank <= 8 and fewer than 2^31 elements at max (so that indices
// plus a workgroup's stride never wrap in 32 bits).
std::string check_node(const runtime::NodeContext& ctx, uint32_t shared_bytes);

// The dims of input 0 the node reduces, normalized: attr `dim`, or `dims` (absent or empty: all).
std::vector<bool> reduced_dims(const runtime::NodeContext& ctx);

// A row-major tensor as runs of adjacent kept dims and of adjacent reduced dims (dims of size 1
// left out, so the runs on either side of one merge). Rank <= 8 gives at most 4 runs of each.
struct DimGroups {
  std::vector<uint32_t> kept_size, kept_stride;  // outermost first; element strides
  std::vector<uint32_t> red_size, red_stride;
  uint64_t outputs = 1;  // product of the kept sizes
  uint64_t count = 1;    // product of the reduced sizes: elements per output
};
DimGroups group_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduced);

// "" when no dim that can exceed size 1 is kept after one that is reduced (at `max_shape`): the
// reduced elements of each output then form one contiguous run of x, whatever the SymInts are.
std::string reduced_run_is_last(const std::vector<int64_t>& max_shape, const std::vector<bool>& reduced);

// The smallest power of two >= n, capped at kWorkgroupSize (1 for n <= 1).
uint32_t pow2_tile(uint64_t n);

// Invocations per row for a row of n elements: about 4 elements each, at least a warp of 32.
uint32_t row_lanes(uint64_t n);

// Lanes per output for a strided tile, where adjacent invocations take adjacent outputs (adjacent
// elements): 8 to 64 outputs per workgroup (at least 32-byte segments), fewer while that leaves
// fewer than kFillWorkgroups workgroups, and at least `min_cols`; lanes fill the rest of the
// workgroup, up to the reduced count.
uint32_t strided_lanes(uint64_t outputs, uint64_t count, uint32_t min_cols);

uint32_t f32_bits(float value);

}  // namespace wgx::ops::reduce
