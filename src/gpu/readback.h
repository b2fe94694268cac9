// Readbacks that do not block the queue: a host-mappable staging buffer that a recording copies
// into (Recorder::readback) and that is mapped as soon as that recording is submitted, with no
// wait. The host polls ready() or blocks in wait() later, takes the bytes, and the buffer is free
// for the next recording. Several of them let several submitted steps be in flight at once.
//
//   AsyncReadback slot(ctx, 4, "token");
//   Recorder rec(ctx, "step");
//   ... dispatches ...
//   rec.readback(out, 0, 4, slot);
//   rec.submit();               // starts the map
//   ... record and submit more work ...
//   int32_t token;
//   slot.take(&token, 4);       // waits only if the GPU has not finished yet; slot is idle again
#pragma once

#include <cstdint>
#include <string>

#include "gpu/buffer.h"
#include "gpu/context.h"

namespace wgx::gpu {

class Recorder;

class AsyncReadback {
 public:
  enum class State {
    Idle,      // free: a recording may copy into it
    Recorded,  // a recording copies into it; the map starts when that recording is submitted
    Mapping,   // submitted; the map completes when the GPU has run the copy
    Mapped,    // the bytes are on the host
  };

  // A staging buffer of `bytes` (at least 4, rounded up to a multiple of 4).
  AsyncReadback(Context& ctx, uint64_t bytes, std::string label);
  // Waits for a map in progress (its callback refers to this object), then releases the buffer.
  ~AsyncReadback();
  AsyncReadback(const AsyncReadback&) = delete;
  AsyncReadback& operator=(const AsyncReadback&) = delete;

  uint64_t size() const { return buffer_.allocated(); }
  State state() const { return state_; }
  const std::string& label() const { return buffer_.label(); }

  // Whether the bytes are on the host. Never blocks: it only lets Dawn deliver a map that has
  // completed. False while Recorded (the recording has not been submitted).
  bool ready();
  // Blocks until the bytes are on the host. Throws GpuError when the map failed or the device was
  // lost, and a Validation GpuError when nothing was submitted to fill the buffer (Idle, or a
  // recording not submitted yet).
  void wait();
  // wait(), then copies `bytes` (at most size()) from `offset` into `out` and frees the buffer for
  // the next recording.
  void take(void* out, uint64_t bytes, uint64_t offset = 0);
  // Frees the buffer without reading it: a map in progress is cancelled (and its callback
  // delivered), a mapped buffer unmapped, a recording not submitted forgotten.
  void release();

 private:
  friend class Recorder;
  void recorded();     // Recorder::readback
  void start_map();    // Recorder::submit, after the queue submit
  void unsubmitted();  // a Recorder destroyed without submitting
  void finish_wait(bool block);

  struct MapResult {
    bool done = false;
    WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
    std::string message;
  };

  Context& ctx_;
  Buffer buffer_;
  State state_ = State::Idle;
  WGPUFuture future_{0};
  MapResult result_;  // the map callback's target: this object is neither copied nor moved
};

}  // namespace wgx::gpu
