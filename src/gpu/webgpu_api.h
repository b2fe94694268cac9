// Our declarations of the subset of the webgpu.h C API that wgx uses.
//
// They match the Dawn build that the setup pins (npm bun-webgpu-linux-x64@0.1.7, the 2025
// "WGPUStringView / CallbackInfo / WaitAny" generation of the API) field by field: every struct
// lists its fields in the library's order with the library's types, and every enum value is the
// library's. No registry package ships a matching header, so this file is the contract; a slip
// here shows up as garbage limits (tests/gpu/test_context.cpp checks that they are plausible).
//
// Only src/gpu/ includes this file: the rest of wgx talks to the GPU layer, so another WebGPU
// implementation (a browser's) can replace it.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// ---- Handles --------------------------------------------------------------------------------
typedef struct WGPUInstanceImpl* WGPUInstance;
typedef struct WGPUAdapterImpl* WGPUAdapter;
typedef struct WGPUDeviceImpl* WGPUDevice;
typedef struct WGPUQueueImpl* WGPUQueue;
typedef struct WGPUBufferImpl* WGPUBuffer;
typedef struct WGPUShaderModuleImpl* WGPUShaderModule;
typedef struct WGPUBindGroupLayoutImpl* WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl* WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl* WGPUPipelineLayout;
typedef struct WGPUComputePipelineImpl* WGPUComputePipeline;
typedef struct WGPUCommandEncoderImpl* WGPUCommandEncoder;
typedef struct WGPUCommandBufferImpl* WGPUCommandBuffer;
typedef struct WGPUComputePassEncoderImpl* WGPUComputePassEncoder;
typedef struct WGPUQuerySetImpl* WGPUQuerySet;
typedef struct WGPUSamplerImpl* WGPUSampler;
typedef struct WGPUTextureViewImpl* WGPUTextureView;
typedef struct WGPUSurfaceImpl* WGPUSurface;

// ---- Scalars and flags ----------------------------------------------------------------------
typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;
typedef WGPUFlags WGPUBufferUsage;
typedef WGPUFlags WGPUMapMode;
typedef WGPUFlags WGPUShaderStage;

constexpr WGPUBufferUsage WGPUBufferUsage_MapRead = 1u << 0;
constexpr WGPUBufferUsage WGPUBufferUsage_MapWrite = 1u << 1;
constexpr WGPUBufferUsage WGPUBufferUsage_CopySrc = 1u << 2;
constexpr WGPUBufferUsage WGPUBufferUsage_CopyDst = 1u << 3;
constexpr WGPUBufferUsage WGPUBufferUsage_Uniform = 1u << 6;
constexpr WGPUBufferUsage WGPUBufferUsage_Storage = 1u << 7;
constexpr WGPUBufferUsage WGPUBufferUsage_Indirect = 1u << 8;
constexpr WGPUBufferUsage WGPUBufferUsage_QueryResolve = 1u << 9;
constexpr WGPUMapMode WGPUMapMode_Read = 1u << 0;
constexpr WGPUMapMode WGPUMapMode_Write = 1u << 1;
constexpr WGPUShaderStage WGPUShaderStage_Compute = 1u << 2;

constexpr size_t WGPU_STRLEN = SIZE_MAX;
constexpr uint64_t WGPU_WHOLE_SIZE = UINT64_MAX;
constexpr size_t WGPU_WHOLE_MAP_SIZE = SIZE_MAX;
constexpr uint32_t WGPU_QUERY_SET_INDEX_UNDEFINED = UINT32_MAX;

// ---- Enums ----------------------------------------------------------------------------------
enum WGPUSType : uint32_t {
  WGPUSType_ShaderSourceWGSL = 0x00000002,
  WGPUSType_DawnTogglesDescriptor = 0x0005000A,
  WGPUSType_AdapterPropertiesSubgroupMatrixConfigs = 0x0005003B,
};

enum WGPUCallbackMode : uint32_t {
  WGPUCallbackMode_WaitAnyOnly = 1,
  WGPUCallbackMode_AllowProcessEvents = 2,
  WGPUCallbackMode_AllowSpontaneous = 3,
};

