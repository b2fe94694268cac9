#include "gpu/context.h"

#include "gpu/buffer.h"

#ifndef __EMSCRIPTEN__
#include <dlfcn.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>

namespace wgx::gpu {

namespace {

GpuError setup_error(std::string message) {
  return GpuError(ErrorKind::Setup, "", std::move(message));
}

#ifndef __EMSCRIPTEN__
constexpr const char* kSwiftShaderIcd = "/usr/lib/chromium/vk_swiftshader_icd.json";

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

// Dawn loads the Vulkan loader at run time; without it, it would quietly find no adapter.
void require_library(const char* soname, const char* what, const char* install) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    throw setup_error(std::string(what) + " (" + soname + ") could not be loaded: " + dlerror() +
                      ". Install it: " + install);
  }
  dlclose(lib);
}

std::string swiftshader_icd() {
  std::string icd = env_or("WGX_SWIFTSHADER_ICD", kSwiftShaderIcd);
  return std::filesystem::exists(icd) ? icd : std::string();
}

void append_env_path(const char* name, const std::string& path) {
  std::string current = env_or(name, "");
  if (current.find(path) != std::string::npos) return;
  setenv(name, current.empty() ? path.c_str() : (current + ":" + path).c_str(), 1);
}
#endif

const char* backend_name(WGPUBackendType t) {
  switch (t) {
    case WGPUBackendType_Null: return "Null";
    case WGPUBackendType_WebGPU: return "WebGPU";
    case WGPUBackendType_D3D11: return "D3D11";
    case WGPUBackendType_D3D12: return "D3D12";
    case WGPUBackendType_Metal: return "Metal";
    case WGPUBackendType_Vulkan: return "Vulkan";
    case WGPUBackendType_OpenGL: return "OpenGL";
    case WGPUBackendType_OpenGLES: return "OpenGLES";
    default: return "undefined";
  }
}

const char* adapter_type_name(WGPUAdapterType t) {
  switch (t) {
    case WGPUAdapterType_DiscreteGPU: return "discrete GPU";
    case WGPUAdapterType_IntegratedGPU: return "integrated GPU";
    case WGPUAdapterType_CPU: return "CPU";
    default: return "unknown";
  }
}

bool contains_ci(std::string haystack, std::string needle) {
  for (auto& c : haystack) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : needle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return haystack.find(needle) != std::string::npos;
}

Limits to_limits(const WGPULimits& l) {
  Limits out;
  out.max_buffer_size = l.maxBufferSize;
  out.max_storage_buffer_binding_size = l.maxStorageBufferBindingSize;
  out.max_uniform_buffer_binding_size = l.maxUniformBufferBindingSize;
  out.max_storage_buffers_per_shader_stage = l.maxStorageBuffersPerShaderStage;
  out.max_bind_groups = l.maxBindGroups;
  out.max_bindings_per_bind_group = l.maxBindingsPerBindGroup;
  out.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  out.min_uniform_buffer_offset_alignment = l.minUniformBufferOffsetAlignment;
  out.max_compute_workgroup_storage_size = l.maxComputeWorkgroupStorageSize;
  out.max_compute_invocations_per_workgroup = l.maxComputeInvocationsPerWorkgroup;
  out.max_compute_workgroup_size_x = l.maxComputeWorkgroupSizeX;
  out.max_compute_workgroup_size_y = l.maxComputeWorkgroupSizeY;
  out.max_compute_workgroup_size_z = l.maxComputeWorkgroupSizeZ;
  out.max_compute_workgroups_per_dimension = l.maxComputeWorkgroupsPerDimension;
  return out;
}

ErrorKind kind_of(WGPUErrorType type) {
  switch (type) {
    case WGPUErrorType_Validation: return ErrorKind::Validation;
    case WGPUErrorType_OutOfMemory: return ErrorKind::OutOfMemory;
    case WGPUErrorType_Internal: return ErrorKind::Internal;
    default: return ErrorKind::Unknown;
  }
}

}  // namespace

std::string to_string(WGPUStringView view) {
  if (!view.data) return {};
  if (view.length == WGPU_STRLEN) return std::string(view.data);
  return std::string(view.data, view.length);
}

WGPUStringView view_of(std::string_view text) { return {text.data(), text.size()}; }

