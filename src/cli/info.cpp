// wgx info: what the adapter is and offers, and a self-test that proves it computes correctly.
#include <cstdio>
#include <string>

#include "api/internal.h"
#include "cli/commands.h"
#include "cli/llm_common.h"
#include "gpu/selftest.h"
#include "runtime/program.h"

namespace wgx::cli {

using runtime::human_bytes;

int run_info(const GlobalOptions& global, const std::vector<std::string>& args) {
  uint64_t elements = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--elements" && i + 1 < args.size()) {
      elements = std::stoull(args[++i]);
    } else {
      throw std::invalid_argument("info: unknown argument '" + args[i] +
                                  "' (usage: wgx info [--elements N])");
    }
  }
  const Engine engine = make_engine(global);
  gpu::Context& ctx = *Internals::impl(engine).gpu;
  const gpu::AdapterDescription& a = ctx.adapter();
  const gpu::Limits& l = ctx.limits();
  const gpu::Features& f = ctx.features();
  std::printf("adapter      %s (%s, %s)\n", a.device.c_str(), a.backend.c_str(), a.adapter_type.c_str());
  std::printf("vendor       %s  [vendor 0x%04x, device 0x%04x]\n",
              a.vendor.empty() ? "-" : a.vendor.c_str(), a.vendor_id, a.device_id);
  if (!a.architecture.empty()) std::printf("architecture %s\n", a.architecture.c_str());
  std::printf("driver       %s\n", a.description.empty() ? "-" : a.description.c_str());
  std::printf("features     timestamp-query %s, subgroups %s, shader-f16 %s\n",
              f.timestamp_query ? "yes" : "no", f.subgroups ? "yes" : "no",
              f.shader_f16 ? "yes" : "no (f16 stored as packed pairs in u32)");
  if (f.subgroups) std::printf("subgroups    %u..%u lanes\n", a.subgroup_min_size, a.subgroup_max_size);
  // Tensor cores from WGSL: Dawn's experimental feature, looked up by the pinned build's number
  // (another Dawn, WGX_DAWN_LIBRARY, may number it differently). No kernel uses it yet.
  if (a.subgroup_matrix) {
    std::string shapes;
    for (const gpu::SubgroupMatrixConfig& c : a.subgroup_matrix_configs) {
      shapes += (shapes.empty() ? "" : ", ") + c.component + "->" + c.result + " " + std::to_string(c.m) + "x" +
                std::to_string(c.n) + "x" + std::to_string(c.k);
    }
    std::printf("subgroup matrices  yes (chromium-experimental-subgroup-matrix): %s\n",
                shapes.empty() ? "no configurations listed" : shapes.c_str());
  } else {
    std::printf("subgroup matrices  no (chromium-experimental-subgroup-matrix, 0x%x in the pinned Dawn, is not offered)\n",
                static_cast<unsigned>(gpu::kSubgroupMatrixFeature));
  }
  std::string all;
  for (const std::string& name : ctx.adapter_features()) all += (all.empty() ? "" : " ") + name;
  std::printf("adapter has  %s\n", all.c_str());
  if (!ctx.options().enable_toggles.empty() || !ctx.options().disable_toggles.empty()) {
    std::string t;
    for (auto& s : ctx.options().enable_toggles) t += s + " ";
    for (auto& s : ctx.options().disable_toggles) t += "-" + s + " ";
    std::printf("toggles      %s\n", t.c_str());
  }
  std::printf("limits       maxBufferSize %s, maxStorageBufferBindingSize %s\n",
              human_bytes(l.max_buffer_size).c_str(), human_bytes(l.max_storage_buffer_binding_size).c_str());
  std::printf("             workgroup storage %s, %u invocations/workgroup (x %u, y %u, z %u)\n",
              human_bytes(l.max_compute_workgroup_storage_size).c_str(),
              l.max_compute_invocations_per_workgroup, l.max_compute_workgroup_size_x,
              l.max_compute_workgroup_size_y, l.max_compute_workgroup_size_z);
  std::printf("             %u workgroups/dimension, %u storage buffers/stage, %u bind groups\n",
              l.max_compute_workgroups_per_dimension, l.max_storage_buffers_per_shader_stage,
              l.max_bind_groups);

  if (elements == 0) elements = a.is_cpu ? (1u << 20) : (16u << 20);
  if (elements % 4 != 0) throw std::invalid_argument("info: --elements must be a multiple of 4");
  const int passes = a.is_cpu ? 5 : 50;
  gpu::SelfTestResult r = gpu::run_axpy_selftest(ctx, elements, passes);
  if (r.mismatches > 0) {
    std::printf("self-test    FAILED: %llu of %llu elements wrong (first at index %llu)\n",
                static_cast<unsigned long long>(r.mismatches),
                static_cast<unsigned long long>(r.elements),
                static_cast<unsigned long long>(r.first_mismatch));
    return 1;
  }
  std::printf("self-test    y = a*x + b over %llu floats: every element correct\n",
              static_cast<unsigned long long>(r.elements));
  std::printf("bandwidth    %.2f GB/s (%s read + written per pass, median of %d, %s)\n",
              r.bytes_per_second * 1e-9, human_bytes(r.elements * 8).c_str(), r.passes,
              r.gpu_timed ? "GPU timestamps" : "host clock");
  // What each dependent dispatch costs at the least work (a decode step is ~5 per layer): the
  // host's recording and submitting, and the device's time per dispatch through the chain, for
  // one workgroup and for as many as a decode step's products launch.
  for (const uint32_t workgroups : {1u, 512u}) {
    const gpu::DispatchCostResult d = gpu::run_dispatch_cost(ctx, a.is_cpu ? 100 : 2000, workgroups);
    if (!d.correct) {
      std::printf("dispatches   FAILED: %d dependent dispatches of %u workgroups did not all run in order\n", d.dispatches,
                  workgroups);
      return 1;
    }
    std::printf("dispatches   host %.2f us each (%.2f recording, %.2f submitting), device %.2f us each (%s): %d "
                "dependent dispatches of %u workgroup%s adding 1 per invocation, pipeline and bind group set before each\n",
                d.host_us_per_dispatch, d.record_us_per_dispatch, d.host_us_per_dispatch - d.record_us_per_dispatch,
                d.device_us_per_dispatch, d.gpu_timed ? "GPU timestamps" : "host clock", d.dispatches, workgroups,
                workgroups == 1 ? "" : "s");
  }
  // The same dependency handed over inside one dispatch (phases whose workgroups poll a count
  // of the previous phase's finished ones): what a dispatch boundary costs beyond the handoff.
  // A CPU adapter need not run a dispatch's workgroups together (SwiftShader does not), so its
  // phases would wait out their poll limits.
  if (a.is_cpu) {
    std::printf("handoffs     skipped: a CPU adapter does not run a dispatch's workgroups together\n");
    return 0;
  }
  for (const uint32_t workgroups : {128u, 512u}) {
    for (const int mode : {0, 1, 2}) {
      const char* places = mode == 0 ? "ticket" : mode == 1 ? "index" : "persistent workgroups";
      const int dispatches = 100, phases = 20;
      const gpu::HandoffCostResult h = gpu::run_handoff_cost(ctx, dispatches, phases, workgroups, mode);
      if (!h.correct) {
        std::printf("handoffs     FAILED: %d phases of %u workgroups, places by %s%s\n", phases, workgroups, places,
                    h.gave_up ? ": a phase waited past its poll limit" : ": wrong values");
        return 1;
      }
      std::printf("handoffs     device %.2f us each (%s): %d dispatches of %d phases of %u workgroups, places by %s\n",
                  h.device_us_per_phase, h.gpu_timed ? "GPU timestamps" : "host clock", dispatches, phases, workgroups,
                  places);
    }
  }
  return 0;
}

}  // namespace wgx::cli
