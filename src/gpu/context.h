// Context: one WebGPU instance, adapter, device and queue, chosen and configured the wgx way.
//
// Adapter choice (--adapter / WGX_ADAPTER): auto | gpu | swiftshader | gles. `auto` takes a real
// GPU if the Vulkan loader finds one and otherwise SwiftShader, and says so on stderr. Dawn's
// Null backend is never chosen. Features are requested when the adapter has them
// (timestamp-query, subgroups, shader-f16); limits requested are the adapter's maximums (less
// workgroup memory or a smaller storage binding where ContextOptions asks).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpu/error.h"
#include "gpu/handle.h"
#include "gpu/webgpu_api.h"

namespace wgx::gpu {

class Buffer;

enum class AdapterChoice { Auto, Gpu, SwiftShader, Gles };

// Accepts "auto", "gpu", "swiftshader", "gles"; anything else is a Setup error listing them.
AdapterChoice parse_adapter_choice(std::string_view text);
const char* to_string(AdapterChoice choice);

struct ContextOptions {
  AdapterChoice adapter = AdapterChoice::Auto;
  // Dawn device toggles (see PLATFORM.md), e.g. "skip_validation". On by default:
  // disable_robustness (Dawn's clamping of every array index costs the prefill GEMM and
  // attention kernels 5-10%; our kernels bound-check what they access themselves, and the op
  // tests run both with and without it: scripts/test.sh) and disable_workgroup_init (Dawn
  // zero-fills every workgroup's shared memory at its start: ~0.7% of a decode step on the H200;
  // our kernels write workgroup memory before they read it). "-name" turns one back off.
  std::vector<std::string> enable_toggles{"disable_robustness", "disable_workgroup_init"};
  std::vector<std::string> disable_toggles;
  // Optional features are requested when present; these let a caller leave one out.
  bool want_timestamps = true;
  bool want_subgroups = true;
  bool want_shader_f16 = true;
  // Workgroup memory per workgroup to ask for, in bytes, where it is less than the adapter's
  // maximum (0: the maximum, which is asked for otherwise): the device then offers what a smaller
  // GPU would (WebGPU guarantees 16,384 bytes), so that tests reach the routes such GPUs take.
  uint32_t max_workgroup_storage = 0;
  // Bytes one storage binding may span, where less than the adapter's maximum (0: the maximum):
  // the device then offers what a browser or a smaller GPU would (WebGPU guarantees 128 MiB), so
  // that tests reach the split of weights over several bindings.
  uint64_t max_storage_binding = 0;
  // Report the adapter that `auto` picked on stderr.
  bool announce = true;
  // Name each compute pipeline on stderr as it is created ("wgx: pipeline <label>"), in the
  // order the driver sees them: tools/vk_pipeline_stats pairs these with what the driver made
  // of each (register counts).
  bool log_pipelines = false;

  // Adds toggles from a comma-separated list: "name" enables, "-name" disables (the last word on
  // a toggle wins).
  void add_toggles(std::string_view csv);
  // Defaults overridden by WGX_ADAPTER, WGX_TOGGLES, WGX_LOG_PIPELINES (1: on) and
  // WGX_MAX_STORAGE_BINDING.
  static ContextOptions from_env();
};

// WGX_MAX_STORAGE_BINDING (bytes, for ContextOptions::max_storage_binding), 0 where unset; a
// Setup error where it is not a number.
uint64_t max_storage_binding_from_env();

struct Features {
  bool timestamp_query = false;
  bool subgroups = false;
  bool shader_f16 = false;
};

// The limits wgx reads; raw WebGPU limits stay inside the GPU layer.
struct Limits {
  uint64_t max_buffer_size = 0;
  uint64_t max_storage_buffer_binding_size = 0;
  uint64_t max_uniform_buffer_binding_size = 0;
  uint32_t max_storage_buffers_per_shader_stage = 0;
  uint32_t max_bind_groups = 0;
  uint32_t max_bindings_per_bind_group = 0;
  uint32_t min_storage_buffer_offset_alignment = 0;
  uint32_t min_uniform_buffer_offset_alignment = 0;
  uint32_t max_compute_workgroup_storage_size = 0;
  uint32_t max_compute_invocations_per_workgroup = 0;
  uint32_t max_compute_workgroup_size_x = 0;
  uint32_t max_compute_workgroup_size_y = 0;
  uint32_t max_compute_workgroup_size_z = 0;
  uint32_t max_compute_workgroups_per_dimension = 0;
};

// The pinned Dawn's number for its chromium-experimental-subgroup-matrix feature.
inline constexpr uint32_t kSubgroupMatrixFeature = WGPUFeatureName_ChromiumExperimentalSubgroupMatrix;

// A shape the adapter multiplies in subgroup matrices: M x K times K x N, accumulated in `result`.
struct SubgroupMatrixConfig {
  std::string component, result;  // "f32", "f16", "u32", "i32"
  uint32_t m = 0, n = 0, k = 0;
};

struct AdapterDescription {
  std::string vendor, architecture, device, description;
  std::string backend;       // "Vulkan", "OpenGLES", ...
  std::string adapter_type;  // "discrete GPU", "integrated GPU", "CPU", "unknown"
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t subgroup_min_size = 0, subgroup_max_size = 0;
  // Dawn's chromium-experimental-subgroup-matrix feature (by the pinned build's enum), offered
  // by the adapter, and its configurations. Reported only: no kernel uses it.
  bool subgroup_matrix = false;
  std::vector<SubgroupMatrixConfig> subgroup_matrix_configs;
  bool is_cpu = false;
  bool is_swiftshader = false;
};

class Context {
 public:
  explicit Context(const ContextOptions& options = ContextOptions::from_env());
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const AdapterDescription& adapter() const { return adapter_; }
  const Features& features() const { return features_; }
  const Limits& limits() const { return limits_; }
  const ContextOptions& options() const { return options_; }
  // Every feature the adapter offers, by WebGPU name (a number where this build's name is unknown).
  std::vector<std::string> adapter_features() const;

