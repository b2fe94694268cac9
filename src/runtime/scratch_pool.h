// Scratch that a node uses only between its own dispatches (written, then read back before its
// last dispatch ends: split-K partial sums, an f32 product before a packing pass). Nodes run one
// after another in one command buffer, so all of a program's nodes draw from one pool: the i-th
// scratch a node asks for is slot i, the same buffer as every other node's i-th. A slot holds the
// largest size asked of it so far; a node that needs more gets a new, larger buffer (the nodes
// built before keep the one they bound), and sizes round up to 1 MiB, so a model's projections
// share a handful of buffers instead of owning one each.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"

namespace wgx::runtime {

class ScratchPool {
 public:
  explicit ScratchPool(gpu::Context& gpu) : gpu_(gpu) {}

  // The next scratch of node `node` (nodes ask in build order), at least `bytes`.
  gpu::BufferBinding get(uint32_t node, uint64_t bytes);
  // What the pool holds on the device.
  uint64_t bytes() const { return bytes_; }

 private:
  gpu::Context& gpu_;
  std::vector<gpu::Buffer*> slots_;  // the buffer each slot hands out now
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;
  uint64_t bytes_ = 0;
  uint32_t node_ = UINT32_MAX;  // the node asking, and how many it has had
  size_t taken_ = 0;
};

}  // namespace wgx::runtime