AdapterChoice parse_adapter_choice(std::string_view text) {
  if (text == "auto") return AdapterChoice::Auto;
  if (text == "gpu") return AdapterChoice::Gpu;
  if (text == "swiftshader") return AdapterChoice::SwiftShader;
  if (text == "gles") return AdapterChoice::Gles;
  throw setup_error("unknown adapter '" + std::string(text) +
                    "': choose one of auto, gpu, swiftshader, gles");
}

const char* to_string(AdapterChoice choice) {
  switch (choice) {
    case AdapterChoice::Auto: return "auto";
    case AdapterChoice::Gpu: return "gpu";
    case AdapterChoice::SwiftShader: return "swiftshader";
    case AdapterChoice::Gles: return "gles";
  }
  return "?";
}

void ContextOptions::add_toggles(std::string_view csv) {
  while (!csv.empty()) {
    size_t comma = csv.find(',');
    std::string_view item = csv.substr(0, comma);
    csv = comma == std::string_view::npos ? std::string_view{} : csv.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    const bool off = item.front() == '-';
    if (off) item.remove_prefix(1);
    std::erase(enable_toggles, item);
    std::erase(disable_toggles, item);
    (off ? disable_toggles : enable_toggles).emplace_back(item);
  }
}

ContextOptions ContextOptions::from_env() {
  ContextOptions o;
  if (const char* a = std::getenv("WGX_ADAPTER"); a && *a) o.adapter = parse_adapter_choice(a);
  if (const char* t = std::getenv("WGX_TOGGLES")) o.add_toggles(t);
  if (const char* l = std::getenv("WGX_LOG_PIPELINES")) o.log_pipelines = std::string_view(l) == "1";
  o.max_storage_binding = max_storage_binding_from_env();
  return o;
}

uint64_t max_storage_binding_from_env() {
  const char* v = std::getenv("WGX_MAX_STORAGE_BINDING");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(v, &end, 10);
  if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(*v))) {
    throw setup_error("WGX_MAX_STORAGE_BINDING is '" + std::string(v) + "', not a number of bytes");
  }
  return bytes;
}

Context::Context(const ContextOptions& options) : options_(options) {
  WGPUInstanceCapabilities caps{};
  if (wgpuGetInstanceCapabilities(&caps) != WGPUStatus_Success || !caps.timedWaitAnyEnable) {
    throw setup_error("this Dawn library cannot wait on futures (no timed WaitAny)");
  }
  WGPUInstanceDescriptor desc{};
  desc.capabilities.timedWaitAnyEnable = 1;
  desc.capabilities.timedWaitAnyMaxCount = caps.timedWaitAnyMaxCount;
  instance_ = decltype(instance_)(wgpuCreateInstance(&desc));
  if (!instance_) throw setup_error("wgpuCreateInstance failed");
  request_adapter();
  request_device();
}

const Buffer& Context::readback_staging(uint64_t bytes) {
  if (!staging_ || staging_->allocated() < bytes) {
    staging_.reset();  // release the old one before asking for a bigger one
    staging_ = std::make_unique<Buffer>(*this, BufferPool::size_class(bytes), BufferKind::Readback, "readback staging");
  }
  return *staging_;
}

Context::~Context() {
  staging_.reset();
  // Release the device before the instance; the handles' declaration order does the rest.
  queue_.reset();
  destroying_ = true;
  device_.reset();
  adapter_handle_.reset();
  instance_.reset();
}