  // Throws the first error Dawn reported outside an error scope, or DeviceLost.
  void check(std::string_view label = {});
  bool lost() const { return lost_; }
  const std::string& lost_message() const { return lost_message_; }

  // Blocks until all submitted work has finished; then check().
  void wait_idle();

  // Destroys the device (its buffers become unusable); later calls throw DeviceLost.
  void destroy_device();

  // Runs `body` inside validation and out-of-memory error scopes and turns an error into a
  // GpuError labelled `label`.
  template <typename F>
  auto scoped(std::string_view label, F&& body) {
    push_scopes();
    struct Balance {  // pops the scopes if `body` throws, so they never leak
      Context* self;
      bool armed = true;
      ~Balance() {
        if (armed) self->pop_scopes_quietly();
      }
    } balance{this};
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      balance.armed = false;
      pop_scopes(label);
    } else {
      auto result = body();
      balance.armed = false;
      pop_scopes(label);
      return result;
    }
  }

  // Lower cap on workgroups per dimension, to exercise dispatch splitting on small work.
  void set_workgroups_per_dimension_cap_for_testing(uint32_t cap) { dispatch_cap_ = cap; }
  uint32_t workgroups_per_dimension() const { return dispatch_cap_; }

  // Raw handles, for the rest of the GPU layer only.
  WGPUInstance instance() const { return instance_.get(); }
  WGPUDevice device() const { return device_.get(); }
  WGPUQueue queue() const { return queue_.get(); }
  // Waits for one future; a DeviceLost error if the device goes away meanwhile.
  void wait(WGPUFuture future, std::string_view label);
  // Whether one future has completed (its WaitAnyOnly callback then has run); never blocks.
  bool poll(WGPUFuture future, std::string_view label);
  // A host-mappable buffer of at least `bytes`, reused by every readback (they are synchronous).
  const Buffer& readback_staging(uint64_t bytes);

 private:
  void push_scopes();
  void pop_scopes(std::string_view label);
  void pop_scopes_quietly() noexcept;
  void request_adapter();
  void request_device();

  static void on_device_lost(const WGPUDevice*, WGPUDeviceLostReason, WGPUStringView, void*,
                             void*);
  static void on_uncaptured_error(const WGPUDevice*, WGPUErrorType, WGPUStringView, void*, void*);

  ContextOptions options_;
  Handle<WGPUInstance, wgpuInstanceRelease> instance_;
  Handle<WGPUAdapter, wgpuAdapterRelease> adapter_handle_;
  Handle<WGPUDevice, wgpuDeviceRelease> device_;
  Handle<WGPUQueue, wgpuQueueRelease> queue_;
  AdapterDescription adapter_;
  Features features_;
  Limits limits_;
  WGPULimits raw_limits_{};
  uint32_t dispatch_cap_ = 0;
  bool lost_ = false;
  bool destroying_ = false;
  std::string lost_message_;
  std::optional<GpuError> pending_;
  std::unique_ptr<Buffer> staging_;
};

// Text of a WebGPU string view ("" for a null view).
std::string to_string(WGPUStringView view);
WGPUStringView view_of(std::string_view text);

}  // namespace wgx::gpu