enum WGPUStatus : uint32_t { WGPUStatus_Success = 1, WGPUStatus_Error = 2 };

enum WGPUWaitStatus : uint32_t {
  WGPUWaitStatus_Success = 1,
  WGPUWaitStatus_TimedOut = 2,
  WGPUWaitStatus_Error = 3,
};

enum WGPURequestAdapterStatus : uint32_t {
  WGPURequestAdapterStatus_Success = 1,
  WGPURequestAdapterStatus_CallbackCancelled = 2,
  WGPURequestAdapterStatus_Unavailable = 3,
  WGPURequestAdapterStatus_Error = 4,
};

enum WGPURequestDeviceStatus : uint32_t {
  WGPURequestDeviceStatus_Success = 1,
  WGPURequestDeviceStatus_CallbackCancelled = 2,
  WGPURequestDeviceStatus_Error = 3,
};

enum WGPUMapAsyncStatus : uint32_t {
  WGPUMapAsyncStatus_Success = 1,
  WGPUMapAsyncStatus_CallbackCancelled = 2,
  WGPUMapAsyncStatus_Error = 3,
  WGPUMapAsyncStatus_Aborted = 4,
};

enum WGPUPopErrorScopeStatus : uint32_t {
  WGPUPopErrorScopeStatus_Success = 1,
  WGPUPopErrorScopeStatus_CallbackCancelled = 2,
  WGPUPopErrorScopeStatus_Error = 3,
};

enum WGPUCreatePipelineAsyncStatus : uint32_t {
  WGPUCreatePipelineAsyncStatus_Success = 1,
  WGPUCreatePipelineAsyncStatus_CallbackCancelled = 2,
  WGPUCreatePipelineAsyncStatus_ValidationError = 3,
  WGPUCreatePipelineAsyncStatus_InternalError = 4,
};

enum WGPUQueueWorkDoneStatus : uint32_t {
  WGPUQueueWorkDoneStatus_Success = 1,
  WGPUQueueWorkDoneStatus_CallbackCancelled = 2,
  WGPUQueueWorkDoneStatus_Error = 3,
};

enum WGPUCompilationInfoRequestStatus : uint32_t {
  WGPUCompilationInfoRequestStatus_Success = 1,
  WGPUCompilationInfoRequestStatus_CallbackCancelled = 2,
};

enum WGPUCompilationMessageType : uint32_t {
  WGPUCompilationMessageType_Error = 1,
  WGPUCompilationMessageType_Warning = 2,
  WGPUCompilationMessageType_Info = 3,
};

enum WGPUErrorType : uint32_t {
  WGPUErrorType_NoError = 1,
  WGPUErrorType_Validation = 2,
  WGPUErrorType_OutOfMemory = 3,
  WGPUErrorType_Internal = 4,
  WGPUErrorType_Unknown = 5,
};

enum WGPUErrorFilter : uint32_t {
  WGPUErrorFilter_Validation = 1,
  WGPUErrorFilter_OutOfMemory = 2,
  WGPUErrorFilter_Internal = 3,
};

enum WGPUDeviceLostReason : uint32_t {
  WGPUDeviceLostReason_Unknown = 1,
  WGPUDeviceLostReason_Destroyed = 2,
  WGPUDeviceLostReason_CallbackCancelled = 3,
  WGPUDeviceLostReason_FailedCreation = 4,
};

enum WGPUBackendType : uint32_t {
  WGPUBackendType_Undefined = 0,
  WGPUBackendType_Null = 1,
  WGPUBackendType_WebGPU = 2,
  WGPUBackendType_D3D11 = 3,
  WGPUBackendType_D3D12 = 4,
  WGPUBackendType_Metal = 5,
  WGPUBackendType_Vulkan = 6,
  WGPUBackendType_OpenGL = 7,
  WGPUBackendType_OpenGLES = 8,
};

