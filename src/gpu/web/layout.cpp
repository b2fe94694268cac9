// The WebAssembly build's half of the GPU layer's ABI contract: where each struct field that
// webgpu.js reads or writes sits in wasm32 memory, as this compiler lays out webgpu_api.h. The
// JavaScript side takes every offset from here at start-up (never a number of its own), so the two
// cannot drift apart.
#include <cstddef>
#include <string>

#include "gpu/webgpu_api.h"

#define WGX_FIELD(S, f) "\"" #S "." #f "\":" + std::to_string(offsetof(S, f)) + ","
#define WGX_SIZE(S) "\"" #S "\":" + std::to_string(sizeof(S)) + ","

extern "C" __attribute__((used, visibility("default"))) const char* wgx_gpu_web_layout() {
  static const std::string json = [] {
    std::string s = "{";
    s += WGX_SIZE(WGPUStringView) WGX_FIELD(WGPUStringView, data) WGX_FIELD(WGPUStringView, length);
    s += WGX_FIELD(WGPUChainedStruct, next) WGX_FIELD(WGPUChainedStruct, sType);
    s += WGX_SIZE(WGPUFutureWaitInfo) WGX_FIELD(WGPUFutureWaitInfo, future) WGX_FIELD(WGPUFutureWaitInfo, completed);
    s += WGX_FIELD(WGPUInstanceCapabilities, timedWaitAnyEnable) WGX_FIELD(WGPUInstanceCapabilities, timedWaitAnyMaxCount);
    s += WGX_FIELD(WGPURequestAdapterOptions, featureLevel) WGX_FIELD(WGPURequestAdapterOptions, powerPreference);
    s += WGX_FIELD(WGPUAdapterInfo, vendor) WGX_FIELD(WGPUAdapterInfo, architecture) WGX_FIELD(WGPUAdapterInfo, device);
    s += WGX_FIELD(WGPUAdapterInfo, description) WGX_FIELD(WGPUAdapterInfo, backendType) WGX_FIELD(WGPUAdapterInfo, adapterType);
    s += WGX_FIELD(WGPUAdapterInfo, vendorID) WGX_FIELD(WGPUAdapterInfo, deviceID);
    s += WGX_FIELD(WGPUAdapterInfo, subgroupMinSize) WGX_FIELD(WGPUAdapterInfo, subgroupMaxSize);
    // Every limit, u32 or u64, by its WebGPU name (the JavaScript names are the same).
#define WGX_LIMIT(f) "\"WGPULimits." #f "\":[" + std::to_string(offsetof(WGPULimits, f)) + "," + \
                         std::to_string(sizeof(WGPULimits::f)) + "],"
    s += WGX_LIMIT(maxTextureDimension1D) WGX_LIMIT(maxTextureDimension2D) WGX_LIMIT(maxTextureDimension3D);
    s += WGX_LIMIT(maxTextureArrayLayers) WGX_LIMIT(maxBindGroups) WGX_LIMIT(maxBindGroupsPlusVertexBuffers);
    s += WGX_LIMIT(maxBindingsPerBindGroup) WGX_LIMIT(maxDynamicUniformBuffersPerPipelineLayout);
    s += WGX_LIMIT(maxDynamicStorageBuffersPerPipelineLayout) WGX_LIMIT(maxSampledTexturesPerShaderStage);
    s += WGX_LIMIT(maxSamplersPerShaderStage) WGX_LIMIT(maxStorageBuffersPerShaderStage);
    s += WGX_LIMIT(maxStorageTexturesPerShaderStage) WGX_LIMIT(maxUniformBuffersPerShaderStage);
    s += WGX_LIMIT(maxUniformBufferBindingSize) WGX_LIMIT(maxStorageBufferBindingSize);
    s += WGX_LIMIT(minUniformBufferOffsetAlignment) WGX_LIMIT(minStorageBufferOffsetAlignment);
    s += WGX_LIMIT(maxVertexBuffers) WGX_LIMIT(maxBufferSize) WGX_LIMIT(maxVertexAttributes);
    s += WGX_LIMIT(maxVertexBufferArrayStride) WGX_LIMIT(maxInterStageShaderVariables);
    s += WGX_LIMIT(maxColorAttachments) WGX_LIMIT(maxColorAttachmentBytesPerSample);
    s += WGX_LIMIT(maxComputeWorkgroupStorageSize) WGX_LIMIT(maxComputeInvocationsPerWorkgroup);
    s += WGX_LIMIT(maxComputeWorkgroupSizeX) WGX_LIMIT(maxComputeWorkgroupSizeY) WGX_LIMIT(maxComputeWorkgroupSizeZ);
    s += WGX_LIMIT(maxComputeWorkgroupsPerDimension) WGX_LIMIT(maxImmediateSize);
    s += WGX_LIMIT(maxStorageBuffersInVertexStage) WGX_LIMIT(maxStorageTexturesInVertexStage);
    s += WGX_LIMIT(maxStorageBuffersInFragmentStage) WGX_LIMIT(maxStorageTexturesInFragmentStage);
#undef WGX_LIMIT
    s += WGX_FIELD(WGPUSupportedFeatures, featureCount) WGX_FIELD(WGPUSupportedFeatures, features);
    // Every *CallbackInfo with a mode has the same layout.
    s += WGX_FIELD(WGPUBufferMapCallbackInfo, mode) WGX_FIELD(WGPUBufferMapCallbackInfo, callback);
    s += WGX_FIELD(WGPUBufferMapCallbackInfo, userdata1) WGX_FIELD(WGPUBufferMapCallbackInfo, userdata2);
    s += WGX_FIELD(WGPUUncapturedErrorCallbackInfo, callback) WGX_FIELD(WGPUUncapturedErrorCallbackInfo, userdata1);
    s += WGX_FIELD(WGPUUncapturedErrorCallbackInfo, userdata2);
    s += WGX_FIELD(WGPUDeviceDescriptor, label) WGX_FIELD(WGPUDeviceDescriptor, requiredFeatureCount);
    s += WGX_FIELD(WGPUDeviceDescriptor, requiredFeatures) WGX_FIELD(WGPUDeviceDescriptor, requiredLimits);
    s += WGX_FIELD(WGPUDeviceDescriptor, deviceLostCallbackInfo) WGX_FIELD(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo);
    s += WGX_FIELD(WGPUBufferDescriptor, label) WGX_FIELD(WGPUBufferDescriptor, usage);
    s += WGX_FIELD(WGPUBufferDescriptor, size) WGX_FIELD(WGPUBufferDescriptor, mappedAtCreation);
    s += WGX_FIELD(WGPUShaderModuleDescriptor, nextInChain) WGX_FIELD(WGPUShaderModuleDescriptor, label);
    s += WGX_FIELD(WGPUShaderSourceWGSL, code);
    s += WGX_SIZE(WGPUCompilationMessage) WGX_FIELD(WGPUCompilationMessage, message) WGX_FIELD(WGPUCompilationMessage, type);
    s += WGX_FIELD(WGPUCompilationMessage, lineNum) WGX_FIELD(WGPUCompilationMessage, linePos);
    s += WGX_FIELD(WGPUCompilationMessage, offset) WGX_FIELD(WGPUCompilationMessage, length);
    s += WGX_SIZE(WGPUCompilationInfo) WGX_FIELD(WGPUCompilationInfo, messageCount) WGX_FIELD(WGPUCompilationInfo, messages);
    s += WGX_SIZE(WGPUBindGroupLayoutEntry) WGX_FIELD(WGPUBindGroupLayoutEntry, binding);
    s += WGX_FIELD(WGPUBindGroupLayoutEntry, visibility) WGX_FIELD(WGPUBindGroupLayoutEntry, buffer);
    s += WGX_FIELD(WGPUBufferBindingLayout, type) WGX_FIELD(WGPUBufferBindingLayout, hasDynamicOffset);
    s += WGX_FIELD(WGPUBufferBindingLayout, minBindingSize);
    s += WGX_FIELD(WGPUBindGroupLayoutDescriptor, label) WGX_FIELD(WGPUBindGroupLayoutDescriptor, entryCount);
    s += WGX_FIELD(WGPUBindGroupLayoutDescriptor, entries);
    s += WGX_SIZE(WGPUBindGroupEntry) WGX_FIELD(WGPUBindGroupEntry, binding) WGX_FIELD(WGPUBindGroupEntry, buffer);
    s += WGX_FIELD(WGPUBindGroupEntry, offset) WGX_FIELD(WGPUBindGroupEntry, size);
    s += WGX_FIELD(WGPUBindGroupDescriptor, label) WGX_FIELD(WGPUBindGroupDescriptor, layout);
    s += WGX_FIELD(WGPUBindGroupDescriptor, entryCount) WGX_FIELD(WGPUBindGroupDescriptor, entries);
    s += WGX_FIELD(WGPUPipelineLayoutDescriptor, label) WGX_FIELD(WGPUPipelineLayoutDescriptor, bindGroupLayoutCount);
    s += WGX_FIELD(WGPUPipelineLayoutDescriptor, bindGroupLayouts);
    s += WGX_SIZE(WGPUConstantEntry) WGX_FIELD(WGPUConstantEntry, key) WGX_FIELD(WGPUConstantEntry, value);
    s += WGX_FIELD(WGPUComputePipelineDescriptor, label) WGX_FIELD(WGPUComputePipelineDescriptor, layout);
    s += WGX_FIELD(WGPUComputePipelineDescriptor, compute);
    s += WGX_FIELD(WGPUComputeState, module) WGX_FIELD(WGPUComputeState, entryPoint);
    s += WGX_FIELD(WGPUComputeState, constantCount) WGX_FIELD(WGPUComputeState, constants);
    s += WGX_FIELD(WGPUCommandEncoderDescriptor, label) WGX_FIELD(WGPUCommandBufferDescriptor, label);
    s += WGX_FIELD(WGPUComputePassDescriptor, label) WGX_FIELD(WGPUComputePassDescriptor, timestampWrites);
    s += WGX_FIELD(WGPUPassTimestampWrites, querySet) WGX_FIELD(WGPUPassTimestampWrites, beginningOfPassWriteIndex);
    s += WGX_FIELD(WGPUPassTimestampWrites, endOfPassWriteIndex);
    s += WGX_FIELD(WGPUQuerySetDescriptor, label) WGX_FIELD(WGPUQuerySetDescriptor, type);
    s += WGX_FIELD(WGPUQuerySetDescriptor, count);
    s += "\"pointer\":" + std::to_string(sizeof(void*)) + "}";
    return s;
  }();
  return json.c_str();
}
