#include "gpu/kernel.h"

#include <cstdio>
#include <sstream>
#include <utility>

namespace wgx::gpu {

namespace {

// The text of 1-based `line` in `source`, for error messages.
std::string source_line(const std::string& source, uint64_t line) {
  std::istringstream in(source);
  std::string text;
  for (uint64_t i = 1; std::getline(in, text); ++i) {
    if (i == line) return text;
  }
  return {};
}

struct FirstError {
  bool found = false;
  std::string message;
  uint64_t line = 0, column = 0;
};

FirstError compilation_error(Context& ctx, WGPUShaderModule module, const std::string& label) {
  FirstError first;
  WGPUCompilationInfoCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUCompilationInfoRequestStatus status, const WGPUCompilationInfo* info,
                   void* ud, void*) {
    auto* out = static_cast<FirstError*>(ud);
    if (status != WGPUCompilationInfoRequestStatus_Success || !info) return;
    for (size_t i = 0; i < info->messageCount; ++i) {
      const WGPUCompilationMessage& m = info->messages[i];
      if (m.type != WGPUCompilationMessageType_Error) continue;
      out->found = true;
      out->message = to_string(m.message);
      out->line = m.lineNum;
      out->column = m.linePos;
      return;
    }
  };
  cb.userdata1 = &first;
  ctx.wait(wgpuShaderModuleGetCompilationInfo(module, cb), label);
  return first;
}

WGPUBufferBindingType binding_type(Binding b) {
  switch (b) {
    case Binding::Uniform: return WGPUBufferBindingType_Uniform;
    case Binding::Storage: return WGPUBufferBindingType_Storage;
    case Binding::ReadOnlyStorage: return WGPUBufferBindingType_ReadOnlyStorage;
  }
  return WGPUBufferBindingType_Undefined;
}

}  // namespace

std::string KernelKey::name() const { return variant.empty() ? template_id : template_id + '[' + variant + ']'; }

std::string KernelKey::to_string() const {
  std::ostringstream s;
  s << name();
  if (!constants.empty()) {
    s << '{';
    for (size_t i = 0; i < constants.size(); ++i) {
      s << (i ? "," : "") << constants[i].first << '=' << constants[i].second;
    }
    s << '}';
  }
  return s.str();
}

size_t KernelKeyHash::operator()(const KernelKey& key) const {
  size_t h = std::hash<std::string>{}(key.template_id);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  mix(std::hash<std::string>{}(key.variant));
  for (const auto& [name, value] : key.constants) {
    mix(std::hash<std::string>{}(name));
    mix(std::hash<double>{}(value));
  }
  return h;
}

// What an asynchronous pipeline creation's callback reports. The callback runs inside a wait for
// its future; a kernel destroyed before that leaves it `orphaned`, and the callback then frees it.
struct Kernel::Pending {
  WGPUFuture future{};
  bool done = false, orphaned = false;
  WGPUCreatePipelineAsyncStatus status = WGPUCreatePipelineAsyncStatus_InternalError;
  WGPUComputePipeline pipeline = nullptr;
  std::string message;
};

