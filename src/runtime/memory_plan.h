// Memory planning: which values share storage (views, mutations written where the buffer lies)
// and which device buffer ("slot") each intermediate lives in, reusing a slot once every value in
// it is dead.
//
// Why slots and not offsets in one arena: WebGPU forbids binding one buffer both read-only and
// writable in a dispatch, and two overlapping writable ranges. With one buffer per slot, a node's
// inputs (alive while it runs) never share a buffer with its outputs, so kernels can bind inputs
// read-only and the same input twice.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace wgx::runtime {

inline constexpr uint32_t kNoSlot = UINT32_MAX;

struct MemoryPlanInput {
  const graph::Graph* graph = nullptr;
  std::vector<uint64_t> capacity;  // per value: bytes at max shape (0 for non-tensors)
  std::vector<bool> views;         // per node: output 0 shares input 0's storage
  std::vector<bool> in_place;      // per node: the kernel updates input 0 where it lies (output 0)
};

struct MemoryPlan {
  // Per value: the value whose storage it uses (itself, a view's source, a mutated buffer).
  std::vector<graph::ValueId> root;
  // Per value: the slot of an intermediate root, else kNoSlot (inputs, constants, buffers).
  std::vector<uint32_t> slot;
  std::vector<uint64_t> slot_bytes;  // per slot
  uint64_t planned_bytes() const;
  uint64_t unplanned_bytes = 0;  // the sum of intermediate sizes, as if nothing were reused
  // Per node: mutations whose value could not be written into its buffer directly:
  // (value, buffer index) to copy into the buffer right after the node.
  std::vector<std::vector<std::pair<graph::ValueId, uint32_t>>> copies_after;
};

MemoryPlan plan_memory(const MemoryPlanInput& in);

}  // namespace wgx::runtime