void Context::request_adapter() {
  WGPURequestAdapterOptions opts{};
  opts.powerPreference = WGPUPowerPreference_HighPerformance;
  opts.featureLevel = WGPUFeatureLevel_Core;
  opts.backendType = WGPUBackendType_Vulkan;
  const AdapterChoice choice = options_.adapter;
#ifdef __EMSCRIPTEN__
  // In the WebAssembly build the page's (or Node.js's) WebGPU decides which adapter exists; the
  // checks after the request still hold it to the choice.
  if (choice == AdapterChoice::Gles) throw setup_error("--adapter gles: not available where WebGPU comes from the browser");
#else
  constexpr const char* kVulkanInstall = "apt-get install libvulkan1";
  if (choice == AdapterChoice::Gles) {
    require_library("libEGL.so.1", "the EGL library for the OpenGL ES adapter",
                    "apt-get install libegl1 libegl-mesa0 libgles2");
    setenv("EGL_PLATFORM", env_or("EGL_PLATFORM", "surfaceless").c_str(), 1);
    opts.backendType = WGPUBackendType_OpenGLES;
    opts.featureLevel = WGPUFeatureLevel_Compatibility;
  } else {
    require_library("libvulkan.so.1", "the Vulkan loader", kVulkanInstall);
  }
  if (choice == AdapterChoice::SwiftShader) {
    std::string icd = swiftshader_icd();
    if (icd.empty()) {
      throw setup_error(std::string("SwiftShader's Vulkan driver was not found at ") +
                        env_or("WGX_SWIFTSHADER_ICD", kSwiftShaderIcd) +
                        ": install it with `apt-get install --no-install-recommends "
                        "chromium-common`, or point WGX_SWIFTSHADER_ICD at its ICD json");
    }
    // The loader sees SwiftShader's driver alone, and the check below makes sure that Dawn gave
    // us SwiftShader. Not forceFallbackAdapter: this Dawn answers it with "No supported
    // adapters" for the ICD that chromium-common installs.
    setenv("VK_DRIVER_FILES", icd.c_str(), 1);
    setenv("VK_ICD_FILENAMES", icd.c_str(), 1);
  } else if (choice == AdapterChoice::Auto) {
    // A real GPU wins on power preference; SwiftShader is there for machines without one.
    if (std::string icd = swiftshader_icd(); !icd.empty()) append_env_path("VK_ADD_DRIVER_FILES", icd);
  }
#endif

  struct Result {
    WGPUAdapter adapter = nullptr;
    std::string message;
  } result;
  WGPURequestAdapterCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message,
                   void* ud, void*) {
    auto* r = static_cast<Result*>(ud);
    if (status == WGPURequestAdapterStatus_Success) r->adapter = adapter;
    r->message = to_string(message);
  };
  cb.userdata1 = &result;
  wait(wgpuInstanceRequestAdapter(instance_.get(), &opts, cb), "request adapter");
  if (!result.adapter) {
    std::string hint =
        choice == AdapterChoice::Gles
            ? "is Mesa's EGL installed (apt-get install libegl-mesa0 libgles2)?"
            : "does the Vulkan loader find a driver? For a GPU, install its Vulkan driver (or "
              "set VK_DRIVER_FILES to its ICD json); for the CPU, install chromium-common "
              "(SwiftShader) and use --adapter swiftshader";
    throw setup_error(std::string("no WebGPU adapter for --adapter ") + to_string(choice) +
                      (result.message.empty() ? "" : " (Dawn: " + result.message + ")") +
                      "; " + hint);
  }
  adapter_handle_ = decltype(adapter_handle_)(result.adapter);

  WGPUAdapterInfo info{};
#ifndef __EMSCRIPTEN__  // a browser's WebGPU has no such feature
  WGPUAdapterPropertiesSubgroupMatrixConfigs matrices{};
  matrices.chain.sType = WGPUSType_AdapterPropertiesSubgroupMatrixConfigs;
  adapter_.subgroup_matrix = wgpuAdapterHasFeature(result.adapter, WGPUFeatureName_ChromiumExperimentalSubgroupMatrix);
  if (adapter_.subgroup_matrix) info.nextInChain = &matrices.chain;
#endif
  if (wgpuAdapterGetInfo(result.adapter, &info) != WGPUStatus_Success) {
    throw setup_error("wgpuAdapterGetInfo failed");
  }
#ifndef __EMSCRIPTEN__
  if (adapter_.subgroup_matrix) {
    auto type_name = [](WGPUSubgroupMatrixComponentType t) -> std::string {
      switch (t) {
        case WGPUSubgroupMatrixComponentType_F32: return "f32";
        case WGPUSubgroupMatrixComponentType_F16: return "f16";
        case WGPUSubgroupMatrixComponentType_U32: return "u32";
        case WGPUSubgroupMatrixComponentType_I32: return "i32";
      }
      return "type " + std::to_string(static_cast<uint32_t>(t));
    };
    for (size_t i = 0; i < matrices.configCount; ++i) {
      const WGPUSubgroupMatrixConfig& c = matrices.configs[i];
      adapter_.subgroup_matrix_configs.push_back({type_name(c.componentType), type_name(c.resultComponentType), c.M, c.N, c.K});
    }
    wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers(matrices);
  }
