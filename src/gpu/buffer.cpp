#include "gpu/buffer.h"

#include <cstring>

namespace wgx::gpu {

namespace {

WGPUBufferUsage usage_of(BufferKind kind) {
  switch (kind) {
    case BufferKind::Storage:
      return WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    case BufferKind::Uniform: return WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    case BufferKind::Readback: return WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    case BufferKind::QueryResolve: return WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc;
  }
  return 0;
}

}  // namespace

uint64_t round_up(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

Buffer::Buffer(Context& ctx, uint64_t bytes, BufferKind kind, std::string label)
    : Buffer(ctx, bytes, kind, std::move(label), nullptr) {}

Buffer::Buffer(Context& ctx, const void* data, uint64_t bytes, std::string label)
    : Buffer(ctx, bytes, BufferKind::Storage, std::move(label), data) {}

void Buffer::destroy() {
  if (handle_) wgpuBufferDestroy(handle_.get());
}

Buffer::Buffer(Context& ctx, uint64_t bytes, BufferKind kind, std::string label, const void* init)
    : size_(bytes), allocated_(round_up(bytes == 0 ? 4 : bytes, 4)), kind_(kind),
      label_(std::move(label)) {
  const Limits& lim = ctx.limits();
  if (allocated_ > lim.max_buffer_size) {
    throw GpuError(ErrorKind::OutOfMemory, label_,
                   "buffer of " + std::to_string(bytes) + " bytes exceeds the device's maxBufferSize of " +
                       std::to_string(lim.max_buffer_size));
  }
  WGPUBufferDescriptor desc{};
  desc.label = view_of(label_);
  desc.usage = usage_of(kind);
  desc.size = allocated_;
  desc.mappedAtCreation = init != nullptr;
  handle_ = ctx.scoped(label_, [&] {
    return decltype(handle_)(wgpuDeviceCreateBuffer(ctx.device(), &desc));
  });
  if (!handle_ || wgpuBufferGetSize(handle_.get()) != allocated_) {
    throw GpuError(ErrorKind::OutOfMemory, label_, "buffer creation failed");
  }
  if (init) {
    void* p = wgpuBufferGetMappedRange(handle_.get(), 0, allocated_);
    if (!p) throw GpuError(ErrorKind::Internal, label_, "mapped range unavailable at creation");
    std::memset(static_cast<uint8_t*>(p) + bytes, 0, allocated_ - bytes);
    std::memcpy(p, init, bytes);
    wgpuBufferUnmap(handle_.get());
  }
}

void upload(Context& ctx, const Buffer& dst, uint64_t offset, const void* data, size_t bytes) {
  if (offset % 4 != 0) {
    throw GpuError(ErrorKind::Validation, dst.label(),
                   "upload offset " + std::to_string(offset) + " is not a multiple of 4");
  }
  if (offset + bytes > dst.size()) {
    throw GpuError(ErrorKind::Validation, dst.label(),
                   "upload of " + std::to_string(bytes) + " bytes at offset " +
                       std::to_string(offset) + " overruns the buffer of " +
                       std::to_string(dst.size()) + " bytes");
  }
  ctx.check(dst.label());
  if (bytes == 0) return;
  const size_t whole = bytes / 4 * 4;
  if (whole > 0) wgpuQueueWriteBuffer(ctx.queue(), dst.raw(), offset, data, whole);
  if (whole != bytes) {
    if (offset + bytes != dst.size()) {
      throw GpuError(ErrorKind::Validation, dst.label(),
                     "an upload whose length is not a multiple of 4 must end at the buffer's end");
    }
    uint8_t tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, static_cast<const uint8_t*>(data) + whole, bytes - whole);
    wgpuQueueWriteBuffer(ctx.queue(), dst.raw(), offset + whole, tail, 4);
  }
}

namespace {

// Copies the spans back to back into the context's staging buffer, waits for the GPU, and copies
// `bytes` of what arrived, from byte `skip`, into `out`. `label` names the source in errors.
void download_spans(Context& ctx, std::span<const Span> spans, uint64_t skip, size_t bytes, void* out,
                    const std::string& label) {
  uint64_t total = 0;
  for (const Span& s : spans) total += s.bytes;
  const Buffer& staging = ctx.readback_staging(total);

  WGPUCommandEncoderDescriptor edesc{};
  edesc.label = view_of("readback");
  Handle<WGPUCommandEncoder, wgpuCommandEncoderRelease> enc(
      wgpuDeviceCreateCommandEncoder(ctx.device(), &edesc));
  uint64_t at = 0;
  for (const Span& s : spans) {
    if (s.bytes) wgpuCommandEncoderCopyBufferToBuffer(enc.get(), s.buffer->raw(), s.offset, staging.raw(), at, s.bytes);
    at += s.bytes;
  }
  // No error scope here (they cost a wait each, and a readback runs once per generated token):
  // the copies are between buffers checked by the callers, and anything Dawn still reports
  // arrives through the uncaptured-error callback and the check() below.
  Handle<WGPUCommandBuffer, wgpuCommandBufferRelease> cmd(wgpuCommandEncoderFinish(enc.get(), nullptr));
  WGPUCommandBuffer raw = cmd.get();
  wgpuQueueSubmit(ctx.queue(), 1, &raw);

  struct Mapped {
    WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
    std::string message;
  } mapped;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* ud, void*) {
    auto* m = static_cast<Mapped*>(ud);
    m->status = status;
    m->message = to_string(message);
  };
  cb.userdata1 = &mapped;
  ctx.wait(wgpuBufferMapAsync(staging.raw(), WGPUMapMode_Read, 0, total, cb), label);
  ctx.check(label);
  if (mapped.status != WGPUMapAsyncStatus_Success) {
    throw GpuError(ErrorKind::Internal, label, "mapping the readback failed: " + mapped.message);
  }
  const void* p = wgpuBufferGetConstMappedRange(staging.raw(), 0, total);
  if (!p) {
    wgpuBufferUnmap(staging.raw());
    throw GpuError(ErrorKind::Internal, label, "mapped range unavailable");
  }
  std::memcpy(out, static_cast<const uint8_t*>(p) + skip, bytes);
  wgpuBufferUnmap(staging.raw());
}

}  // namespace

