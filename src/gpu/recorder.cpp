#include "gpu/recorder.h"

#include <algorithm>
#include <cmath>

namespace wgx::gpu {

namespace {
// Dispatches per profiled recording; a query set holds two timestamps per dispatch.
constexpr uint32_t kMaxProfiledDispatches = 2048;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
}  // namespace

WorkgroupGrid split_workgroups(uint64_t count, uint32_t max_per_dimension) {
  const uint64_t m = max_per_dimension;
  if (count == 0) return {0, 1, 1};
  if (count <= m) return {static_cast<uint32_t>(count), 1, 1};
  if (count > m * m * m) {
    throw GpuError(ErrorKind::Validation, "",
                   std::to_string(count) + " workgroups exceed " + std::to_string(m) + "^3");
  }
  // Fewest rows of at most m, then the narrowest rows that cover `count`.
  const uint64_t z = ceil_div(count, m * m);
  const uint64_t per_z = ceil_div(count, z);
  const uint64_t y = ceil_div(per_z, m);
  const uint64_t x = ceil_div(per_z, y);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z)};
}

Recorder::Recorder(Context& ctx, std::string label, Timing timing)
    : ctx_(ctx), label_(std::move(label)), timing_(ctx.features().timestamp_query ? timing : Timing::Off) {
  ctx_.check(label_);
  WGPUCommandEncoderDescriptor desc{};
  desc.label = view_of(label_);
  encoder_ = decltype(encoder_)(wgpuDeviceCreateCommandEncoder(ctx_.device(), &desc));
}

Recorder::~Recorder() {
  for (AsyncReadback* r : readbacks_) r->unsubmitted();
  if (queries_) wgpuQuerySetDestroy(queries_.get());
}

void Recorder::begin_pass(std::string_view label, bool timestamped) {
  WGPUComputePassDescriptor desc{};
  desc.label = view_of(label);
  WGPUPassTimestampWrites writes{};
  if (timestamped) {
    if (!queries_) {
      query_capacity_ = 2 * kMaxProfiledDispatches;
      WGPUQuerySetDescriptor qdesc{};
      qdesc.label = view_of(label_ + " timestamps");
      qdesc.type = WGPUQueryType_Timestamp;
      qdesc.count = query_capacity_;
      queries_ = decltype(queries_)(wgpuDeviceCreateQuerySet(ctx_.device(), &qdesc));
    }
    const uint32_t index = timed_++;
    if (2 * index + 2 > query_capacity_) {
      throw GpuError(ErrorKind::Validation, label_,
                     "more than " + std::to_string(kMaxProfiledDispatches) +
                         " profiled dispatches or passes in one recording");
    }
    writes.querySet = queries_.get();
    writes.beginningOfPassWriteIndex = 2 * index;
    writes.endOfPassWriteIndex = 2 * index + 1;
    desc.timestampWrites = &writes;
  }
  pass_ = decltype(pass_)(wgpuCommandEncoderBeginComputePass(encoder_.get(), &desc));
}

void Recorder::end_pass() {
  if (pass_) {
    wgpuComputePassEncoderEnd(pass_.get());
    pass_.reset();
  }
}

void Recorder::dispatch(const Kernel& kernel, const BindGroup& group, uint64_t workgroups,
                        std::string_view label) {
  WorkgroupGrid grid;
  try {
    grid = split_workgroups(workgroups, ctx_.workgroups_per_dimension());
  } catch (const GpuError& e) {
    throw GpuError(e.kind(), std::string(label), e.message());
  }
  dispatch_grid(kernel, group, grid, label);
}

void Recorder::dispatch_grid(const Kernel& kernel, const BindGroup& group, WorkgroupGrid grid,
                             std::string_view label) {
  if (submitted_) throw GpuError(ErrorKind::Validation, std::string(label), "recorder already submitted");
  if (timing_ == Timing::Dispatches) {
    end_pass();
    begin_pass(label, true);
    timed_kernels_.push_back(kernel.key().name());
  } else if (!pass_) {
    begin_pass(label_, timing_ == Timing::Passes);
  }
  recorded_.push_back({static_cast<uint32_t>(labels_.size()), static_cast<uint32_t>(label.size()), &kernel, &group});
  labels_.append(label);
  wgpuComputePassEncoderSetPipeline(pass_.get(), kernel.pipeline());
  wgpuComputePassEncoderSetBindGroup(pass_.get(), 0, group.raw(), 0, nullptr);
  if (grid.total() > 0) wgpuComputePassEncoderDispatchWorkgroups(pass_.get(), grid.x, grid.y, grid.z);
  if (timing_ == Timing::Dispatches) end_pass();
}

void Recorder::copy(const Buffer& src, uint64_t src_offset, const Buffer& dst,
                    uint64_t dst_offset, uint64_t bytes) {
  end_pass();
  wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), src.raw(), src_offset, dst.raw(),
                                       dst_offset, bytes);
}

void Recorder::readback(const Buffer& src, uint64_t offset, uint64_t bytes, AsyncReadback& dst) {
  const Span span{&src, offset, bytes};
  readback({&span, 1}, dst);
}