enum WGPUAdapterType : uint32_t {
  WGPUAdapterType_DiscreteGPU = 1,
  WGPUAdapterType_IntegratedGPU = 2,
  WGPUAdapterType_CPU = 3,
  WGPUAdapterType_Unknown = 4,
};

enum WGPUFeatureLevel : uint32_t {
  WGPUFeatureLevel_Undefined = 0,
  WGPUFeatureLevel_Compatibility = 1,
  WGPUFeatureLevel_Core = 2,
};

enum WGPUPowerPreference : uint32_t {
  WGPUPowerPreference_Undefined = 0,
  WGPUPowerPreference_LowPower = 1,
  WGPUPowerPreference_HighPerformance = 2,
};

enum WGPUFeatureName : uint32_t {
  WGPUFeatureName_TimestampQuery = 3,
  WGPUFeatureName_ShaderF16 = 10,
  WGPUFeatureName_Subgroups = 17,
  // Subgroup matrices (tensor cores from WGSL): this build's number; other Dawn builds differ.
  WGPUFeatureName_ChromiumExperimentalSubgroupMatrix = 0x00050038,
};

enum WGPUSubgroupMatrixComponentType : uint32_t {
  WGPUSubgroupMatrixComponentType_F32 = 1,
  WGPUSubgroupMatrixComponentType_F16 = 2,
  WGPUSubgroupMatrixComponentType_U32 = 3,
  WGPUSubgroupMatrixComponentType_I32 = 4,
};

struct WGPUSubgroupMatrixConfig {
  WGPUSubgroupMatrixComponentType componentType;
  WGPUSubgroupMatrixComponentType resultComponentType;
  uint32_t M;
  uint32_t N;
  uint32_t K;
};

enum WGPUBufferBindingType : uint32_t {
  WGPUBufferBindingType_BindingNotUsed = 0,
  WGPUBufferBindingType_Undefined = 1,
  WGPUBufferBindingType_Uniform = 2,
  WGPUBufferBindingType_Storage = 3,
  WGPUBufferBindingType_ReadOnlyStorage = 4,
};

enum WGPUQueryType : uint32_t { WGPUQueryType_Occlusion = 1, WGPUQueryType_Timestamp = 2 };

// Binding kinds we never use; declared so WGPUBindGroupLayoutEntry has its full layout.
enum WGPUSamplerBindingType : uint32_t { WGPUSamplerBindingType_BindingNotUsed = 0 };
enum WGPUTextureSampleType : uint32_t { WGPUTextureSampleType_BindingNotUsed = 0 };
enum WGPUTextureViewDimension : uint32_t { WGPUTextureViewDimension_Undefined = 0 };
enum WGPUStorageTextureAccess : uint32_t { WGPUStorageTextureAccess_BindingNotUsed = 0 };
enum WGPUTextureFormat : uint32_t { WGPUTextureFormat_Undefined = 0 };

// ---- Structs --------------------------------------------------------------------------------
struct WGPUStringView {
  const char* data;
  size_t length;
};

struct WGPUChainedStruct {
  const WGPUChainedStruct* next;
  WGPUSType sType;
};

struct WGPUFuture {
  uint64_t id;
};

struct WGPUFutureWaitInfo {
  WGPUFuture future;
  WGPUBool completed;
};

struct WGPUInstanceCapabilities {
  WGPUChainedStruct* nextInChain;
  WGPUBool timedWaitAnyEnable;
  size_t timedWaitAnyMaxCount;
};

struct WGPUInstanceDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUInstanceCapabilities capabilities;
};

struct WGPUDawnTogglesDescriptor {
  WGPUChainedStruct chain;
  size_t enabledToggleCount;
  const char* const* enabledToggles;
  size_t disabledToggleCount;
  const char* const* disabledToggles;
};

struct WGPURequestAdapterOptions {
  const WGPUChainedStruct* nextInChain;
  WGPUFeatureLevel featureLevel;
  WGPUPowerPreference powerPreference;
  WGPUBool forceFallbackAdapter;
  WGPUBackendType backendType;
  WGPUSurface compatibleSurface;
};

