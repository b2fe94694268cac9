#include "gpu/selftest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/kernel.h"
#include "gpu/recorder.h"

namespace wgx::gpu {

namespace {

constexpr uint32_t kWorkgroupSize = 256;

const char* kAxpyWgsl = R"(
struct Params { a: f32, b: f32, count: u32, pad: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (i >= params.count) { return; }
  y[i] = params.a * x[i] + params.b;
}
)";

// One step of a chain: every counter + 1, one per invocation (the same kernel under two
// pipelines: KIND only tells them apart).
const char* kCountWgsl = R"(
override KIND: u32 = 0u;
@group(0) @binding(0) var<storage, read_write> y: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 256u + lid;
  y[i] = y[i] + 1u + KIND * 0u;
}
)";

// Phases handed over inside one dispatch: PHASES * W workgroups, phase p's W waiting until all W
// of phase p - 1 have finished (a finished-workgroup count per phase), each value of phase p one
// more than a value phase p - 1 wrote in another workgroup (two halves of Y, alternating). With
// TICKETS a workgroup takes its place from a counter, so that one waits only on places already
// taken by running workgroups (no assumption about the order workgroups start in); without, its
// place is its index. A wait gives up after SPIN_LIMIT polls and marks Sync[PHASES + 2] (the
// host reports it), so a device that does not run the phases together cannot hang. The last
// workgroup leaves the counters at zero for the next dispatch.
const char* kHandoffWgsl = R"(
override W: u32 = 1u;
override PHASES: u32 = 2u;
override MODE: u32 = 0u;  // 0: places by ticket, 1: by index, 2: W workgroups each running every phase
const SPIN_LIMIT = 1u << 22u;
@group(0) @binding(0) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> sync: array<atomic<u32>>;
var<workgroup> place: u32;

fn wait_for(p: u32) {
  var spins = 0u;
  loop {
    if (atomicLoad(&sync[p]) >= W) { break; }
    spins++;
    if (spins >= SPIN_LIMIT) { atomicStore(&sync[PHASES + 2u], 1u); break; }
  }
}

fn phase(p: u32, w: u32, lid: u32) {
  let half = W * 256u;
  var v = 1u;
  if (p > 0u) { v += atomicLoad(&y[((p + 1u) % 2u) * half + ((w + 1u) % W) * 256u + lid]); }
  atomicStore(&y[(p % 2u) * half + w * 256u + lid], v);
  workgroupBarrier();
  if (lid == 0u) {
    let done = atomicAdd(&sync[1u + p], 1u) + 1u;
    if (p == PHASES - 1u && done == W) {
      for (var i = 0u; i <= PHASES; i++) { atomicStore(&sync[i], 0u); }
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  if (MODE == 2u) {
    let w = wgx_workgroup_index(wid, nwg);
    for (var p = 0u; p < PHASES; p++) {
      if (p > 0u && lid == 0u) { wait_for(p); }
      workgroupBarrier();
      phase(p, w, lid);
    }
    return;
  }
  if (lid == 0u) {
    var t = wgx_workgroup_index(wid, nwg);
    if (MODE == 0u) { t = atomicAdd(&sync[0], 1u); }
    if (t >= W) { wait_for(t / W); }
    place = t;
  }
  let t = workgroupUniformLoad(&place);
  phase(t / W, t % W, lid);
}
)";

// A chain recorded into one pass (`record`), submitted, waited for: the host's time recording
// and submitting, and the pass's GPU time where there are timestamps, else the wall clock from
// the submit on. `warm_up` first records it once untimed (first-use costs).
struct ChainTimes {
  double record_us = 0, host_us = 0, device_us = 0;
  bool gpu_timed = false;
};
ChainTimes time_chain(Context& ctx, const char* label, const std::function<void(Recorder&)>& record) {
  using Clock = std::chrono::steady_clock;
  ChainTimes c;
  const auto t0 = Clock::now();
  Recorder rec(ctx, label, Timing::Passes);
  record(rec);
  const auto tr = Clock::now();
  rec.submit();
  const auto t1 = Clock::now();
  ctx.wait_idle();
  const auto t2 = Clock::now();
  c.record_us = std::chrono::duration<double, std::micro>(tr - t0).count();
  c.host_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  c.device_us = std::chrono::duration<double, std::micro>(t2 - t1).count();
  if (const std::vector<DispatchTiming> t = rec.timings(); t.size() == 1) {
    c.device_us = t[0].microseconds();
    c.gpu_timed = true;
  }
  return c;
}
void warm_up(Context& ctx, const char* label, const std::function<void(Recorder&)>& record) {
  Recorder warm(ctx, label);
  record(warm);
  warm.submit();
  ctx.wait_idle();
}

// Deterministic inputs that are neither zero nor round: every element exercises the arithmetic.
float input_value(uint64_t i) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
  h ^= h >> 15;
  return static_cast<float>(h % 2000003u) * 1e-3f - 1000.0f;
}

}  // namespace