#endif
  adapter_.vendor = to_string(info.vendor);
  adapter_.architecture = to_string(info.architecture);
  adapter_.device = to_string(info.device);
  adapter_.description = to_string(info.description);
  adapter_.backend = backend_name(info.backendType);
  adapter_.adapter_type = adapter_type_name(info.adapterType);
  adapter_.vendor_id = info.vendorID;
  adapter_.device_id = info.deviceID;
  adapter_.subgroup_min_size = info.subgroupMinSize;
  adapter_.subgroup_max_size = info.subgroupMaxSize;
  adapter_.is_cpu = info.adapterType == WGPUAdapterType_CPU;
  adapter_.is_swiftshader = contains_ci(adapter_.device + " " + adapter_.description +
                                            " " + adapter_.vendor, "swiftshader");
  const WGPUBackendType backend = info.backendType;
  wgpuAdapterInfoFreeMembers(info);

  if (backend == WGPUBackendType_Null) {
    throw setup_error("Dawn offered its Null backend, which computes nothing; refusing it");
  }
  if (choice == AdapterChoice::Gpu && adapter_.is_cpu) {
    throw setup_error("--adapter gpu: no GPU found, only the CPU adapter '" + adapter_.device +
                      "'. Install the GPU's Vulkan driver (or set VK_DRIVER_FILES to its ICD "
                      "json), or use --adapter swiftshader");
  }
  if (choice == AdapterChoice::SwiftShader && !adapter_.is_swiftshader) {
    throw setup_error("--adapter swiftshader: Dawn returned '" + adapter_.device +
                      "' instead of SwiftShader");
  }
  if (choice == AdapterChoice::Auto && adapter_.is_cpu && options_.announce) {
    std::fprintf(stderr, "wgx: no GPU adapter found; using %s (%s, CPU)\n",
                 adapter_.device.c_str(), adapter_.backend.c_str());
  }
}