struct WGPUAdapterInfo {
  WGPUChainedStruct* nextInChain;
  WGPUStringView vendor;
  WGPUStringView architecture;
  WGPUStringView device;
  WGPUStringView description;
  WGPUBackendType backendType;
  WGPUAdapterType adapterType;
  uint32_t vendorID;
  uint32_t deviceID;
  uint32_t subgroupMinSize;
  uint32_t subgroupMaxSize;
};

struct WGPULimits {
  WGPUChainedStruct* nextInChain;
  uint32_t maxTextureDimension1D;
  uint32_t maxTextureDimension2D;
  uint32_t maxTextureDimension3D;
  uint32_t maxTextureArrayLayers;
  uint32_t maxBindGroups;
  uint32_t maxBindGroupsPlusVertexBuffers;
  uint32_t maxBindingsPerBindGroup;
  uint32_t maxDynamicUniformBuffersPerPipelineLayout;
  uint32_t maxDynamicStorageBuffersPerPipelineLayout;
  uint32_t maxSampledTexturesPerShaderStage;
  uint32_t maxSamplersPerShaderStage;
  uint32_t maxStorageBuffersPerShaderStage;
  uint32_t maxStorageTexturesPerShaderStage;
  uint32_t maxUniformBuffersPerShaderStage;
  uint64_t maxUniformBufferBindingSize;
  uint64_t maxStorageBufferBindingSize;
  uint32_t minUniformBufferOffsetAlignment;
  uint32_t minStorageBufferOffsetAlignment;
  uint32_t maxVertexBuffers;
  uint64_t maxBufferSize;
  uint32_t maxVertexAttributes;
  uint32_t maxVertexBufferArrayStride;
  uint32_t maxInterStageShaderVariables;
  uint32_t maxColorAttachments;
  uint32_t maxColorAttachmentBytesPerSample;
  uint32_t maxComputeWorkgroupStorageSize;
  uint32_t maxComputeInvocationsPerWorkgroup;
  uint32_t maxComputeWorkgroupSizeX;
  uint32_t maxComputeWorkgroupSizeY;
  uint32_t maxComputeWorkgroupSizeZ;
  uint32_t maxComputeWorkgroupsPerDimension;
  uint32_t maxImmediateSize;  // this build's position: after maxComputeWorkgroupsPerDimension
  uint32_t maxStorageBuffersInVertexStage;
  uint32_t maxStorageTexturesInVertexStage;
  uint32_t maxStorageBuffersInFragmentStage;
  uint32_t maxStorageTexturesInFragmentStage;
};

struct WGPUSupportedFeatures {
  size_t featureCount;
  const WGPUFeatureName* features;
};

typedef void (*WGPURequestAdapterCallback)(WGPURequestAdapterStatus status, WGPUAdapter adapter,
                                           WGPUStringView message, void* userdata1,
                                           void* userdata2);
typedef void (*WGPURequestDeviceCallback)(WGPURequestDeviceStatus status, WGPUDevice device,
                                          WGPUStringView message, void* userdata1,
                                          void* userdata2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice* device, WGPUDeviceLostReason reason,
                                       WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice* device, WGPUErrorType type,
                                            WGPUStringView message, void* userdata1,
                                            void* userdata2);
typedef void (*WGPUBufferMapCallback)(WGPUMapAsyncStatus status, WGPUStringView message,
                                      void* userdata1, void* userdata2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUPopErrorScopeStatus status, WGPUErrorType type,
                                          WGPUStringView message, void* userdata1,
                                          void* userdata2);
// This build passes a message to the work-done callback (some FFI descriptions of it omit it).
typedef void (*WGPUQueueWorkDoneCallback)(WGPUQueueWorkDoneStatus status,
                                          WGPUStringView message, void* userdata1,
                                          void* userdata2);
typedef void (*WGPUCreateComputePipelineAsyncCallback)(WGPUCreatePipelineAsyncStatus status,
                                                       WGPUComputePipeline pipeline,
                                                       WGPUStringView message, void* userdata1,
                                                       void* userdata2);