void download(Context& ctx, const Buffer& src, uint64_t offset, size_t bytes, void* out) {
  if (offset + bytes > src.size()) {
    throw GpuError(ErrorKind::Validation, src.label(),
                   "download of " + std::to_string(bytes) + " bytes at offset " +
                       std::to_string(offset) + " overruns the buffer of " +
                       std::to_string(src.size()) + " bytes");
  }
  if (bytes == 0) return;
  const uint64_t begin = offset / 4 * 4;
  const Span span{&src, begin, round_up(offset + bytes, 4) - begin};
  download_spans(ctx, {&span, 1}, offset - begin, bytes, out, src.label());
}

void download(Context& ctx, std::span<const Span> spans, void* out) {
  uint64_t total = 0;
  for (const Span& s : spans) {
    if (s.offset % 4 != 0 || s.bytes % 4 != 0 || s.offset + s.bytes > s.buffer->allocated()) {
      throw GpuError(ErrorKind::Validation, s.buffer->label(),
                     "download of " + std::to_string(s.bytes) + " bytes at offset " + std::to_string(s.offset) +
                         " (multiples of 4 needed) from a buffer of " + std::to_string(s.buffer->allocated()) +
                         " bytes");
    }
    total += s.bytes;
  }
  if (total == 0) return;
  download_spans(ctx, spans, 0, total, out, spans.front().buffer->label());
}

BufferPool::Lease& BufferPool::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    give_back();
    pool_ = std::exchange(o.pool_, nullptr);
    buffer_ = std::move(o.buffer_);
  }
  return *this;
}

void BufferPool::Lease::give_back() {
  if (pool_ && buffer_) {
    pool_->idle_[{buffer_.kind(), buffer_.allocated()}].push_back(std::move(buffer_));
  }
  pool_ = nullptr;
}

uint64_t BufferPool::size_class(uint64_t bytes) {
  if (bytes <= 256) return 256;
  uint64_t pow2 = 256;
  while (pow2 * 2 < bytes) pow2 *= 2;
  // Four classes between pow2 and 2*pow2: waste is at most a quarter.
  const uint64_t step = pow2 / 4;
  return round_up(bytes, step);
}

BufferPool::Lease BufferPool::acquire(uint64_t bytes, BufferKind kind, const std::string& label) {
  const uint64_t cls = size_class(bytes);
  auto it = idle_.find({kind, cls});
  if (it != idle_.end() && !it->second.empty()) {
    Buffer b = std::move(it->second.back());
    it->second.pop_back();
    ++reused_;
    return Lease(this, std::move(b));
  }
  ++created_;
  return Lease(this, Buffer(ctx_, cls, kind, label));
}

uint64_t BufferPool::idle_bytes() const {
  uint64_t total = 0;
  for (const auto& [key, list] : idle_) total += key.second * list.size();
  return total;
}

void BufferPool::trim() { idle_.clear(); }

}  // namespace wgx::gpu
