// wgx::Engine: the GPU context behind every model, with the runtime options its programs get.
#include <cstdlib>

#include "api/internal.h"
#include "runtime/options.h"

namespace wgx {

EngineOptions EngineOptions::from_env() {
  EngineOptions o;
  if (const char* a = std::getenv("WGX_ADAPTER"); a && *a) o.adapter = a;
  if (const char* t = std::getenv("WGX_TOGGLES"); t && *t) o.toggles.emplace_back(t);
  return o;
}

std::vector<OptionInfo> options() {
  std::vector<OptionInfo> out;
  for (const runtime::OptionSpec& s : runtime::option_specs()) {
    OptionInfo o;
    o.name = s.name;
    o.type = s.kind == runtime::OptionKind::OnOff ? "on/off" : s.kind == runtime::OptionKind::Count ? "count" : "choice";
    o.default_value = s.default_value;
    o.values = runtime::option_values(s);
    o.doc = s.doc;
    o.changes_results = s.changes_results;
    o.diagnostic = s.diagnostic;
    out.push_back(std::move(o));
  }
  return out;
}

void check_options(const std::map<std::string, std::string>& options) {
  translated(ErrorKind::BadArgument, [&] {
    runtime::validate_options(runtime::RuntimeOptions(options.begin(), options.end()));
  });
}

Engine::Engine(const EngineOptions& options) : impl_(std::make_shared<Impl>()) {
  translated(ErrorKind::BadArgument, [&] {
    runtime::RuntimeOptions runtime_options(options.options.begin(), options.options.end());
    runtime::validate_options(runtime_options);  // before the device: a mistake costs nothing
    impl_->options = std::move(runtime_options);
    gpu::ContextOptions c;
    if (const char* l = std::getenv("WGX_LOG_PIPELINES")) c.log_pipelines = std::string_view(l) == "1";
    c.max_storage_binding = gpu::max_storage_binding_from_env();
    try {
      c.adapter = gpu::parse_adapter_choice(options.adapter);
    } catch (const gpu::GpuError& e) {
      throw Error(ErrorKind::BadArgument, e.what());
    }
    c.announce = options.announce;
    for (const std::string& t : options.toggles) c.add_toggles(t);
    impl_->gpu = std::make_unique<gpu::Context>(c);
  });
}

Engine::~Engine() = default;
Engine::Engine(const Engine&) = default;
Engine& Engine::operator=(const Engine&) = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

AdapterInfo Engine::adapter() const {
  const gpu::Context& g = *impl_->gpu;
  AdapterInfo a;
  a.name = g.adapter().device;
  a.backend = g.adapter().backend;
  a.type = g.adapter().adapter_type;
  a.vendor = g.adapter().vendor;
  a.is_cpu = g.adapter().is_cpu;
  a.shader_f16 = g.features().shader_f16;
  a.subgroups = g.features().subgroups;
  a.timestamps = g.features().timestamp_query;
  a.max_buffer_size = g.limits().max_buffer_size;
  a.max_storage_binding_size = g.limits().max_storage_buffer_binding_size;
  return a;
}

}  // namespace wgx
