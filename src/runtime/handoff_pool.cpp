#include "runtime/handoff_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace wgx::runtime {

gpu::BufferBinding HandoffPool::get(uint64_t bytes, const std::string& user, const std::string& node) {
  const uint64_t want = kWords * 4 + (bytes + 15) / 16 * 16;
  if (buffers_.empty() || buffers_.back()->size() < want) {
    constexpr uint64_t kRound = uint64_t{1} << 16;
    const uint64_t size = (want + kRound - 1) / kRound * kRound;
    // Created zero-filled (WebGPU's guarantee): the counts at rest.
    buffers_.push_back(std::make_unique<gpu::Buffer>(gpu_, size, gpu::BufferKind::Storage, "handoff words"));
    words_.push_back({buffers_.back().get(), 0, kWords * 4});
    bytes_ += size;
  }
  auto u = std::find_if(users_.begin(), users_.end(), [&user](const auto& e) { return e.first == user; });
  if (u == users_.end()) u = users_.insert(users_.end(), {user, {}});
  u->second.push_back(node);
  return {buffers_.back().get(), 0, want};
}

void HandoffPool::check(const uint8_t* words) const {
  bool fault = false, counts = false;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    uint32_t w[kWords];
    std::memcpy(w, words + b * sizeof(w), sizeof(w));
    fault = fault || w[kFaultWord] != 0;
    counts = counts || w[0] != 0 || w[1] != 0 || w[3] != 0;
  }
  if (!fault && !counts) return;
  std::string users;
  for (const auto& [user, nodes] : users_) {
    users += "\n  " + user + " in " + nodes.front();
    const size_t more = nodes.size() - 1;
    if (more) users += " and " + std::to_string(more) + " more node" + (more > 1 ? "s" : "");
  }
  const std::string what = fault ? "reported that a wait for them gave up" : "left its counts unfinished";
  throw std::runtime_error("a dispatch whose workgroups hand work over to each other " + what +
                           ": the results of this step and every one after it are wrong (the KV cache too, until "
                           "the state is reset). Kernels that hand over inside a dispatch:" +
                           users);
}

void HandoffPool::clear(gpu::Recorder& rec) const {
  for (const auto& b : buffers_) rec.clear(*b);
}

}  // namespace wgx::runtime