void Context::request_device() {
  WGPUAdapter adapter = adapter_handle_.get();
  if (wgpuAdapterGetLimits(adapter, &raw_limits_) != WGPUStatus_Success) {
    throw setup_error("wgpuAdapterGetLimits failed");
  }
  raw_limits_.nextInChain = nullptr;
  if (options_.max_workgroup_storage > 0) {
    raw_limits_.maxComputeWorkgroupStorageSize =
        std::min(raw_limits_.maxComputeWorkgroupStorageSize, options_.max_workgroup_storage);
  }
  if (options_.max_storage_binding > 0) {
    raw_limits_.maxStorageBufferBindingSize =
        std::min(raw_limits_.maxStorageBufferBindingSize, options_.max_storage_binding);
  }

  std::vector<WGPUFeatureName> wanted;
  auto want = [&](bool on, WGPUFeatureName f) {
    if (on && wgpuAdapterHasFeature(adapter, f)) wanted.push_back(f);
  };
  want(options_.want_timestamps, WGPUFeatureName_TimestampQuery);
  want(options_.want_subgroups, WGPUFeatureName_Subgroups);
  want(options_.want_shader_f16, WGPUFeatureName_ShaderF16);

  std::vector<const char*> on, off;
  for (auto& t : options_.enable_toggles) on.push_back(t.c_str());
  for (auto& t : options_.disable_toggles) off.push_back(t.c_str());
  // On SwiftShader, the Vulkan extension that zero-fills workgroup memory makes each pipeline
  // take 1.2-2.7 s to compile (34-80 ms without it); Dawn then zero-fills in the shader instead,
  // which is as safe.
  if (adapter_.is_swiftshader) off.push_back("use_vulkan_zero_initialize_workgroup_memory_extension");
  // Dawn rounds timestamps to 2^16 ns by default (a browser privacy measure); profiling a 4 us
  // dispatch needs the real clock. A caller can still turn quantization on explicitly.
  if (std::find(options_.enable_toggles.begin(), options_.enable_toggles.end(),
                "timestamp_quantization") == options_.enable_toggles.end()) {
    off.push_back("timestamp_quantization");
  }
  WGPUDawnTogglesDescriptor toggles{};
  toggles.chain.sType = WGPUSType_DawnTogglesDescriptor;
  toggles.enabledToggleCount = on.size();
  toggles.enabledToggles = on.data();
  toggles.disabledToggleCount = off.size();
  toggles.disabledToggles = off.data();

  WGPUDeviceDescriptor desc{};
  desc.nextInChain = &toggles.chain;
  desc.label = view_of("wgx");
  desc.requiredFeatureCount = wanted.size();
  desc.requiredFeatures = wanted.data();
  desc.requiredLimits = &raw_limits_;
  desc.defaultQueue.label = view_of("wgx queue");
  desc.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  desc.deviceLostCallbackInfo.callback = &Context::on_device_lost;
  desc.deviceLostCallbackInfo.userdata1 = this;
  desc.uncapturedErrorCallbackInfo.callback = &Context::on_uncaptured_error;
  desc.uncapturedErrorCallbackInfo.userdata1 = this;

  struct Result {
    WGPUDevice device = nullptr;
    std::string message;
  } result;
  WGPURequestDeviceCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                   void* ud, void*) {
    auto* r = static_cast<Result*>(ud);
    if (status == WGPURequestDeviceStatus_Success) r->device = device;
    r->message = to_string(message);
  };
  cb.userdata1 = &result;
  wait(wgpuAdapterRequestDevice(adapter, &desc, cb), "request device");
  if (!result.device) {
    throw setup_error("could not create a device on '" + adapter_.device + "': " + result.message);
  }
  device_ = decltype(device_)(result.device);
  queue_ = decltype(queue_)(wgpuDeviceGetQueue(result.device));

  WGPULimits granted{};
  if (wgpuDeviceGetLimits(result.device, &granted) != WGPUStatus_Success) {
    throw setup_error("wgpuDeviceGetLimits failed");
  }
  limits_ = to_limits(granted);
  // WebGPU raises a limit asked for below its default (128 MiB here) to the default; the lower
  // value is reported anyway, so that what is built on this context keeps under it.
  if (options_.max_storage_binding > 0) {
    limits_.max_storage_buffer_binding_size =
        std::min(limits_.max_storage_buffer_binding_size, options_.max_storage_binding);
  }
  dispatch_cap_ = limits_.max_compute_workgroups_per_dimension;
  features_.timestamp_query = wgpuDeviceHasFeature(result.device, WGPUFeatureName_TimestampQuery);
  features_.subgroups = wgpuDeviceHasFeature(result.device, WGPUFeatureName_Subgroups);
  features_.shader_f16 = wgpuDeviceHasFeature(result.device, WGPUFeatureName_ShaderF16);
}

std::vector<std::string> Context::adapter_features() const {
  static const char* const kCoreNames[] = {
      nullptr, "depth-clip-control", "depth32float-stencil8", "timestamp-query",
      "texture-compression-bc", "texture-compression-bc-sliced-3d", "texture-compression-etc2",
      "texture-compression-astc", "texture-compression-astc-sliced-3d",
      "indirect-first-instance", "shader-f16", "rg11b10ufloat-renderable", "bgra8unorm-storage",
      "float32-filterable", "float32-blendable", "clip-distances", "dual-source-blending",
      "subgroups", "core-features-and-limits"};
  WGPUSupportedFeatures supported{};
  wgpuAdapterGetFeatures(adapter_handle_.get(), &supported);
  std::vector<std::string> names;
  for (size_t i = 0; i < supported.featureCount; ++i) {
    const uint32_t f = supported.features[i];
    const bool known = f < std::size(kCoreNames) && kCoreNames[f];
    names.push_back(known ? kCoreNames[f] : "dawn-" + std::to_string(f));
  }
  wgpuSupportedFeaturesFreeMembers(supported);
  return names;
}

void Context::on_device_lost(const WGPUDevice*, WGPUDeviceLostReason reason,
                             WGPUStringView message, void* ud, void*) {
  auto* self = static_cast<Context*>(ud);
  if (self->destroying_) return;
  self->lost_ = true;
  self->lost_message_ = to_string(message);
  if (self->lost_message_.empty()) {
    self->lost_message_ = reason == WGPUDeviceLostReason_Destroyed ? "the device was destroyed"
                                                                   : "the device was lost";
  }
}

