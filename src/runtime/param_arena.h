// The uniform parameter blocks of every dispatch of a program, packed into a few shared buffers.
//
// Each node used to own a small uniform buffer and upload it on every resize: one queue write per
// node per decode step (228 for Llama-3.2-1B), most of them rewriting unchanged bytes. Here a
// resize writes into a host mirror, only bytes that changed mark their page dirty, and
// flush() uploads each dirty span once before the command buffer is submitted.
//
// Several steps recorded into one command buffer (Program::execute_steps) each need their own
// params, but every queue write lands before the command buffer runs. So for the steps after the
// first, record_flush() stages the dirty spans (and the bytes upload() was given since) in
// buffers of the arena's own and records copies from there into place, in order with the steps'
// dispatches; end_recorded() uploads what was staged, before the submit.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "gpu/recorder.h"

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

  // Bytes for a buffer that steps read (an input, a resize hook's scalar): a queue write now, or
  // between begin_recorded() and end_recorded() staged for the next record_flush(). `offset` is a
  // multiple of 4; a length that is not must end at the buffer's end (as gpu::upload has it).
  void upload(const gpu::Buffer& dst, uint64_t offset, const void* data, size_t bytes);
  // From now on upload() stages, and record_flush() takes the place of flush().
  void begin_recorded();
  // Records into `rec` the copies that put the dirty spans and the staged uploads in place.
  void record_flush(gpu::Recorder& rec);
  // Uploads what record_flush() staged (before the command buffer is submitted) and goes back
  // to queue writes.
  void end_recorded();
  // Ends a recorded run that will not be submitted: what it staged is dropped, and the next
  // flush() uploads every page whole.
  void abort_recorded();
  bool recording() const { return recorded_; }

 private:
  static constexpr uint32_t kPageBytes = 64 * 1024;  // the smallest maxUniformBufferBindingSize
  struct Page {
    std::unique_ptr<gpu::Buffer> buffer;
    std::vector<uint8_t> mirror;
    uint32_t used = 0;
    uint32_t dirty_begin = UINT32_MAX, dirty_end = 0;
  };
  // A staging buffer and the bytes for it so far.
  struct Staging {
    std::unique_ptr<gpu::Buffer> buffer;
    std::vector<uint8_t> bytes;
  };
  // Stages `bytes` of `data` (padded to 4) and records their copy to `dst` at `offset`.
  void stage(gpu::Recorder& rec, const gpu::Buffer& dst, uint64_t offset, const uint8_t* data, size_t bytes);
  struct Pending {
    const gpu::Buffer* dst = nullptr;
    uint64_t offset = 0;
    std::vector<uint8_t> bytes;
  };
  gpu::Context& ctx_;
  uint32_t alignment_;
  std::vector<Page> pages_;
  size_t uploads_ = 0;
  bool recorded_ = false;
  std::vector<Pending> pending_;   // upload()s since the last record_flush()
  std::vector<Staging> staging_;   // kept from one recorded run to the next
  size_t staging_used_ = 0;        // of staging_, in this recorded run
};

}  // namespace wgx::runtime
