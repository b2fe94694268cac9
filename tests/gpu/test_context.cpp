// Adapter choice, features and limits: the limits check doubles as an ABI check, since a field
// out of place in our WGPULimits declaration reads as garbage here.
#include <algorithm>

#include "gpu/context.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::shared_context;

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

TEST(AdapterChoice, ParsesTheFourChoices) {
  EXPECT_EQ(parse_adapter_choice("auto"), AdapterChoice::Auto);
  EXPECT_EQ(parse_adapter_choice("gpu"), AdapterChoice::Gpu);
  EXPECT_EQ(parse_adapter_choice("swiftshader"), AdapterChoice::SwiftShader);
  EXPECT_EQ(parse_adapter_choice("gles"), AdapterChoice::Gles);
}

TEST(AdapterChoice, UnknownChoiceIsASetupErrorListingTheValidOnes) {
  try {
    parse_adapter_choice("null");
    FAIL() << "accepted 'null'";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Setup);
    EXPECT_NE(std::string(e.what()).find("auto, gpu, swiftshader, gles"), std::string::npos) << e.what();
  }
}

TEST(ContextOptions, TogglesFromACommaSeparatedList) {
  ContextOptions o;
  o.add_toggles("skip_validation, -lazy_clear_resource_on_first_use,,disable_robustness");
  EXPECT_EQ(o.enable_toggles,
            (std::vector<std::string>{"disable_workgroup_init", "skip_validation", "disable_robustness"}));
  EXPECT_EQ(o.disable_toggles, (std::vector<std::string>{"lazy_clear_resource_on_first_use"}));
  // disable_robustness and disable_workgroup_init are on by default; the last word on a toggle
  // wins.
  ContextOptions d;
  EXPECT_EQ(d.enable_toggles, (std::vector<std::string>{"disable_robustness", "disable_workgroup_init"}));
  d.add_toggles("-disable_robustness,skip_validation,-skip_validation");
  EXPECT_EQ(d.enable_toggles, (std::vector<std::string>{"disable_workgroup_init"}));
  EXPECT_EQ(d.disable_toggles, (std::vector<std::string>{"disable_robustness", "skip_validation"}));
}

TEST(Context, AdapterIsRealAndDescribed) {
  Context& ctx = shared_context();
  const AdapterDescription& a = ctx.adapter();
  EXPECT_NE(a.backend, "Null");
  EXPECT_NE(a.backend, "undefined");
  EXPECT_FALSE(a.device.empty());
  if (a.is_swiftshader) {
    EXPECT_TRUE(a.is_cpu);
  }
}

TEST(Context, LimitsArePlausible) {
  const Limits& l = shared_context().limits();
  EXPECT_GE(l.max_compute_invocations_per_workgroup, 256u);
  EXPECT_LE(l.max_compute_invocations_per_workgroup, 4096u);
  EXPECT_GE(l.max_compute_workgroup_size_x, 256u);
  EXPECT_LE(l.max_compute_workgroup_size_x, 4096u);
  EXPECT_GE(l.max_compute_workgroup_size_z, 64u);
  EXPECT_GE(l.max_compute_workgroups_per_dimension, 65535u);
  EXPECT_LE(l.max_compute_workgroups_per_dimension, 1u << 31);
  EXPECT_GE(l.max_compute_workgroup_storage_size, 16384u);
  EXPECT_LE(l.max_compute_workgroup_storage_size, 1u << 20);
  EXPECT_GE(l.max_storage_buffer_binding_size, uint64_t{128} << 20);
  EXPECT_LE(l.max_storage_buffer_binding_size, uint64_t{1} << 40);
  EXPECT_GE(l.max_buffer_size, uint64_t{256} << 20);
  EXPECT_GE(l.max_uniform_buffer_binding_size, 16384u);
  EXPECT_GE(l.max_storage_buffers_per_shader_stage, 8u);
  EXPECT_LE(l.max_storage_buffers_per_shader_stage, 1024u);
  EXPECT_GE(l.max_bind_groups, 4u);
  EXPECT_LE(l.max_bind_groups, 64u);
  EXPECT_GE(l.max_bindings_per_bind_group, 640u);
  EXPECT_TRUE(is_pow2(l.min_storage_buffer_offset_alignment));
  EXPECT_LE(l.min_storage_buffer_offset_alignment, 256u);
  EXPECT_TRUE(is_pow2(l.min_uniform_buffer_offset_alignment));
  EXPECT_LE(l.min_uniform_buffer_offset_alignment, 256u);
}