void Context::on_uncaptured_error(const WGPUDevice*, WGPUErrorType type, WGPUStringView message,
                                  void* ud, void*) {
  auto* self = static_cast<Context*>(ud);
  if (!self->pending_) self->pending_.emplace(kind_of(type), "", to_string(message));
}

void Context::check(std::string_view label) {
  // Delivers callbacks that wait for the instance to be polled (device loss, errors).
  if (instance_) wgpuInstanceProcessEvents(instance_.get());
  if (lost_) throw GpuError(ErrorKind::DeviceLost, std::string(label), lost_message_);
  if (pending_) {
    GpuError e(pending_->kind(), label.empty() ? pending_->label() : std::string(label),
               pending_->message());
    pending_.reset();
    throw e;
  }
}

void Context::wait(WGPUFuture future, std::string_view label) {
  WGPUFutureWaitInfo info{future, 0};
  WGPUWaitStatus status = wgpuInstanceWaitAny(instance_.get(), 1, &info, UINT64_MAX);
  if (status != WGPUWaitStatus_Success || !info.completed) {
    if (lost_) check(label);
    throw GpuError(ErrorKind::Internal, std::string(label),
                   "waiting for the device failed (status " + std::to_string(status) + ")");
  }
}

bool Context::poll(WGPUFuture future, std::string_view label) {
  WGPUFutureWaitInfo info{future, 0};
  const WGPUWaitStatus status = wgpuInstanceWaitAny(instance_.get(), 1, &info, 0);
  if (status == WGPUWaitStatus_TimedOut) return false;
  if (status != WGPUWaitStatus_Success) {
    if (lost_) check(label);
    throw GpuError(ErrorKind::Internal, std::string(label),
                   "polling the device failed (status " + std::to_string(status) + ")");
  }
  return info.completed != 0;
}

void Context::wait_idle() {
  check("wait for the queue");
  WGPUQueueWorkDoneCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  WGPUQueueWorkDoneStatus status = WGPUQueueWorkDoneStatus_Error;
  cb.callback = [](WGPUQueueWorkDoneStatus s, WGPUStringView, void* ud, void*) {
    *static_cast<WGPUQueueWorkDoneStatus*>(ud) = s;
  };
  cb.userdata1 = &status;
  wait(wgpuQueueOnSubmittedWorkDone(queue_.get(), cb), "wait for the queue");
  check("wait for the queue");
  if (status != WGPUQueueWorkDoneStatus_Success) {
    throw GpuError(ErrorKind::Internal, "wait for the queue", "the queue did not finish its work");
  }
}

void Context::destroy_device() {
  if (device_) wgpuDeviceDestroy(device_.get());
}

void Context::push_scopes() {
  if (lost_) check();
  wgpuDevicePushErrorScope(device_.get(), WGPUErrorFilter_OutOfMemory);
  wgpuDevicePushErrorScope(device_.get(), WGPUErrorFilter_Validation);
}

void Context::pop_scopes_quietly() noexcept {
  try {
    pop_scopes("");
  } catch (...) {  // the error that unwinds us matters more than this one
  }
}

void Context::pop_scopes(std::string_view label) {
  struct Popped {
    WGPUErrorType type = WGPUErrorType_NoError;
    std::string message;
  };
  Popped popped[2];  // validation (inner), then out-of-memory (outer)
  for (Popped& p : popped) {
    WGPUPopErrorScopeCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = [](WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView message,
                     void* ud, void*) {
      auto* out = static_cast<Popped*>(ud);
      if (status != WGPUPopErrorScopeStatus_Success) return;
      out->type = type;
      out->message = to_string(message);
    };
    cb.userdata1 = &p;
    wait(wgpuDevicePopErrorScope(device_.get(), cb), label);
  }
  check(label);
  for (const Popped& p : popped) {
    if (p.type != WGPUErrorType_NoError) {
      throw GpuError(kind_of(p.type), std::string(label), p.message);
    }
  }
}

}  // namespace wgx::gpu
