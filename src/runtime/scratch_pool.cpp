#include "runtime/scratch_pool.h"

#include <algorithm>

namespace wgx::runtime {

gpu::BufferBinding ScratchPool::get(uint32_t node, uint64_t bytes) {
  if (node != node_) {
    node_ = node;
    taken_ = 0;
  }
  const size_t slot = taken_++;
  if (slot == slots_.size()) slots_.push_back(nullptr);
  constexpr uint64_t kRound = uint64_t{1} << 20;
  const uint64_t want = std::max<uint64_t>((bytes + 15) / 16 * 16, 16);
  if (!slots_[slot] || slots_[slot]->size() < want) {
    const uint64_t size = (want + kRound - 1) / kRound * kRound;
    buffers_.push_back(std::make_unique<gpu::Buffer>(gpu_, size, gpu::BufferKind::Storage,
                                                     "scratch " + std::to_string(slot)));
    slots_[slot] = buffers_.back().get();
    bytes_ += size;
  }
  return {slots_[slot], 0, want};
}

}  // namespace wgx::runtime
