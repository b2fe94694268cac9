// Memory planning: which values share storage (views, mutations written where the buffer lies)
// and which device buffer ("slot") each intermediate lives in, reusing a slot once every value in
// it is dead.
//
// Why slots and not offsets in one arena: WebGPU forbids binding one buffer both read-only and
// writable in a dispatch, and two overlapping writable ranges. With one buffer per slot, a node's
// inputs (alive while it runs) never share a buffer with its outputs, so kernels can bind inputs
// read-only and the same input twice.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace wgx::runtime {

inline constexpr uint32_t kNoSlot = UINT32_MAX;

// The inputs a node's kernel updates where they lie, each paired with the output that is that
// storage: the kernel binds it once, read_write, as the output, and writes only what changes. A
// mutation of the input's buffer by its paired output then needs no copy. `true` stands for
// {input 0 -> output 0}, a single-output update such as update_cache; an op with several updated
// buffers lists its pairs, e.g. InPlace{{3, 1}, {4, 2}}.
class InPlace {
 public:
  struct Pair {
    uint32_t input = 0;
    uint32_t output = 0;
  };

  InPlace() = default;
  template <std::same_as<bool> B>
  InPlace(B input0_as_output0) {  // NOLINT: registrations read {op, routes, view, in_place}
    if (input0_as_output0) pairs_.push_back({0, 0});
  }
  InPlace(std::initializer_list<Pair> pairs) : pairs_(pairs) {}

  // Whether the kernel updates input `input` where it lies, as output `output`.
  bool updates(size_t input, size_t output) const {
    for (const Pair& p : pairs_) {
      if (p.input == input && p.output == output) return true;
    }
    return false;
  }
  const std::vector<Pair>& pairs() const { return pairs_; }

 private:
  std::vector<Pair> pairs_;
};

struct MemoryPlanInput {
  const graph::Graph* graph = nullptr;
  std::vector<uint64_t> capacity;  // per value: bytes at max shape (0 for non-tensors)
  std::vector<bool> views;         // per node: output 0 shares input 0's storage
  std::vector<InPlace> in_place;   // per node: the inputs its kernel updates where they lie
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
