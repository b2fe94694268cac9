// Memory for kernels whose workgroups hand work over inside one dispatch (the persist MLP: the
// gate/up phase's workgroups count the tiles they made and the down phase waits for the count).
// Each such buffer starts with kWords words: counts in words 0, 1 and 3, zero at rest (the kernel
// that counts sets them back to 0 before its dispatch ends), and word 2, the fault word, which a
// wait sets when it gave up (the dispatch's results are then wrong); the dispatch's own data
// follows. Nodes run one after another, so every node draws from the same buffer; the program
// copies the words into every readback and throws if one is not 0 (check()), so no result of a
// faulted step reaches the caller.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "gpu/recorder.h"

namespace wgx::runtime {

class HandoffPool {
 public:
  static constexpr uint64_t kWords = 4;  // counts 0, 1 and 3, the fault word 2
  static constexpr uint32_t kFaultWord = 2;

  explicit HandoffPool(gpu::Context& gpu) : gpu_(gpu) {}

  // The words, then `bytes` of the caller's own: a binding of kWords * 4 + bytes. `user` says
  // what draws on it and how to do without it, `node` which node (for the error check() throws).
  gpu::BufferBinding get(uint64_t bytes, const std::string& user, const std::string& node);

  // The words of every buffer, for a readback to copy (empty when no node hands over), and
  // their bytes.
  const std::vector<gpu::Span>& words() const { return words_; }
  uint64_t word_bytes() const { return kWords * 4 * words_.size(); }
  // The bytes of words() as a readback copied them: throws std::runtime_error naming the users
  // when a word is not 0.
  void check(const uint8_t* words) const;
  // Sets every word back to 0 (a state reset: a fault stays until then).
  void clear(gpu::Recorder& rec) const;

  uint64_t bytes() const { return bytes_; }

 private:
  gpu::Context& gpu_;
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;  // the last one is handed out
  std::vector<gpu::Span> words_;                       // of each buffer
  std::vector<std::pair<std::string, std::vector<std::string>>> users_;  // and their nodes
  uint64_t bytes_ = 0;
};

}  // namespace wgx::runtime
