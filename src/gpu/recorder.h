// Command recording: dispatches, copies and clears recorded into one command buffer and
// submitted at once. Dispatch counts beyond maxComputeWorkgroupsPerDimension are split over y and
// z transparently (kernels recover the linear index with kLinearWorkgroupWgsl). With profiling on
// and timestamp-query present, every dispatch gets its own pass with GPU timestamps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"

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
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  double microseconds() const { return static_cast<double>(end_ns - begin_ns) * 1e-3; }
};

class Recorder {
 public:
  Recorder(Context& ctx, std::string label, bool profile = false);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // `workgroups` linear workgroups of `kernel`; split over y/z when needed.
  void dispatch(const Kernel& kernel, const BindGroup& group, uint64_t workgroups,
                std::string_view label);
  // An explicit grid, for kernels that use the 3D workgroup id themselves.
  void dispatch_grid(const Kernel& kernel, const BindGroup& group, WorkgroupGrid grid,
                     std::string_view label);
  void copy(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
            uint64_t bytes);
  void clear(const Buffer& dst, uint64_t offset = 0, uint64_t bytes = 0);  // 0: to the end

  // Finishes and submits; encoding errors become a GpuError that names the failing dispatch.
  void submit();

  size_t dispatches() const { return recorded_.size(); }
  bool profiling() const { return profile_; }
  // Per-dispatch GPU times of the submitted work (waits for it). Empty unless profiling.
  std::vector<DispatchTiming> timings();

 private:
  void begin_pass(std::string_view label, bool timestamped);
  void end_pass();
  std::string culprit(const std::string& message) const;

  // What error attribution needs to know of each dispatch (labels only: cheap to keep).
  struct Recorded {
    std::string label;
    std::string kernel;
    std::string group;
    std::shared_ptr<const std::vector<std::string>> buffers;
  };

  Context& ctx_;
  std::string label_;
  bool profile_;
  bool submitted_ = false;
  Handle<WGPUCommandEncoder, wgpuCommandEncoderRelease> encoder_;
  Handle<WGPUComputePassEncoder, wgpuComputePassEncoderRelease> pass_;
  std::vector<Recorded> recorded_;
  // Profiling: one query set, resolved into a buffer and read back after the submit.
  Handle<WGPUQuerySet, wgpuQuerySetRelease> queries_;
  uint32_t query_capacity_ = 0;
  Buffer resolve_;
  Buffer readback_;
};

}  // namespace wgx::gpu
