// A Vulkan layer that reports what the driver made of every compute pipeline: it turns on
// VK_KHR_pipeline_executable_properties when the device is created, asks each
// vkCreateComputePipelines for statistics (VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR), and
// prints them (register count, shared memory, ... whatever the driver reports) as each pipeline
// is created; wgx names its pipelines on the same stream just before (WGX_LOG_PIPELINES=1). A
// development tool for the GPU machine: WebGPU shows no register counts, and a decode kernel's
// registers decide how many of its workgroups an SM holds at once. README.md says how to build
// and use it.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex mu;
PFN_vkGetInstanceProcAddr next_gipa = nullptr;
VkInstance instance_made = VK_NULL_HANDLE;  // instance-level functions are looked up on it
struct DeviceFns {
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  PFN_vkCreateComputePipelines create = nullptr;
  PFN_vkGetPipelineExecutablePropertiesKHR props = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR stats = nullptr;
  bool enabled = false;  // the extension is on: statistics can be asked for
};
std::map<VkDevice, DeviceFns> devices;
FILE* out = nullptr;

FILE* sink() {
  if (!out) {
    const char* path = std::getenv("WGX_VK_STATS");
    out = path && *path ? std::fopen(path, "a") : nullptr;
    if (!out) out = stderr;
  }
  return out;
}

std::string statistics(const DeviceFns& d, VkDevice device, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, nullptr, pipeline};
  uint32_t n = 0;
  if (d.props(device, &info, &n, nullptr) != VK_SUCCESS) return "no executable properties";
  VkPipelineExecutablePropertiesKHR blank{};
  blank.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
  std::vector<VkPipelineExecutablePropertiesKHR> props(n, blank);
  d.props(device, &info, &n, props.data());
  std::string s;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ex{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, pipeline, e};
    uint32_t m = 0;
    d.stats(device, &ex, &m, nullptr);
    VkPipelineExecutableStatisticKHR none{};
    none.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
    std::vector<VkPipelineExecutableStatisticKHR> st(m, none);
    d.stats(device, &ex, &m, st.data());
    if (n > 1) s += std::string(e ? "; " : "") + props[e].name + ": ";
    for (uint32_t i = 0; i < m; ++i) {
      char v[64];
      switch (st[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: std::snprintf(v, sizeof v, "%s", st[i].value.b32 ? "yes" : "no"); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: std::snprintf(v, sizeof v, "%lld", static_cast<long long>(st[i].value.i64)); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: std::snprintf(v, sizeof v, "%llu", static_cast<unsigned long long>(st[i].value.u64)); break;
        default: std::snprintf(v, sizeof v, "%g", st[i].value.f64);
      }
      s += std::string(i ? ", " : "") + st[i].name + " " + v;
    }
  }
  return s;
}