SelfTestResult run_axpy_selftest(Context& ctx, uint64_t elements, int passes) {
  if (elements == 0 || elements % 4 != 0 || passes < 1) {
    throw GpuError(ErrorKind::Validation, "selftest", "elements must be a positive multiple of 4");
  }
  const float a = 1.75f, b = -0.3125f;
  std::vector<float> host_x(elements);
  for (uint64_t i = 0; i < elements; ++i) host_x[i] = input_value(i);

  const uint64_t bytes = elements * sizeof(float);
  Buffer x(ctx, host_x.data(), bytes, "selftest x");
  Buffer y(ctx, bytes, BufferKind::Storage, "selftest y");
  struct {
    float a, b;
    uint32_t count, pad;
  } params{a, b, static_cast<uint32_t>(elements / 4), 0};
  Buffer uniforms(ctx, sizeof(params), BufferKind::Uniform, "selftest params");
  upload(ctx, uniforms, 0, &params, sizeof(params));

  KernelSource src{std::string(kLinearWorkgroupWgsl) + kAxpyWgsl,
                   {Binding::Uniform, Binding::ReadOnlyStorage, Binding::Storage}};
  Kernel kernel(ctx, {"selftest.axpy", "f32.vec4", {}}, src);
  BindGroup group(ctx, kernel, {{&uniforms}, {&x}, {&y}}, "selftest axpy");
  const uint64_t workgroups = (elements / 4 + kWorkgroupSize - 1) / kWorkgroupSize;

  // Warm-up pass (first-use costs), then the timed passes.
  warm_up(ctx, "selftest warm-up", [&](Recorder& rec) { rec.dispatch(kernel, group, workgroups, "axpy"); });
  SelfTestResult r;
  r.elements = elements;
  r.passes = passes;
  std::vector<double> seconds;
  if (ctx.features().timestamp_query) {
    Recorder rec(ctx, "selftest timed", Timing::Dispatches);
    for (int i = 0; i < passes; ++i) rec.dispatch(kernel, group, workgroups, "axpy");
    rec.submit();
    for (const DispatchTiming& t : rec.timings()) seconds.push_back(t.microseconds() * 1e-6);
    r.gpu_timed = true;
  } else {
    for (int i = 0; i < passes; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      Recorder rec(ctx, "selftest timed");
      rec.dispatch(kernel, group, workgroups, "axpy");
      rec.submit();
      ctx.wait_idle();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::sort(seconds.begin(), seconds.end());
  r.seconds_per_pass = seconds[seconds.size() / 2];
  if (r.seconds_per_pass > 0) r.bytes_per_second = 2.0 * static_cast<double>(bytes) / r.seconds_per_pass;

  std::vector<float> host_y = download_as<float>(ctx, y, elements);
  for (uint64_t i = 0; i < elements; ++i) {
    // The GPU may or may not fuse the multiply-add; both roundings are correct.
    const float fused = std::fma(a, host_x[i], b);
    const float separate = a * host_x[i] + b;
    if (host_y[i] != fused && host_y[i] != separate) {
      if (r.mismatches++ == 0) r.first_mismatch = i;
    }
  }
  return r;
}

DispatchCostResult run_dispatch_cost(Context& ctx, int dispatches, uint32_t workgroups) {
  if (dispatches < 2) throw GpuError(ErrorKind::Validation, "selftest", "the dispatch chain needs at least 2 dispatches");
  if (workgroups < 1 || workgroups > ctx.workgroups_per_dimension()) {
    throw GpuError(ErrorKind::Validation, "selftest", "the dispatch chain's workgroups must be 1 to " +
                                                          std::to_string(ctx.workgroups_per_dimension()));
  }
  const uint32_t counters = workgroups * kWorkgroupSize;
  Buffer y(ctx, counters * sizeof(uint32_t), BufferKind::Storage, "selftest counters");
  const std::vector<uint32_t> zeros(counters, 0);
  upload(ctx, y, 0, zeros.data(), zeros.size() * sizeof(uint32_t));
  const KernelSource src{std::string(kLinearWorkgroupWgsl) + kCountWgsl, {Binding::Storage}};
  Kernel k0(ctx, {"selftest.count", "a", {{"KIND", 0.0}}}, src);
  Kernel k1(ctx, {"selftest.count", "b", {{"KIND", 1.0}}}, src);
  BindGroup g0(ctx, k0, {{&y}}, "selftest count a");
  BindGroup g1(ctx, k1, {{&y}}, "selftest count b");
  auto chain = [&](int count) {
    return [&, count](Recorder& rec) {
      for (int i = 0; i < count; ++i) rec.dispatch(i % 2 ? k1 : k0, i % 2 ? g1 : g0, workgroups, "count");
    };
  };
  // Warm-up, then the counters back to zero.
  warm_up(ctx, "selftest chain warm-up", chain(4));
  upload(ctx, y, 0, zeros.data(), zeros.size() * sizeof(uint32_t));
  ctx.wait_idle();

  DispatchCostResult r;
  r.dispatches = dispatches;
  r.workgroups = workgroups;
  const ChainTimes c = time_chain(ctx, "selftest chain", chain(dispatches));
  r.host_us_per_dispatch = c.host_us / dispatches;
  r.record_us_per_dispatch = c.record_us / dispatches;
  r.device_us_per_dispatch = c.device_us / dispatches;
  r.gpu_timed = c.gpu_timed;
  const std::vector<uint32_t> out = download_as<uint32_t>(ctx, y, counters);
  r.correct = std::all_of(out.begin(), out.end(), [dispatches](uint32_t v) { return v == static_cast<uint32_t>(dispatches); });
  return r;
}

HandoffCostResult run_handoff_cost(Context& ctx, int dispatches, int phases, uint32_t workgroups, int mode) {
  if (dispatches < 1 || phases < 2 || workgroups < 1) {
    throw GpuError(ErrorKind::Validation, "selftest", "the handoff chain needs a dispatch, 2 phases and a workgroup");
  }
  const uint64_t total = mode == 2 ? workgroups : static_cast<uint64_t>(phases) * workgroups;
  if (total > ctx.workgroups_per_dimension()) {
    throw GpuError(ErrorKind::Validation, "selftest", "the handoff chain's phases x workgroups must be at most " +
                                                          std::to_string(ctx.workgroups_per_dimension()));
  }
  const uint64_t values = 2ull * workgroups * kWorkgroupSize;
  Buffer y(ctx, values * sizeof(uint32_t), BufferKind::Storage, "selftest handoff values");
  Buffer sync(ctx, (phases + 3) * sizeof(uint32_t), BufferKind::Storage, "selftest handoff counters");
  const std::vector<uint32_t> zeros(phases + 3, 0);
  upload(ctx, sync, 0, zeros.data(), zeros.size() * sizeof(uint32_t));
  const KernelSource src{std::string(kLinearWorkgroupWgsl) + kHandoffWgsl, {Binding::Storage, Binding::Storage}};
  Kernel k(ctx,
           {"selftest.handoff", std::to_string(mode),
            {{"W", static_cast<double>(workgroups)}, {"PHASES", static_cast<double>(phases)}, {"MODE", static_cast<double>(mode)}}},
           src);
  BindGroup g(ctx, k, {{&y}, {&sync}}, "selftest handoff");
  auto chain = [&](int count) {
    return [&, count](Recorder& rec) {
      for (int i = 0; i < count; ++i) rec.dispatch(k, g, total, "handoff");
    };
  };
  warm_up(ctx, "selftest handoff warm-up", chain(1));
  HandoffCostResult r;
  r.dispatches = dispatches;
  r.phases = phases;
  r.workgroups = workgroups;
  const ChainTimes c = time_chain(ctx, "selftest handoff", chain(dispatches));
  r.device_us_per_phase = c.device_us / (static_cast<double>(dispatches) * phases);
  r.gpu_timed = c.gpu_timed;
  const std::vector<uint32_t> out = download_as<uint32_t>(ctx, y, values);
  const std::vector<uint32_t> counters = download_as<uint32_t>(ctx, sync, phases + 3);
  const uint64_t last = static_cast<uint64_t>((phases - 1) % 2) * workgroups * kWorkgroupSize;
  const bool values_right = std::all_of(out.begin() + last, out.begin() + last + workgroups * kWorkgroupSize,
                                       [phases](uint32_t v) { return v == static_cast<uint32_t>(phases); });
  const bool counts_zero = std::all_of(counters.begin(), counters.begin() + phases + 1, [](uint32_t v) { return v == 0; });
  r.gave_up = counters[phases + 2] != 0;
  r.correct = values_right && counts_zero && !r.gave_up;
  return r;
}

}  // namespace wgx::gpu
