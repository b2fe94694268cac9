// GPU timestamps per dispatch or per pass: present when the feature is, ordered, and absent when
// off.
#include "gpu/recorder.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::shared_context;

const KernelSource kBusy{std::string(kLinearWorkgroupWgsl) + R"(
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 64u + lid;
  if (i >= arrayLength(&data)) { return; }
  var v = data[i];
  for (var k = 0u; k < 64u; k++) { v = v * 0.999 + 1.0; }
  data[i] = v;
}
)", {Binding::Storage}};

TEST(Timestamps, EveryDispatchIsTimedInOrder) {
  Context& ctx = shared_context();
  if (!ctx.features().timestamp_query) GTEST_SKIP() << "adapter has no timestamp-query";
  Kernel k(ctx, {"test.busy", "", {}}, kBusy);
  Buffer data(ctx, 64 * 1024 * 4, BufferKind::Storage, "busy data");
  BindGroup g(ctx, k, {{&data}}, "busy");
  Recorder rec(ctx, "timed", Timing::Dispatches);
  ASSERT_TRUE(rec.profiling());
  for (int i = 0; i < 5; ++i) rec.dispatch(k, g, 1024, "busy " + std::to_string(i));
  rec.submit();
  const std::vector<DispatchTiming> t = rec.timings();
  ASSERT_EQ(t.size(), 5u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].label, "busy " + std::to_string(i));
    EXPECT_EQ(t[i].kernel, "test.busy");
    EXPECT_LE(t[i].begin_ns, t[i].end_ns) << i;
    if (i > 0) {
      EXPECT_GE(t[i].begin_ns, t[i - 1].end_ns) << i;  // dependent work runs in order
    }
  }
  EXPECT_GT(t.back().end_ns, t.front().begin_ns);  // the clock advanced over real work
}

TEST(Timestamps, PassesAreTimedAsRecorded) {
  // Timing::Passes times the passes the work has anyway: five dispatches with a copy between
  // the second and the third make two passes (with Timing::Dispatches they would make five).
  Context& ctx = shared_context();
  if (!ctx.features().timestamp_query) GTEST_SKIP() << "adapter has no timestamp-query";
  Kernel k(ctx, {"test.busy", "", {}}, kBusy);
  Buffer data(ctx, 64 * 1024 * 4, BufferKind::Storage, "busy data");
  Buffer other(ctx, 256, BufferKind::Storage, "copy target");
  BindGroup g(ctx, k, {{&data}}, "busy");
  Recorder rec(ctx, "step", Timing::Passes);
  ASSERT_TRUE(rec.profiling());
  for (int i = 0; i < 5; ++i) {
    if (i == 2) rec.copy(data, 0, other, 0, 256);
    rec.dispatch(k, g, 1024, "busy " + std::to_string(i));
  }
  rec.submit();
  const std::vector<DispatchTiming> t = rec.timings();
  ASSERT_EQ(t.size(), 2u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].label, "step");
    EXPECT_EQ(t[i].kernel, "");  // a pass may hold several kernels
    EXPECT_LE(t[i].begin_ns, t[i].end_ns) << i;
  }
  EXPECT_GE(t[1].begin_ns, t[0].end_ns);
  EXPECT_GT(t.back().end_ns, t.front().begin_ns);
}

TEST(Timestamps, NoTimingsWithoutProfiling) {
  Context& ctx = shared_context();
  Kernel k(ctx, {"test.busy", "", {}}, kBusy);
  Buffer data(ctx, 256, BufferKind::Storage, "busy data");
  BindGroup g(ctx, k, {{&data}}, "busy");
  Recorder rec(ctx, "untimed");
  rec.dispatch(k, g, 1, "busy");
  rec.submit();
  EXPECT_FALSE(rec.profiling());
  EXPECT_TRUE(rec.timings().empty());
}

}  // namespace
}  // namespace wgx::gpu