TEST(Context, FeaturesMatchWhatTheAdapterOffers) {
  Context& ctx = shared_context();
  const std::vector<std::string> offered = ctx.adapter_features();
  auto has = [&](const char* n) { return std::find(offered.begin(), offered.end(), n) != offered.end(); };
  EXPECT_EQ(ctx.features().timestamp_query, has("timestamp-query"));
  EXPECT_EQ(ctx.features().subgroups, has("subgroups"));
  EXPECT_EQ(ctx.features().shader_f16, has("shader-f16"));
}

TEST(Context, AFeatureLeftOutIsNotRequested) {
  if (!shared_context().features().timestamp_query) GTEST_SKIP() << "adapter has no timestamp-query";
  ContextOptions o = ContextOptions::from_env();
  o.announce = false;
  o.want_timestamps = false;
  Context ctx(o);
  EXPECT_FALSE(ctx.features().timestamp_query);
}

TEST(Context, LessWorkgroupMemoryIsWhatTheDeviceOffers) {
  if (shared_context().limits().max_compute_workgroup_storage_size <= 16384) {
    GTEST_SKIP() << "the adapter offers no more than WebGPU's least workgroup memory";
  }
  ContextOptions o = ContextOptions::from_env();
  o.announce = false;
  o.max_workgroup_storage = 16384;
  Context ctx(o);
  EXPECT_EQ(ctx.limits().max_compute_workgroup_storage_size, 16384u);
}

TEST(Context, SmallerStorageBindingsAreWhatTheDeviceOffers) {
  const uint64_t most = shared_context().limits().max_storage_buffer_binding_size;
  // Above WebGPU's least (128 MiB), and far below it: the device reports what was asked for.
  for (uint64_t bytes : {std::min<uint64_t>(most, uint64_t{192} << 20), uint64_t{1} << 20}) {
    ContextOptions o = ContextOptions::from_env();
    o.announce = false;
    o.max_storage_binding = bytes;
    Context ctx(o);
    EXPECT_EQ(ctx.limits().max_storage_buffer_binding_size, bytes);
  }
  // More than the adapter has: its maximum.
  ContextOptions o = ContextOptions::from_env();
  o.announce = false;
  o.max_storage_binding = most + 4;
  EXPECT_EQ(Context(o).limits().max_storage_buffer_binding_size, most);
}

TEST(Context, StorageBindingFromTheEnvironmentIsANumber) {
  setenv("WGX_MAX_STORAGE_BINDING", "134217728", 1);
  EXPECT_EQ(max_storage_binding_from_env(), uint64_t{134217728});
  setenv("WGX_MAX_STORAGE_BINDING", "128MiB", 1);
  EXPECT_THROW(max_storage_binding_from_env(), GpuError);
  unsetenv("WGX_MAX_STORAGE_BINDING");
  EXPECT_EQ(max_storage_binding_from_env(), 0u);
}

TEST(Context, SwiftShaderChoiceFailsClearlyWithoutItsDriver) {
  const char* old = std::getenv("WGX_SWIFTSHADER_ICD");
  std::string saved = old ? old : "";
  setenv("WGX_SWIFTSHADER_ICD", "/nonexistent/vk_swiftshader_icd.json", 1);
  ContextOptions o;
  o.adapter = AdapterChoice::SwiftShader;
  try {
    Context ctx(o);
    ADD_FAILURE() << "created a SwiftShader context without its driver";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Setup);
    EXPECT_NE(std::string(e.what()).find("chromium-common"), std::string::npos) << e.what();
  }
  if (old) {
    setenv("WGX_SWIFTSHADER_ICD", saved.c_str(), 1);
  } else {
    unsetenv("WGX_SWIFTSHADER_ICD");
  }
}

}  // namespace
}  // namespace wgx::gpu
