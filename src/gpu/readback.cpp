#include "gpu/readback.h"

#include <algorithm>
#include <cstring>

namespace wgx::gpu {

namespace {

const char* state_name(AsyncReadback::State s) {
  switch (s) {
    case AsyncReadback::State::Idle: return "idle";
    case AsyncReadback::State::Recorded: return "recorded, not submitted";
    case AsyncReadback::State::Mapping: return "mapping";
    case AsyncReadback::State::Mapped: return "mapped, not taken";
  }
  return "?";
}

}  // namespace

AsyncReadback::AsyncReadback(Context& ctx, uint64_t bytes, std::string label)
    : ctx_(ctx), buffer_(ctx, std::max<uint64_t>(bytes, 4), BufferKind::Readback, std::move(label)) {}

AsyncReadback::~AsyncReadback() {
  try {
    release();
  } catch (...) {  // a lost device: no callback is left to wait for
  }
}

void AsyncReadback::recorded() {
  if (state_ != State::Idle) {
    throw GpuError(ErrorKind::Validation, label(),
                   std::string("the readback buffer is in use (") + state_name(state_) +
                       "): take() or release() it before recording into it again");
  }
  state_ = State::Recorded;
}

void AsyncReadback::unsubmitted() {
  if (state_ == State::Recorded) state_ = State::Idle;
}

void AsyncReadback::start_map() {
  if (state_ != State::Recorded) return;
  result_ = MapResult{};
  WGPUBufferMapCallbackInfo cb{};
  // Delivered only inside a wait on this future (ready(), wait(), release()), never later behind
  // our back, so result_ is written only while this object is alive.
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* ud, void*) {
    auto* r = static_cast<MapResult*>(ud);
    r->done = true;
    r->status = status;
    r->message = to_string(message);
  };
  cb.userdata1 = &result_;
  future_ = wgpuBufferMapAsync(buffer_.raw(), WGPUMapMode_Read, 0, buffer_.allocated(), cb);
  state_ = State::Mapping;
}

void AsyncReadback::finish_wait(bool block) {
  if (block) {
    ctx_.wait(future_, label());
  } else if (!ctx_.poll(future_, label())) {
    return;
  }
  ctx_.check(label());
  if (!result_.done || result_.status != WGPUMapAsyncStatus_Success) {
    state_ = State::Idle;  // not mapped: free again
    throw GpuError(ErrorKind::Internal, label(),
                   "mapping the readback failed" + (result_.message.empty() ? "" : ": " + result_.message));
  }
  state_ = State::Mapped;
}

bool AsyncReadback::ready() {
  if (state_ == State::Mapping) finish_wait(false);
  return state_ == State::Mapped;
}

void AsyncReadback::wait() {
  if (state_ == State::Mapping) finish_wait(true);
  if (state_ != State::Mapped) {
    throw GpuError(ErrorKind::Validation, label(),
                   std::string("nothing was submitted to fill the readback buffer (") + state_name(state_) + ")");
  }
}

void AsyncReadback::take(void* out, uint64_t bytes, uint64_t offset) {
  if (offset + bytes > size()) {
    throw GpuError(ErrorKind::Validation, label(),
                   "taking " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                       " from a readback buffer of " + std::to_string(size()));
  }
  wait();
  const void* p = wgpuBufferGetConstMappedRange(buffer_.raw(), 0, size());
  if (!p) {
    release();
    throw GpuError(ErrorKind::Internal, label(), "mapped range unavailable");
  }
  std::memcpy(out, static_cast<const uint8_t*>(p) + offset, bytes);
  release();
}

void AsyncReadback::release() {
  switch (state_) {
    case State::Idle: return;
    case State::Recorded:
      state_ = State::Idle;
      return;
    case State::Mapping:
      // Unmapping cancels the map (or undoes it, had it just completed); the callback then
      // arrives at once and must be delivered before result_ may go away.
      state_ = State::Idle;
      wgpuBufferUnmap(buffer_.raw());
      ctx_.wait(future_, label());
      return;
    case State::Mapped:
      state_ = State::Idle;
      wgpuBufferUnmap(buffer_.raw());
      return;
  }
}

}  // namespace wgx::gpu