VKAPI_ATTR VkResult VKAPI_CALL create_compute_pipelines(VkDevice device, VkPipelineCache cache, uint32_t count,
                                                        const VkComputePipelineCreateInfo* infos,
                                                        const VkAllocationCallbacks* alloc, VkPipeline* pipelines) {
  DeviceFns d;
  {
    std::lock_guard<std::mutex> lock(mu);
    d = devices[device];
  }
  std::vector<VkComputePipelineCreateInfo> mine(infos, infos + count);
  if (d.enabled)
    for (auto& i : mine) i.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  const VkResult r = d.create(device, cache, count, mine.data(), alloc, pipelines);
  if (r != VK_SUCCESS || !d.enabled) return r;
  std::lock_guard<std::mutex> lock(mu);
  for (uint32_t i = 0; i < count; ++i) {
    const std::string s = statistics(d, device, pipelines[i]);
    std::fprintf(sink(), "pipeline %#llx: %s\n", static_cast<unsigned long long>(reinterpret_cast<uint64_t>(pipelines[i])), s.c_str());
  }
  std::fflush(sink());
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* alloc,
                                               VkInstance* instance) {
  auto* link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(info->pNext));
  while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
    link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(link->pNext));
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  const VkResult r = create(info, alloc, instance);
  if (r == VK_SUCCESS) instance_made = *instance;
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical, const VkDeviceCreateInfo* info,
                                             const VkAllocationCallbacks* alloc, VkDevice* device) {
  auto* link = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(info->pNext));
  while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
    link = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(link->pNext));
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;

  // Turn the extension on where the driver has it and the application has not.
  auto enumerate = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(gipa(instance_made, "vkEnumerateDeviceExtensionProperties"));
  uint32_t n = 0;
  enumerate(physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  enumerate(physical, nullptr, &n, exts.data());
  bool have = false, asked = false;
  for (const auto& e : exts) have |= std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
  for (uint32_t i = 0; i < info->enabledExtensionCount; ++i)
    asked |= std::strcmp(info->ppEnabledExtensionNames[i], VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
  VkDeviceCreateInfo mine = *info;
  std::vector<const char*> names(info->ppEnabledExtensionNames, info->ppEnabledExtensionNames + info->enabledExtensionCount);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, const_cast<void*>(info->pNext), VK_TRUE};
  if (have && !asked) {
    names.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    mine.enabledExtensionCount = static_cast<uint32_t>(names.size());
    mine.ppEnabledExtensionNames = names.data();
    mine.pNext = &feature;
  }
  auto create = reinterpret_cast<PFN_vkCreateDevice>(gipa(instance_made, "vkCreateDevice"));
  const VkResult r = create(physical, &mine, alloc, device);
  if (r != VK_SUCCESS) return r;
  DeviceFns d;
  d.gdpa = gdpa;
  d.create = reinterpret_cast<PFN_vkCreateComputePipelines>(gdpa(*device, "vkCreateComputePipelines"));
  d.props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(gdpa(*device, "vkGetPipelineExecutablePropertiesKHR"));
  d.stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(gdpa(*device, "vkGetPipelineExecutableStatisticsKHR"));
  d.enabled = have && d.props && d.stats;
  std::lock_guard<std::mutex> lock(mu);
  devices[*device] = d;
  std::fprintf(sink(), "device %p: pipeline statistics %s\n", static_cast<void*>(*device),
               d.enabled ? "on" : "unavailable (no VK_KHR_pipeline_executable_properties)");
  std::fflush(sink());
  return r;
}

PFN_vkVoidFunction own(const char* name);

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* name) {
  if (PFN_vkVoidFunction f = own(name)) return f;
  std::lock_guard<std::mutex> lock(mu);
  auto it = devices.find(device);
  return it == devices.end() ? nullptr : it->second.gdpa(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance, const char* name) {
  if (PFN_vkVoidFunction f = own(name)) return f;
  return next_gipa ? next_gipa(instance, name) : nullptr;
}

PFN_vkVoidFunction own(const char* name) {
  const std::string n = name;
  if (n == "vkGetInstanceProcAddr") return reinterpret_cast<PFN_vkVoidFunction>(&get_instance_proc_addr);
  if (n == "vkGetDeviceProcAddr") return reinterpret_cast<PFN_vkVoidFunction>(&get_device_proc_addr);
  if (n == "vkCreateInstance") return reinterpret_cast<PFN_vkVoidFunction>(&create_instance);
  if (n == "vkCreateDevice") return reinterpret_cast<PFN_vkVoidFunction>(&create_device);
  if (n == "vkCreateComputePipelines") return reinterpret_cast<PFN_vkVoidFunction>(&create_compute_pipelines);
  return nullptr;
}

}  // namespace

extern "C" VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
  v->pfnGetInstanceProcAddr = &get_instance_proc_addr;
  v->pfnGetDeviceProcAddr = &get_device_proc_addr;
  v->pfnGetPhysicalDeviceProcAddr = nullptr;
  return VK_SUCCESS;
}
