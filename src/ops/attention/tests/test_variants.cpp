// Every generated attention variant compiles with its bindings, including the (q, cache) storage
// pairs and tiles the replay tests do not run.
#include <gtest/gtest.h>

#include "gpu/kernel.h"
#include "ops/attention/attention.h"
#include "runtime_test_util.h"
#include "shaders/attention_shaders.h"

namespace wgx::ops::attention {
namespace {

TEST(AttentionVariants, EveryVariantCompiles) {
  size_t n = 0;
  for (const shaders::ShaderVariant& v : shaders::attention_variants()) {
    SCOPED_TRACE(std::string(v.variant));
    const gpu::KernelKey key{std::string(v.template_id), std::string(v.variant), {}};
    EXPECT_NO_THROW(gpu::Kernel(runtime::testing::shared_context(), key,
                                gpu::KernelSource{variant_wgsl(v), variant_bindings(v)}));
    ++n;
  }
  // update_cache, rope_update_cache and rope_update_cache_rows, materialized, flash and
  // flash_rope, combine, k16, sdpa_rows
  EXPECT_EQ(n, 4u + 32u + 4u + 8u + 2u + 16u + 4u);
}

// The op families take wgx_workgroup_index from src/shaders/lib/workgroup.wgsl; it must be the
// function the recorder's split dispatches are written for (gpu::kLinearWorkgroupWgsl).
TEST(AttentionVariants, WorkgroupIndexIsTheRecorders) {
  for (const shaders::ShaderVariant& v : shaders::attention_variants()) {
    SCOPED_TRACE(std::string(v.variant));
    const size_t at = v.wgsl.find(gpu::kLinearWorkgroupWgsl);
    ASSERT_NE(at, std::string_view::npos);
    EXPECT_EQ(v.wgsl.find("fn wgx_workgroup_index", at + 1), std::string_view::npos);  // once
  }
}

}  // namespace
}  // namespace wgx::ops::attention