struct WGPUCompilationInfo;
typedef void (*WGPUCompilationInfoCallback)(WGPUCompilationInfoRequestStatus status,
                                            const WGPUCompilationInfo* compilationInfo,
                                            void* userdata1, void* userdata2);

// Every *CallbackInfo with a mode shares this layout.
#define WGX_CALLBACK_INFO(Name, Callback) \
  struct Name {                           \
    const WGPUChainedStruct* nextInChain; \
    WGPUCallbackMode mode;                \
    Callback callback;                    \
    void* userdata1;                      \
    void* userdata2;                      \
  }
WGX_CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
WGX_CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
WGX_CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
WGX_CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
WGX_CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
WGX_CALLBACK_INFO(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback);
WGX_CALLBACK_INFO(WGPUCompilationInfoCallbackInfo, WGPUCompilationInfoCallback);
WGX_CALLBACK_INFO(WGPUCreateComputePipelineAsyncCallbackInfo, WGPUCreateComputePipelineAsyncCallback);
#undef WGX_CALLBACK_INFO

struct WGPUUncapturedErrorCallbackInfo {
  const WGPUChainedStruct* nextInChain;
  WGPUUncapturedErrorCallback callback;
  void* userdata1;
  void* userdata2;
};

struct WGPUQueueDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUDeviceDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t requiredFeatureCount;
  const WGPUFeatureName* requiredFeatures;
  const WGPULimits* requiredLimits;
  WGPUQueueDescriptor defaultQueue;
  WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
  WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};

struct WGPUBufferDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBufferUsage usage;
  uint64_t size;
  WGPUBool mappedAtCreation;
};

struct WGPUShaderModuleDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUShaderSourceWGSL {
  WGPUChainedStruct chain;
  WGPUStringView code;
};

struct WGPUCompilationMessage {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView message;
  WGPUCompilationMessageType type;
  uint64_t lineNum;
  uint64_t linePos;
  uint64_t offset;
  uint64_t length;
};

struct WGPUCompilationInfo {
  const WGPUChainedStruct* nextInChain;
  size_t messageCount;
  const WGPUCompilationMessage* messages;
};

struct WGPUBufferBindingLayout {
  const WGPUChainedStruct* nextInChain;
  WGPUBufferBindingType type;
  WGPUBool hasDynamicOffset;
  uint64_t minBindingSize;
};

struct WGPUSamplerBindingLayout {
  const WGPUChainedStruct* nextInChain;
  WGPUSamplerBindingType type;
};

struct WGPUTextureBindingLayout {
  const WGPUChainedStruct* nextInChain;
  WGPUTextureSampleType sampleType;
  WGPUTextureViewDimension viewDimension;
  WGPUBool multisampled;
};

struct WGPUStorageTextureBindingLayout {
  const WGPUChainedStruct* nextInChain;
  WGPUStorageTextureAccess access;
  WGPUTextureFormat format;
  WGPUTextureViewDimension viewDimension;
};

struct WGPUBindGroupLayoutEntry {
  const WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUShaderStage visibility;
  uint32_t bindingArraySize;  // must be 0 (no binding arrays)
  WGPUBufferBindingLayout buffer;
  WGPUSamplerBindingLayout sampler;
  WGPUTextureBindingLayout texture;
  WGPUStorageTextureBindingLayout storageTexture;
};

struct WGPUBindGroupLayoutDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t entryCount;
  const WGPUBindGroupLayoutEntry* entries;
};

struct WGPUBindGroupEntry {
  const WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUBuffer buffer;
  uint64_t offset;
  uint64_t size;
  WGPUSampler sampler;
  WGPUTextureView textureView;
};

struct WGPUBindGroupDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBindGroupLayout layout;
  size_t entryCount;
  const WGPUBindGroupEntry* entries;
};

struct WGPUPipelineLayoutDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t bindGroupLayoutCount;
  const WGPUBindGroupLayout* bindGroupLayouts;
  uint32_t immediateSize;
};

struct WGPUConstantEntry {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView key;
  double value;
};

