// The uniform parameter blocks of every dispatch of a program, packed into a few shared buffers.
//
// Each node used to own a small uniform buffer and upload it on every resize: one queue write per
// node per decode step (228 for Llama-3.2-1B), most of them rewriting unchanged bytes. Here a
// resize writes into a host mirror, only bytes that changed mark their page dirty, and
// flush() uploads each dirty span once before the command buffer is submitted.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"

namespace wgx::runtime {

class ParamArena {
 public:
  struct Slot {
    uint32_t page = 0;
    uint32_t offset = 0;  // bytes; a multiple of minUniformBufferOffsetAlignment
    uint32_t bytes = 0;
  };

  explicit ParamArena(gpu::Context& ctx);
  Slot allocate(uint32_t bytes);
  gpu::BufferBinding binding(const Slot& slot) const;
  // Copies `bytes` (at most the slot's size) into the mirror; marks only real changes.
  void write(const Slot& slot, const void* data, uint32_t bytes);
  // Uploads every dirty span (one queue write per dirty page).
  void flush();
  size_t uploads() const { return uploads_; }  // queue writes so far, for tests

 private:
  static constexpr uint32_t kPageBytes = 64 * 1024;  // the smallest maxUniformBufferBindingSize
  struct Page {
    std::unique_ptr<gpu::Buffer> buffer;
    std::vector<uint8_t> mirror;
    uint32_t used = 0;
    uint32_t dirty_begin = UINT32_MAX, dirty_end = 0;
  };
  gpu::Context& ctx_;
  uint32_t alignment_;
  std::vector<Page> pages_;
  size_t uploads_ = 0;
};

}  // namespace wgx::runtime
