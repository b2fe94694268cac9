// Command recording: dispatches, copies and clears recorded into one command buffer and
// submitted at once. Dispatch counts beyond maxComputeWorkgroupsPerDimension are split over y and
// z transparently (kernels recover the linear index with kLinearWorkgroupWgsl). With profiling on
// and timestamp-query present, every dispatch gets its own pass with GPU timestamps (Timing::
// Dispatches), or every pass is timed as it is recorded anyway (Timing::Passes: the work's own
// GPU time, without the cost of a pass per dispatch). Readbacks into an AsyncReadback ride in the
// same command buffer; their maps start at submit().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "gpu/readback.h"

namespace wgx::gpu {

struct WorkgroupGrid {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t total() const { return uint64_t{x} * y * z; }
};

// The smallest near-even grid with total() >= count and every dimension <= max_per_dimension.
// Throws a Validation GpuError if count does not fit in three dimensions.
WorkgroupGrid split_workgroups(uint64_t count, uint32_t max_per_dimension);

struct DispatchTiming {
  std::string label;
  std::string kernel;  // the dispatch's KernelKey::name(); "" where a pass is timed
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  double microseconds() const { return static_cast<double>(end_ns - begin_ns) * 1e-3; }
};

// What a Recorder times with GPU timestamps (where the device has timestamp-query).
enum class Timing { Off, Dispatches, Passes };

class Recorder {
 public:
  Recorder(Context& ctx, std::string label, Timing timing = Timing::Off);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // `workgroups` linear workgroups of `kernel`; split over y/z when needed. The kernel and the bind
  // group must live until submit() has returned (errors are attributed through them); the label
  // is copied.
  void dispatch(const Kernel& kernel, const BindGroup& group, uint64_t workgroups,
                std::string_view label);
  // An explicit grid, for kernels that use the 3D workgroup id themselves.
  void dispatch_grid(const Kernel& kernel, const BindGroup& group, WorkgroupGrid grid,
                     std::string_view label);
  void copy(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
            uint64_t bytes);
  void clear(const Buffer& dst, uint64_t offset = 0, uint64_t bytes = 0);  // 0: to the end
  // Copies `bytes` of `src` from `offset` (both multiples of 4) into `dst`, which must be idle;
  // submit() then starts mapping it, and the host takes the bytes when it wants them.
  void readback(const Buffer& src, uint64_t offset, uint64_t bytes, AsyncReadback& dst);
  // The same for several spans, copied back to back (each non-empty).
  void readback(std::span<const Span> spans, AsyncReadback& dst);

  // Finishes and submits; encoding errors become a GpuError that names the failing dispatch.
  void submit();

  size_t dispatches() const { return recorded_.size(); }
  bool profiling() const { return timing_ != Timing::Off; }
  // GPU times of the submitted work (waits for it): one per dispatch labelled with it, or one per
  // pass labelled with the recorder's label. Empty unless profiling.
  std::vector<DispatchTiming> timings();

 private:
  void begin_pass(std::string_view label, bool timestamped);
  void end_pass();
  std::string culprit(const std::string& message) const;

  // What error attribution needs to know of each dispatch, without copying strings per dispatch:
  // the label as a span of labels_, the kernel and the bind group by address.
  struct Recorded {
    uint32_t label_begin = 0;
    uint32_t label_size = 0;
    const Kernel* kernel = nullptr;
    const BindGroup* group = nullptr;
  };
  std::string_view label_of(const Recorded& r) const {
    return std::string_view(labels_).substr(r.label_begin, r.label_size);
  }

  Context& ctx_;
  std::string label_;
  Timing timing_;
  uint32_t timed_ = 0;  // timestamp pairs written so far
  bool submitted_ = false;
  Handle<WGPUCommandEncoder, wgpuCommandEncoderRelease> encoder_;
  Handle<WGPUComputePassEncoder, wgpuComputePassEncoderRelease> pass_;
  std::vector<Recorded> recorded_;
  std::string labels_;  // every dispatch's label, back to back
  std::vector<std::string> timed_kernels_;  // with Timing::Dispatches, each one's kernel name
  std::vector<AsyncReadback*> readbacks_;  // their maps start at submit()
  // Profiling: one query set, resolved into a buffer and read back after the submit.
  Handle<WGPUQuerySet, wgpuQuerySetRelease> queries_;
  uint32_t query_capacity_ = 0;
  Buffer resolve_;
  Buffer readback_;
};

}  // namespace wgx::gpu