void Recorder::readback(std::span<const Span> spans, AsyncReadback& dst) {
  if (submitted_) throw GpuError(ErrorKind::Validation, dst.label(), "recorder already submitted");
  uint64_t total = 0;
  for (const Span& s : spans) {
    if (s.offset % 4 != 0 || s.bytes % 4 != 0 || s.bytes == 0) {
      throw GpuError(ErrorKind::Validation, dst.label(),
                     "a readback needs a non-empty span at a multiple of 4 bytes (offset " + std::to_string(s.offset) +
                         ", " + std::to_string(s.bytes) + " bytes)");
    }
    if (s.offset + s.bytes > s.buffer->allocated() || total + s.bytes > dst.size()) {
      throw GpuError(ErrorKind::Validation, dst.label(),
                     "a readback of " + std::to_string(s.bytes) + " bytes at offset " + std::to_string(s.offset) +
                         " from " + s.buffer->label() + " (" + std::to_string(s.buffer->allocated()) +
                         " bytes) into a staging buffer of " + std::to_string(dst.size()) + " at " +
                         std::to_string(total));
    }
    total += s.bytes;
  }
  dst.recorded();
  readbacks_.push_back(&dst);
  end_pass();
  uint64_t at = 0;
  for (const Span& s : spans) {
    wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), s.buffer->raw(), s.offset, dst.buffer_.raw(), at, s.bytes);
    at += s.bytes;
  }
}

void Recorder::clear(const Buffer& dst, uint64_t offset, uint64_t bytes) {
  end_pass();
  wgpuCommandEncoderClearBuffer(encoder_.get(), dst.raw(), offset,
                                bytes == 0 ? dst.allocated() - offset : bytes);
}

std::string Recorder::culprit(const std::string& message) const {
  // Dawn names the labelled objects involved ([ComputePipeline "..."], [Buffer "..."],
  // [BindGroup "..."]) but not the dispatch: blame the dispatch whose kernel, bind group and
  // buffers it mentions most (the latest one on a tie).
  auto mentions = [&message](const std::string& name) {
    return !name.empty() && message.find("\"" + name + "\"") != std::string::npos;
  };
  int best_score = 0;
  std::string best = label_;
  for (const Recorded& r : recorded_) {
    const std::string label(label_of(r));
    int score = (mentions(label) ? 4 : 0) + (mentions(r.kernel->label()) ? 2 : 0) +
                (mentions(r.group->label()) ? 2 : 0);
    if (const auto& buffers = r.group->buffer_labels()) {
      for (const std::string& b : *buffers) score += mentions(b) ? 1 : 0;
    }
    if (score > 0 && score >= best_score) {
      best_score = score;
      best = label;
    }
  }
  return best;
}

void Recorder::submit() {
  if (submitted_) throw GpuError(ErrorKind::Validation, label_, "recorder already submitted");
  submitted_ = true;
  end_pass();
  const uint32_t stamps = 2 * timed_;
  if (stamps > 0) {
    resolve_ = Buffer(ctx_, uint64_t{stamps} * 8, BufferKind::QueryResolve, label_ + " timestamps");
    readback_ = Buffer(ctx_, uint64_t{stamps} * 8, BufferKind::Readback, label_ + " timestamps");
    wgpuCommandEncoderResolveQuerySet(encoder_.get(), queries_.get(), 0, stamps, resolve_.raw(), 0);
    wgpuCommandEncoderCopyBufferToBuffer(encoder_.get(), resolve_.raw(), 0, readback_.raw(), 0,
                                         uint64_t{stamps} * 8);
  }
  // No error scopes around the finish: popping one is a wait on the instance, paid on every
  // step. An encoding error reaches the uncaptured-error callback instead (the invalid command
  // buffer then does nothing), and check() throws it, blamed on the dispatch it names.
  WGPUCommandBufferDescriptor desc{};
  desc.label = view_of(label_);
  Handle<WGPUCommandBuffer, wgpuCommandBufferRelease> cmd(wgpuCommandEncoderFinish(encoder_.get(), &desc));
  WGPUCommandBuffer raw = cmd.get();
  wgpuQueueSubmit(ctx_.queue(), 1, &raw);
  try {
    ctx_.check(label_);
  } catch (const GpuError& e) {
    throw GpuError(e.kind(), culprit(e.message()), e.message());
  }
  // Mapping a buffer that a submitted command buffer writes is allowed: the map completes once
  // the GPU has run it.
  for (AsyncReadback* r : readbacks_) r->start_map();
  readbacks_.clear();
}

std::vector<DispatchTiming> Recorder::timings() {
  std::vector<DispatchTiming> out;
  if (timed_ == 0) return out;
  if (!submitted_) throw GpuError(ErrorKind::Validation, label_, "timings() before submit()");
  struct Mapped {
    WGPUMapAsyncStatus status = WGPUMapAsyncStatus_Error;
  } mapped;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView, void* ud, void*) {
    static_cast<Mapped*>(ud)->status = status;
  };
  cb.userdata1 = &mapped;
  const size_t bytes = readback_.allocated();
  ctx_.wait(wgpuBufferMapAsync(readback_.raw(), WGPUMapMode_Read, 0, bytes, cb), label_);
  ctx_.check(label_);
  if (mapped.status != WGPUMapAsyncStatus_Success) {
    throw GpuError(ErrorKind::Internal, label_, "mapping the timestamps failed");
  }
  const auto* ts = static_cast<const uint64_t*>(wgpuBufferGetConstMappedRange(readback_.raw(), 0, bytes));
  for (size_t i = 0; i < timed_; ++i) {
    const bool dispatch = timing_ == Timing::Dispatches;
    out.push_back({dispatch ? std::string(label_of(recorded_[i])) : label_,
                   dispatch ? timed_kernels_[i] : std::string(), ts[2 * i], ts[2 * i + 1]});
  }
  wgpuBufferUnmap(readback_.raw());
  return out;
}

}  // namespace wgx::gpu