struct WGPUComputeState {
  const WGPUChainedStruct* nextInChain;
  WGPUShaderModule module;
  WGPUStringView entryPoint;
  size_t constantCount;
  const WGPUConstantEntry* constants;
};

struct WGPUComputePipelineDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUPipelineLayout layout;
  WGPUComputeState compute;
};

struct WGPUCommandEncoderDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUCommandBufferDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

struct WGPUPassTimestampWrites {
  const WGPUChainedStruct* nextInChain;
  WGPUQuerySet querySet;
  uint32_t beginningOfPassWriteIndex;
  uint32_t endOfPassWriteIndex;
};

struct WGPUComputePassDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  const WGPUPassTimestampWrites* timestampWrites;
};

struct WGPUQuerySetDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUQueryType type;
  uint32_t count;
};

// Layout facts of this ABI (x86-64, LP64): sizes and offsets as the pinned build's own FFI
// description computes them. A field added, dropped or retyped above fails here at compile time.
// (The WebAssembly build has 32-bit pointers; its JavaScript side reads every offset from
// gpu/web/layout.cpp instead.)
#if UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(WGPUStringView) == 16);
static_assert(sizeof(WGPUChainedStruct) == 16);
static_assert(sizeof(WGPUInstanceDescriptor) == 32);
static_assert(sizeof(WGPURequestAdapterOptions) == 32);
static_assert(offsetof(WGPURequestAdapterOptions, backendType) == 20);
static_assert(sizeof(WGPUAdapterInfo) == 96 && offsetof(WGPUAdapterInfo, subgroupMaxSize) == 92);
static_assert(sizeof(WGPULimits) == 168);
static_assert(offsetof(WGPULimits, maxUniformBufferBindingSize) == 64);
static_assert(offsetof(WGPULimits, maxBufferSize) == 96);
static_assert(offsetof(WGPULimits, maxComputeWorkgroupsPerDimension) == 144);
static_assert(offsetof(WGPULimits, maxImmediateSize) == 148);
static_assert(sizeof(WGPUDeviceDescriptor) == 144);
static_assert(offsetof(WGPUDeviceDescriptor, defaultQueue) == 48);
static_assert(offsetof(WGPUDeviceDescriptor, deviceLostCallbackInfo) == 72);
static_assert(offsetof(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo) == 112);
static_assert(sizeof(WGPUBufferDescriptor) == 48 && offsetof(WGPUBufferDescriptor, size) == 32);
static_assert(sizeof(WGPUBufferBindingLayout) == 24);
static_assert(sizeof(WGPUBindGroupLayoutEntry) == 120);
static_assert(offsetof(WGPUBindGroupLayoutEntry, buffer) == 32);
static_assert(offsetof(WGPUBindGroupLayoutEntry, storageTexture) == 96);
static_assert(sizeof(WGPUBindGroupLayoutDescriptor) == 40);
static_assert(sizeof(WGPUBindGroupEntry) == 56 && offsetof(WGPUBindGroupEntry, size) == 32);
static_assert(sizeof(WGPUBindGroupDescriptor) == 48);
static_assert(sizeof(WGPUPipelineLayoutDescriptor) == 48);
static_assert(sizeof(WGPUConstantEntry) == 32 && offsetof(WGPUConstantEntry, value) == 24);
static_assert(sizeof(WGPUComputeState) == 48);
static_assert(sizeof(WGPUComputePipelineDescriptor) == 80);
static_assert(sizeof(WGPUComputePassDescriptor) == 32);
static_assert(sizeof(WGPUPassTimestampWrites) == 24);
static_assert(sizeof(WGPUQuerySetDescriptor) == 32);
static_assert(sizeof(WGPUShaderSourceWGSL) == 32);
static_assert(sizeof(WGPURequestAdapterCallbackInfo) == 40);
static_assert(sizeof(WGPUUncapturedErrorCallbackInfo) == 32);
#endif

