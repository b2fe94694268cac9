// The error model: WGSL errors with their line, validation errors with the dispatch's label,
// toggles reaching the device, and a lost device that fails cleanly.
#include "gpu/recorder.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::shared_context;

const KernelSource kGood{R"(
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { out[0] = 42u; }
)", {Binding::Storage}};

TEST(Errors, WgslCompileErrorNamesTheLineAndDoesNotCrash) {
  Context& ctx = shared_context();
  const KernelSource bad{"@compute @workgroup_size(1)\nfn main() {\n  let a = 1u;\n  let b: f32 = not_defined;\n}\n",
                         {}};
  try {
    Kernel k(ctx, {"test.broken", "v1", {}}, bad);
    FAIL() << "broken WGSL compiled";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShaderCompile);
    EXPECT_EQ(e.line(), 4u);
    EXPECT_GT(e.column(), 0u);
    EXPECT_EQ(e.label(), "test.broken[v1]");
    const std::string what = e.what();
    EXPECT_NE(what.find("not_defined"), std::string::npos) << what;
    EXPECT_NE(what.find("let b: f32 = not_defined;"), std::string::npos) << what;  // the source line
  }
  // The device is still usable.
  Kernel good(ctx, {"test.good", "", {}}, kGood);
  Buffer out(ctx, 4, BufferKind::Storage, "out");
  BindGroup g(ctx, good, {{&out}}, "good");
  Recorder rec(ctx, "after compile error");
  rec.dispatch(good, g, 1, "good dispatch");
  rec.submit();
  EXPECT_EQ(download_as<uint32_t>(ctx, out, 1)[0], 42u);
}

const KernelSource kNeeds64Bytes{R"(
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>, 4>;
@compute @workgroup_size(1) fn main() { out[3] = vec4<f32>(1.0); }
)", {Binding::Storage}};

// Records a good dispatch, then one whose buffer is smaller than the shader's binding.
void record_wrong_binding_size(Context& ctx, Recorder& rec) {
  static Kernel good(ctx, {"test.good.2", "", {}}, kGood);
  static Kernel needs64(ctx, {"test.needs64", "", {}}, kNeeds64Bytes);
  static Buffer ok(ctx, 4, BufferKind::Storage, "ok buffer");
  static Buffer small(ctx, 16, BufferKind::Storage, "16-byte buffer");
  static BindGroup g1(ctx, good, {{&ok}}, "good group");
  static BindGroup g2(ctx, needs64, {{&small}}, "small group");
  rec.dispatch(good, g1, 1, "first dispatch");
  rec.dispatch(needs64, g2, 1, "the wrong-size dispatch");
}

TEST(Errors, ValidationErrorCarriesTheDispatchLabel) {
  Context& ctx = shared_context();
  Recorder rec(ctx, "two dispatches");
  record_wrong_binding_size(ctx, rec);
  try {
    rec.submit();
    FAIL() << "a 16-byte binding passed for a 64-byte array";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validation);
    EXPECT_EQ(e.label(), "the wrong-size dispatch");
    EXPECT_NE(e.message().find("64"), std::string::npos) << e.message();
  }
  EXPECT_NO_THROW(ctx.wait_idle());
}

TEST(Errors, WrongBindingCountIsCaughtBeforeDawn) {
  Context& ctx = shared_context();
  Kernel good(ctx, {"test.good.3", "", {}}, kGood);
  Buffer a(ctx, 4, BufferKind::Storage, "a");
  EXPECT_THROW(BindGroup(ctx, good, {{&a}, {&a}}, "two for one"), GpuError);
}

TEST(Errors, DeviceTogglesReachTheDevice) {
  // skip_validation turns Dawn's validation off: the same wrong-size dispatch then passes.
  // (Robustness stays on, so the out-of-bounds write is clamped, not a crash.)
  ContextOptions o = ContextOptions::from_env();
  o.announce = false;
  o.add_toggles("skip_validation");
  Context ctx(o);
  Recorder rec(ctx, "unvalidated");
  Kernel needs64(ctx, {"test.needs64", "", {}}, kNeeds64Bytes);
  Buffer small(ctx, 16, BufferKind::Storage, "16-byte buffer");
  BindGroup g(ctx, needs64, {{&small}}, "small group");
  rec.dispatch(needs64, g, 1, "unvalidated dispatch");
  EXPECT_NO_THROW(rec.submit());
  EXPECT_NO_THROW(ctx.wait_idle());
}

TEST(Errors, LostDeviceFailsCleanly) {
  ContextOptions o = ContextOptions::from_env();
  o.announce = false;
  Context ctx(o);
  Buffer buf(ctx, 64, BufferKind::Storage, "before loss");
  ctx.destroy_device();
  try {
    ctx.check("after destroy");
    FAIL() << "no device-lost error";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DeviceLost);
    EXPECT_EQ(e.label(), "after destroy");
    EXPECT_FALSE(e.message().empty());
  }
  EXPECT_TRUE(ctx.lost());
  uint8_t bytes[64] = {};
  EXPECT_THROW(upload(ctx, buf, 0, bytes, 64), GpuError);
  EXPECT_THROW(download(ctx, buf, 0, 64, bytes), GpuError);
  EXPECT_THROW(Buffer(ctx, 64, BufferKind::Storage, "after loss"), GpuError);
  EXPECT_THROW(Recorder(ctx, "after loss"), GpuError);
  EXPECT_THROW(ctx.wait_idle(), GpuError);
}

}  // namespace
}  // namespace wgx::gpu
