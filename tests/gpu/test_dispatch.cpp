// Dispatch splitting: pure grid arithmetic, then real dispatches beyond 65,535 workgroups in one
// dimension, checked at every index. A kernel that ignores y and z is the negative control. And
// `wgx info`'s chain of dependent dispatches: every one ran, in order, and its times add up.
#include "gpu/recorder.h"
#include "gpu/selftest.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::shared_context;

TEST(SplitWorkgroups, FitsInOneDimensionWhenItCan) {
  WorkgroupGrid g = split_workgroups(65535, 65535);
  EXPECT_EQ(g.x, 65535u);
  EXPECT_EQ(g.y, 1u);
  EXPECT_EQ(g.z, 1u);
}

TEST(SplitWorkgroups, CoversEveryCountWithinLimitsAndLittleWaste) {
  for (uint32_t max : {7u, 100u, 65535u}) {
    const uint64_t m = max;
    for (uint64_t count : {uint64_t{1}, m - 1, m, m + 1, 2 * m + 3, m * m - 1, m * m, m * m + 1,
                           m * m * 5 + 7, m * m * m}) {
      if (count == 0) continue;
      WorkgroupGrid g = split_workgroups(count, max);
      EXPECT_GE(g.total(), count) << count << " over " << max;
      EXPECT_LE(g.x, max);
      EXPECT_LE(g.y, max);
      EXPECT_LE(g.z, max);
      // Waste: less than one row per layer, and rows are as narrow as the count allows.
      EXPECT_LT(g.total() - count, uint64_t{g.y} * g.z + g.x * uint64_t{g.z}) << count << " over " << max;
    }
  }
}

TEST(SplitWorkgroups, BeyondThreeDimensionsIsAValidationError) {
  try {
    split_workgroups(uint64_t{1000} * 1000 * 1000 + 1, 1000);
    FAIL();
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validation);
  }
}

constexpr const char* kIotaWgsl = R"(
struct Params { count: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = INDEX * 64u + lid;
  if (i >= params.count) { return; }
  out[i] = i ^ 0x5a5a5a5au;
}
)";

// Writes f(i) at every index i < count with `workgroups` linear workgroups; returns mismatches.
uint64_t run_iota(Context& ctx, uint64_t count, bool use_linear_index) {
  std::string wgsl = std::string(kLinearWorkgroupWgsl) + kIotaWgsl;
  const std::string index = use_linear_index ? "wgx_workgroup_index(wid, nwg)" : "wid.x";
  wgsl.replace(wgsl.find("INDEX"), 5, index);
  Kernel kernel(ctx, {"test.iota", use_linear_index ? "linear" : "x-only", {}},
                {wgsl, {Binding::Uniform, Binding::Storage}});
  Buffer out(ctx, count * 4, BufferKind::Storage, "iota out");
  Buffer params(ctx, 16, BufferKind::Uniform, "iota params");
  const uint32_t p[4] = {static_cast<uint32_t>(count), 0, 0, 0};
  upload(ctx, params, 0, p, sizeof p);
  BindGroup group(ctx, kernel, {{&params}, {&out}}, "iota");
  Recorder rec(ctx, "iota");
  rec.clear(out);
  rec.dispatch(kernel, group, (count + 63) / 64, "iota dispatch");
  rec.submit();
  const std::vector<uint32_t> got = download_as<uint32_t>(ctx, out, count);
  uint64_t bad = 0;
  for (uint64_t i = 0; i < count; ++i) bad += got[i] != (static_cast<uint32_t>(i) ^ 0x5a5a5a5au);
  return bad;
}

TEST(Dispatch, MoreThan65535WorkgroupsInOneDimension) {
  Context& ctx = shared_context();
  const uint64_t count = uint64_t{70001} * 64 + 17;  // 70,002 workgroups
  ASSERT_GT((count + 63) / 64, ctx.workgroups_per_dimension());
  EXPECT_EQ(run_iota(ctx, count, true), 0u);
}

TEST(Dispatch, ThreeDimensionalSplitReachesEveryIndex) {
  Context& ctx = shared_context();
  ctx.set_workgroups_per_dimension_cap_for_testing(13);  // 13^2 < 500 workgroups: needs z
  const uint64_t bad = run_iota(ctx, 500 * 64 - 5, true);
  const uint64_t control = run_iota(ctx, 500 * 64 - 5, false);
  ctx.set_workgroups_per_dimension_cap_for_testing(ctx.limits().max_compute_workgroups_per_dimension);
  EXPECT_EQ(bad, 0u);
  // Negative control: a kernel that reads only wid.x misses the split-off rows and layers.
  EXPECT_GT(control, 0u);
}

TEST(DispatchCost, EveryDispatchOfTheChainRunsInOrder) {
  // Each dispatch adds 1 to the counters the one before it wrote: a count of 37 (odd: both
  // pipelines, the first one more often) at every counter means none was lost, reordered
  // against the others or run concurrently with them, over one workgroup and several.
  for (const uint32_t workgroups : {1u, 3u}) {
    SCOPED_TRACE(workgroups);
    const DispatchCostResult r = run_dispatch_cost(shared_context(), 37, workgroups);
    EXPECT_TRUE(r.correct);
    EXPECT_EQ(r.dispatches, 37);
    EXPECT_EQ(r.workgroups, workgroups);
    EXPECT_GT(r.record_us_per_dispatch, 0);
    EXPECT_GE(r.host_us_per_dispatch, r.record_us_per_dispatch);
    EXPECT_GT(r.device_us_per_dispatch, 0);
  }
}

TEST(DispatchCost, AChainOfFewerThanTwoOrOfNoWorkgroupsIsAValidationError) {
  try {
    run_dispatch_cost(shared_context(), 1);
    FAIL();
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validation);
    EXPECT_NE(e.message().find("at least 2"), std::string::npos) << e.message();
  }
  try {
    run_dispatch_cost(shared_context(), 2, 0);
    FAIL();
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validation);
    EXPECT_NE(e.message().find("workgroups must be 1 to"), std::string::npos) << e.message();
  }
}

// The in-dispatch handoff's bookkeeping (wgx info times it on GPUs): one workgroup that runs
// every phase itself never waits on another, so it runs on any adapter. Every value ends at the
// phase count only if each phase read the one before (a phase that read nothing would leave 1),
// and the counters end at zero for the next dispatch (the second one would wait on stale counts
// otherwise, and give up).
TEST(HandoffCost, OnePersistentWorkgroupRunsEveryPhaseAndLeavesTheCountersAtZero) {
  const HandoffCostResult r = run_handoff_cost(shared_context(), 3, 5, 1, 2);
  EXPECT_TRUE(r.correct);
  EXPECT_FALSE(r.gave_up);
  EXPECT_EQ(r.phases, 5);
  EXPECT_GT(r.device_us_per_phase, 0);
}

TEST(HandoffCost, TooFewPhasesIsAValidationError) {
  try {
    run_handoff_cost(shared_context(), 1, 1, 1, 2);
    FAIL();
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validation);
    EXPECT_NE(e.message().find("2 phases"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace wgx::gpu
