// Device buffers: creation (sizes rounded as WebGPU requires), upload, readback, and a pool of
// reusable buffers in size classes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpu/context.h"

namespace wgx::gpu {

enum class BufferKind {
  Storage,   // read/written by kernels; copy source and destination
  Uniform,   // small parameter blocks; written from the host
  Readback,  // host-mappable copy destination
  QueryResolve,
};

class Buffer {
 public:
  Buffer() = default;
  // `bytes` may be any size >= 1; the allocation is rounded up to a multiple of 4.
  Buffer(Context& ctx, uint64_t bytes, BufferKind kind, std::string label);
  // A Storage buffer that starts with `bytes` of `data` (mapped at creation: no staging copy).
  Buffer(Context& ctx, const void* data, uint64_t bytes, std::string label);

  // Frees the device memory now, even while bind groups still refer to the buffer.
  void destroy();

  uint64_t size() const { return size_; }            // bytes asked for
  uint64_t allocated() const { return allocated_; }  // bytes on the device
  BufferKind kind() const { return kind_; }
  const std::string& label() const { return label_; }
  WGPUBuffer raw() const { return handle_.get(); }
  explicit operator bool() const { return static_cast<bool>(handle_); }

 private:
  Buffer(Context& ctx, uint64_t bytes, BufferKind kind, std::string label, const void* init);

  Handle<WGPUBuffer, wgpuBufferRelease> handle_;
  uint64_t size_ = 0;
  uint64_t allocated_ = 0;
  BufferKind kind_ = BufferKind::Storage;
  std::string label_;
};

// Writes host bytes into `dst` at `offset` (a multiple of 4). A length that is not a multiple of
// 4 is padded with zeros, which is allowed only where the write ends at the buffer's end.
void upload(Context& ctx, const Buffer& dst, uint64_t offset, const void* data, size_t bytes);

// Copies `bytes` from `src` at `offset` (any alignment) into `out`; waits for the GPU.
void download(Context& ctx, const Buffer& src, uint64_t offset, size_t bytes, void* out);

// Bytes of a buffer that a readback copies: offset and bytes multiples of 4.
struct Span {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
// Copies the spans back to back into `out` through one staging buffer and one wait.
void download(Context& ctx, std::span<const Span> spans, void* out);

template <typename T>
std::vector<T> download_as(Context& ctx, const Buffer& src, size_t count, uint64_t offset = 0) {
  std::vector<T> out(count);
  download(ctx, src, offset, count * sizeof(T), out.data());
  return out;
}

uint64_t round_up(uint64_t value, uint64_t multiple);

// Reusable buffers in size classes (four classes per power of two, 256 bytes at least), so that
// transient allocations of similar size share device memory instead of growing it.
class BufferPool {
 public:
  class Lease {
   public:
    Lease() = default;
    Lease(BufferPool* pool, Buffer buffer) : pool_(pool), buffer_(std::move(buffer)) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), buffer_(std::move(o.buffer_)) {}
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { give_back(); }
    const Buffer& buffer() const { return buffer_; }
    const Buffer* operator->() const { return &buffer_; }

   private:
    void give_back();
    BufferPool* pool_ = nullptr;
    Buffer buffer_;
  };

  explicit BufferPool(Context& ctx) : ctx_(ctx) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer with allocated() >= bytes, reused when one of its class is free.
  Lease acquire(uint64_t bytes, BufferKind kind, const std::string& label);
  static uint64_t size_class(uint64_t bytes);

  size_t created() const { return created_; }
  size_t reused() const { return reused_; }
  uint64_t idle_bytes() const;
  void trim();  // releases every idle buffer

 private:
  Context& ctx_;
  std::map<std::pair<BufferKind, uint64_t>, std::vector<Buffer>> idle_;
  size_t created_ = 0;
  size_t reused_ = 0;
};

}  // namespace wgx::gpu