// ---- Functions ------------------------------------------------------------------------------
// Keep this list and tests/gpu/test_api_coverage (which checks that each one is called) in step.
WGPUInstance wgpuCreateInstance(const WGPUInstanceDescriptor* descriptor);
WGPUStatus wgpuGetInstanceCapabilities(WGPUInstanceCapabilities* capabilities);
WGPUFuture wgpuInstanceRequestAdapter(WGPUInstance instance,
                                      const WGPURequestAdapterOptions* options,
                                      WGPURequestAdapterCallbackInfo callbackInfo);
WGPUWaitStatus wgpuInstanceWaitAny(WGPUInstance instance, size_t futureCount,
                                   WGPUFutureWaitInfo* futures, uint64_t timeoutNS);
void wgpuInstanceProcessEvents(WGPUInstance instance);
void wgpuInstanceRelease(WGPUInstance instance);

WGPUStatus wgpuAdapterGetInfo(WGPUAdapter adapter, WGPUAdapterInfo* info);
void wgpuAdapterInfoFreeMembers(WGPUAdapterInfo info);
// Chained to WGPUAdapterInfo where the adapter has the subgroup-matrix feature.
struct WGPUAdapterPropertiesSubgroupMatrixConfigs {
  WGPUChainedStruct chain;
  size_t configCount;
  const WGPUSubgroupMatrixConfig* configs;
};
void wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers(WGPUAdapterPropertiesSubgroupMatrixConfigs configs);
WGPUStatus wgpuAdapterGetLimits(WGPUAdapter adapter, WGPULimits* limits);
WGPUBool wgpuAdapterHasFeature(WGPUAdapter adapter, WGPUFeatureName feature);
void wgpuAdapterGetFeatures(WGPUAdapter adapter, WGPUSupportedFeatures* features);
void wgpuSupportedFeaturesFreeMembers(WGPUSupportedFeatures features);
WGPUFuture wgpuAdapterRequestDevice(WGPUAdapter adapter, const WGPUDeviceDescriptor* descriptor,
                                    WGPURequestDeviceCallbackInfo callbackInfo);
void wgpuAdapterRelease(WGPUAdapter adapter);

WGPUStatus wgpuDeviceGetLimits(WGPUDevice device, WGPULimits* limits);
WGPUBool wgpuDeviceHasFeature(WGPUDevice device, WGPUFeatureName feature);
WGPUQueue wgpuDeviceGetQueue(WGPUDevice device);
WGPUBuffer wgpuDeviceCreateBuffer(WGPUDevice device, const WGPUBufferDescriptor* descriptor);
WGPUShaderModule wgpuDeviceCreateShaderModule(WGPUDevice device,
                                              const WGPUShaderModuleDescriptor* descriptor);
WGPUBindGroupLayout wgpuDeviceCreateBindGroupLayout(
    WGPUDevice device, const WGPUBindGroupLayoutDescriptor* descriptor);
WGPUBindGroup wgpuDeviceCreateBindGroup(WGPUDevice device,
                                        const WGPUBindGroupDescriptor* descriptor);
WGPUPipelineLayout wgpuDeviceCreatePipelineLayout(WGPUDevice device,
                                                  const WGPUPipelineLayoutDescriptor* descriptor);
WGPUComputePipeline wgpuDeviceCreateComputePipeline(
    WGPUDevice device, const WGPUComputePipelineDescriptor* descriptor);
WGPUFuture wgpuDeviceCreateComputePipelineAsync(WGPUDevice device,
                                                const WGPUComputePipelineDescriptor* descriptor,
                                                WGPUCreateComputePipelineAsyncCallbackInfo callbackInfo);
WGPUCommandEncoder wgpuDeviceCreateCommandEncoder(WGPUDevice device,
                                                  const WGPUCommandEncoderDescriptor* descriptor);
WGPUQuerySet wgpuDeviceCreateQuerySet(WGPUDevice device, const WGPUQuerySetDescriptor* descriptor);
void wgpuDevicePushErrorScope(WGPUDevice device, WGPUErrorFilter filter);
WGPUFuture wgpuDevicePopErrorScope(WGPUDevice device, WGPUPopErrorScopeCallbackInfo callbackInfo);
void wgpuDeviceDestroy(WGPUDevice device);
void wgpuDeviceRelease(WGPUDevice device);

