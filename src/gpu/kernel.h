// Kernels: WGSL compiled into compute pipelines with explicit bind group layouts, cached under a
// named key; bind groups that attach buffers to a kernel's bindings.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"

namespace wgx::gpu {

// How a kernel sees @group(0) @binding(i).
enum class Binding { Uniform, Storage, ReadOnlyStorage };

// What identifies a pipeline: the template it came from, the variant parameters it was expanded
// with, and the WGSL override constants it was created with.
struct KernelKey {
  std::string template_id;  // e.g. "axpy"
  std::string variant;      // e.g. "f32.vec4"
  std::vector<std::pair<std::string, double>> constants;  // override name -> value

  bool operator==(const KernelKey&) const = default;
  std::string to_string() const;  // "axpy[f32.vec4]{wg=256}"
  std::string name() const;       // "axpy[f32.vec4]": the kernel without its constants
};

struct KernelKeyHash {
  size_t operator()(const KernelKey& key) const;
};

struct KernelSource {
  std::string wgsl;
  std::vector<Binding> bindings;  // in @binding order, all in @group(0)
  std::string entry_point = "main";
};

class Kernel {
 public:
  // Compiles `source`; a WGSL error is a ShaderCompile GpuError naming the line. With
  // `wait` false the pipeline is created asynchronously (the driver compiles it on Dawn's worker
  // threads, beside other kernels') and pipeline() or ready() waits for it; an error creating
  // it is thrown there.
  Kernel(Context& ctx, KernelKey key, const KernelSource& source, bool wait = true);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const KernelKey& key() const { return key_; }
  const std::string& label() const { return label_; }
  const std::vector<Binding>& bindings() const { return bindings_; }
  WGPUComputePipeline pipeline() const {
    if (pending_) ready();
    return pipeline_.get();
  }
  // Waits for an asynchronous pipeline (nothing to do otherwise).
  void ready() const;
  WGPUBindGroupLayout layout() const { return layout_.get(); }

 private:
  KernelKey key_;
  std::string label_;
  std::vector<Binding> bindings_;
  Handle<WGPUBindGroupLayout, wgpuBindGroupLayoutRelease> layout_;
  mutable Handle<WGPUComputePipeline, wgpuComputePipelineRelease> pipeline_;
  // An asynchronous creation not yet waited for: its future, and what its callback fills in.
  struct Pending;
  Context* ctx_ = nullptr;
  mutable Pending* pending_ = nullptr;
};

// Pipelines are expensive: build each (template, variant, constants) once.
class PipelineCache {
 public:
  explicit PipelineCache(Context& ctx) : ctx_(ctx) {}
  // Returns the cached kernel for `key`, compiling `make_source()` on first use. Its pipeline
  // is created asynchronously, in parallel with the next ones: ready() waits for them all.
  const Kernel& get(const KernelKey& key, const std::function<KernelSource()>& make_source);
  // Waits for every pipeline still being created; throws the first one's error.
  void ready() const;
  size_t size() const { return kernels_.size(); }

 private:
  Context& ctx_;
  std::unordered_map<KernelKey, std::unique_ptr<Kernel>, KernelKeyHash> kernels_;
};

struct BufferBinding {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;  // 0: from offset to the end of the allocation
};

class BindGroup {
 public:
  BindGroup() = default;
  BindGroup(Context& ctx, const Kernel& kernel, const std::vector<BufferBinding>& buffers,
            std::string label);
  WGPUBindGroup raw() const { return handle_.get(); }
  const std::string& label() const { return label_; }
  // Labels of the bound buffers, shared cheaply with recordings for error attribution.
  const std::shared_ptr<const std::vector<std::string>>& buffer_labels() const { return buffer_labels_; }

 private:
  Handle<WGPUBindGroup, wgpuBindGroupRelease> handle_;
  std::string label_;
  std::shared_ptr<const std::vector<std::string>> buffer_labels_;
};

// WGSL for kernels dispatched through Recorder::dispatch with a linear workgroup count: the
// grid may be split over y and z, and this recovers the linear workgroup index.
inline constexpr const char* kLinearWorkgroupWgsl =
    "fn wgx_workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {\n"
    "  return wid.x + nwg.x * (wid.y + nwg.y * wid.z);\n"
    "}\n";

}  // namespace wgx::gpu