Kernel::Kernel(Context& ctx, KernelKey key, const KernelSource& source, bool wait)
    : key_(std::move(key)), label_(key_.to_string()), bindings_(source.bindings), ctx_(&ctx) {
  WGPUShaderSourceWGSL wgsl{};
  wgsl.chain.sType = WGPUSType_ShaderSourceWGSL;
  wgsl.code = view_of(source.wgsl);
  WGPUShaderModuleDescriptor mdesc{};
  mdesc.nextInChain = &wgsl.chain;
  mdesc.label = view_of(label_);

  // Compile inside error scopes, then ask for the compilation messages: they carry the line.
  FirstError first;
  Handle<WGPUShaderModule, wgpuShaderModuleRelease> module;
  try {
    ctx.scoped(label_, [&] {
      module = decltype(module)(wgpuDeviceCreateShaderModule(ctx.device(), &mdesc));
      first = compilation_error(ctx, module.get(), label_);
    });
  } catch (const GpuError& e) {
    if (e.kind() != ErrorKind::Validation && e.kind() != ErrorKind::Unknown) throw;
    if (!first.found) {
      first.found = true;
      first.message = e.message();
    }
  }
  if (first.found) {
    std::string text = source_line(source.wgsl, first.line);
    std::string message = first.message;
    if (!text.empty()) message += "\n  " + std::to_string(first.line) + " | " + text;
    throw GpuError(ErrorKind::ShaderCompile, label_, message, first.line, first.column);
  }

  std::vector<WGPUBindGroupLayoutEntry> entries(bindings_.size());
  for (size_t i = 0; i < bindings_.size(); ++i) {
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].visibility = WGPUShaderStage_Compute;
    entries[i].buffer.type = binding_type(bindings_[i]);
  }
  WGPUBindGroupLayoutDescriptor ldesc{};
  ldesc.label = view_of(label_);
  ldesc.entryCount = entries.size();
  ldesc.entries = entries.data();

  std::vector<WGPUConstantEntry> constants(key_.constants.size());
  for (size_t i = 0; i < constants.size(); ++i) {
    constants[i].key = view_of(key_.constants[i].first);
    constants[i].value = key_.constants[i].second;
  }

  ctx.scoped(label_, [&] {
    layout_ = decltype(layout_)(wgpuDeviceCreateBindGroupLayout(ctx.device(), &ldesc));
    WGPUBindGroupLayout layouts[] = {layout_.get()};
    WGPUPipelineLayoutDescriptor pdesc{};
    pdesc.label = view_of(label_);
    pdesc.bindGroupLayoutCount = 1;
    pdesc.bindGroupLayouts = layouts;
    Handle<WGPUPipelineLayout, wgpuPipelineLayoutRelease> playout(
        wgpuDeviceCreatePipelineLayout(ctx.device(), &pdesc));
    WGPUComputePipelineDescriptor cdesc{};
    cdesc.label = view_of(label_);
    cdesc.layout = playout.get();
    cdesc.compute.module = module.get();
    cdesc.compute.entryPoint = view_of(source.entry_point);
    cdesc.compute.constantCount = constants.size();
    cdesc.compute.constants = constants.data();
    if (ctx.options().log_pipelines) std::fprintf(stderr, "wgx: pipeline %s\n", label_.c_str());
    if (wait) {
      pipeline_ = decltype(pipeline_)(wgpuDeviceCreateComputePipeline(ctx.device(), &cdesc));
      return;
    }
    WGPUCreateComputePipelineAsyncCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = [](WGPUCreatePipelineAsyncStatus status, WGPUComputePipeline pipeline, WGPUStringView message,
                     void* ud, void*) {
      auto* p = static_cast<Pending*>(ud);
      if (p->orphaned) {
        if (pipeline) wgpuComputePipelineRelease(pipeline);
        delete p;
        return;
      }
      p->done = true;
      p->status = status;
      p->pipeline = pipeline;
      p->message = to_string(message);
    };
    pending_ = new Pending;
    cb.userdata1 = pending_;
    pending_->future = wgpuDeviceCreateComputePipelineAsync(ctx.device(), &cdesc, cb);
  });
}

Kernel::~Kernel() {
  if (!pending_) return;
  if (pending_->done) {
    if (pending_->pipeline) wgpuComputePipelineRelease(pending_->pipeline);
    delete pending_;
  } else {
    pending_->orphaned = true;  // its callback frees it
  }
}

void Kernel::ready() const {
  if (!pending_) return;
  if (!pending_->done) ctx_->wait(pending_->future, label_);
  std::unique_ptr<Pending> p(std::exchange(pending_, nullptr));
  pipeline_ = decltype(pipeline_)(p->pipeline);
  if (p->status == WGPUCreatePipelineAsyncStatus_Success && p->pipeline) return;
  const ErrorKind kind = p->status == WGPUCreatePipelineAsyncStatus_ValidationError ? ErrorKind::Validation
                                                                                    : ErrorKind::Internal;
  throw GpuError(kind, label_, "creating the compute pipeline failed: " + p->message);
}

const Kernel& PipelineCache::get(const KernelKey& key,
                                 const std::function<KernelSource()>& make_source) {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return *it->second;
  auto kernel = std::make_unique<Kernel>(ctx_, key, make_source(), false);
  return *kernels_.emplace(key, std::move(kernel)).first->second;
}

void PipelineCache::ready() const {
  for (const auto& [key, kernel] : kernels_) kernel->ready();
}

BindGroup::BindGroup(Context& ctx, const Kernel& kernel, const std::vector<BufferBinding>& buffers,
                     std::string label)
    : label_(std::move(label)) {
  if (buffers.size() != kernel.bindings().size()) {
    throw GpuError(ErrorKind::Validation, label_,
                   "kernel " + kernel.label() + " has " + std::to_string(kernel.bindings().size()) +
                       " bindings, got " + std::to_string(buffers.size()) + " buffers");
  }
  std::vector<WGPUBindGroupEntry> entries(buffers.size());
  auto names = std::make_shared<std::vector<std::string>>();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferBinding& b = buffers[i];
    if (!b.buffer || !*b.buffer) {
      throw GpuError(ErrorKind::Validation, label_, "binding " + std::to_string(i) + " has no buffer");
    }
    names->push_back(b.buffer->label());
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].buffer = b.buffer->raw();
    entries[i].offset = b.offset;
    entries[i].size = b.size == 0 ? WGPU_WHOLE_SIZE : b.size;
  }
  WGPUBindGroupDescriptor desc{};
  desc.label = view_of(label_);
  desc.layout = kernel.layout();
  desc.entryCount = entries.size();
  desc.entries = entries.data();
  buffer_labels_ = std::move(names);
  handle_ = ctx.scoped(label_, [&] {
    return decltype(handle_)(wgpuDeviceCreateBindGroup(ctx.device(), &desc));
  });
}

}  // namespace wgx::gpu