WGPUFuture wgpuBufferMapAsync(WGPUBuffer buffer, WGPUMapMode mode, size_t offset, size_t size,
                              WGPUBufferMapCallbackInfo callbackInfo);
const void* wgpuBufferGetConstMappedRange(WGPUBuffer buffer, size_t offset, size_t size);
void* wgpuBufferGetMappedRange(WGPUBuffer buffer, size_t offset, size_t size);
void wgpuBufferUnmap(WGPUBuffer buffer);
uint64_t wgpuBufferGetSize(WGPUBuffer buffer);
void wgpuBufferDestroy(WGPUBuffer buffer);
void wgpuBufferRelease(WGPUBuffer buffer);

WGPUFuture wgpuShaderModuleGetCompilationInfo(WGPUShaderModule shaderModule,
                                              WGPUCompilationInfoCallbackInfo callbackInfo);
void wgpuShaderModuleRelease(WGPUShaderModule shaderModule);
void wgpuBindGroupLayoutRelease(WGPUBindGroupLayout bindGroupLayout);
void wgpuBindGroupRelease(WGPUBindGroup bindGroup);
void wgpuPipelineLayoutRelease(WGPUPipelineLayout pipelineLayout);
void wgpuComputePipelineRelease(WGPUComputePipeline computePipeline);

WGPUComputePassEncoder wgpuCommandEncoderBeginComputePass(
    WGPUCommandEncoder commandEncoder, const WGPUComputePassDescriptor* descriptor);
void wgpuCommandEncoderCopyBufferToBuffer(WGPUCommandEncoder commandEncoder, WGPUBuffer source,
                                          uint64_t sourceOffset, WGPUBuffer destination,
                                          uint64_t destinationOffset, uint64_t size);
void wgpuCommandEncoderClearBuffer(WGPUCommandEncoder commandEncoder, WGPUBuffer buffer,
                                   uint64_t offset, uint64_t size);
void wgpuCommandEncoderResolveQuerySet(WGPUCommandEncoder commandEncoder, WGPUQuerySet querySet,
                                       uint32_t firstQuery, uint32_t queryCount,
                                       WGPUBuffer destination, uint64_t destinationOffset);
WGPUCommandBuffer wgpuCommandEncoderFinish(WGPUCommandEncoder commandEncoder,
                                           const WGPUCommandBufferDescriptor* descriptor);
void wgpuCommandEncoderRelease(WGPUCommandEncoder commandEncoder);
void wgpuCommandBufferRelease(WGPUCommandBuffer commandBuffer);

void wgpuComputePassEncoderSetPipeline(WGPUComputePassEncoder computePassEncoder,
                                       WGPUComputePipeline pipeline);
void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder computePassEncoder,
                                        uint32_t groupIndex, WGPUBindGroup group,
                                        size_t dynamicOffsetCount,
                                        const uint32_t* dynamicOffsets);
void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder computePassEncoder,
                                              uint32_t workgroupCountX, uint32_t workgroupCountY,
                                              uint32_t workgroupCountZ);
void wgpuComputePassEncoderEnd(WGPUComputePassEncoder computePassEncoder);
void wgpuComputePassEncoderRelease(WGPUComputePassEncoder computePassEncoder);

void wgpuQueueWriteBuffer(WGPUQueue queue, WGPUBuffer buffer, uint64_t bufferOffset,
                          const void* data, size_t size);
void wgpuQueueSubmit(WGPUQueue queue, size_t commandCount, const WGPUCommandBuffer* commands);
WGPUFuture wgpuQueueOnSubmittedWorkDone(WGPUQueue queue,
                                        WGPUQueueWorkDoneCallbackInfo callbackInfo);
void wgpuQueueRelease(WGPUQueue queue);

void wgpuQuerySetDestroy(WGPUQuerySet querySet);
void wgpuQuerySetRelease(WGPUQuerySet querySet);

}  // extern "C"
