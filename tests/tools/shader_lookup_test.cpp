// The demo family (data/demo) as C++ sees it: generated, compiled with CMake's hash, looked up.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "shaders/demo_flags.h"
#include "shaders/demo_shaders.h"

namespace wgx::shaders {
namespace {

std::string_view param(const ShaderVariant& v, std::string_view key) {
  for (const auto& [k, value] : v.params) {
    if (k == key) return value;
  }
  return "<absent>";
}

TEST(ShadergenLookup, ListsEveryVariantSortedByName) {
  std::vector<std::string_view> names;
  for (const ShaderVariant& v : demo_variants()) names.push_back(v.variant);
  EXPECT_EQ(names, (std::vector<std::string_view>{"add.f32", "add.f32x4", "max.f32", "max.f32x4",
                                                  "one.u32", "zero.f32"}));
}

TEST(ShadergenLookup, FindsMatrixVariantWithItsParams) {
  const ShaderVariant* v = find_demo("max.f32x4");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->template_id, "binary");
  EXPECT_EQ(v->variant, "max.f32x4");
  EXPECT_EQ(param(*v, "expr"), "max(a, b)");
  EXPECT_EQ(param(*v, "vec"), "vec4<f32>");
  EXPECT_EQ(param(*v, "workgroup_size"), "64");
  EXPECT_EQ(v->params.size(), 3u);
  EXPECT_NE(v->wgsl.find("var<storage, read_write> out: array<vec4<f32>>;"), std::string_view::npos);
  EXPECT_NE(v->wgsl.find("  out[i] = max(a, b);\n"), std::string_view::npos);
  EXPECT_EQ(v->wgsl.find("{{"), std::string_view::npos);
}

TEST(ShadergenLookup, MissesUnknownNames) {
  EXPECT_EQ(find_demo(""), nullptr);
  EXPECT_EQ(find_demo("add"), nullptr);        // a prefix of existing names
  EXPECT_EQ(find_demo("add.f32x"), nullptr);   // sorts between two names
  EXPECT_EQ(find_demo("zero.f32 "), nullptr);  // after the last name
  EXPECT_EQ(find_demo("ADD.F32"), nullptr);
}

// binary.wgsl includes data/demo/lib/demo_index.wgsl, which includes demo_flags.toml: the WGSL
// constant and the generated C++ one come from that one definition.
TEST(ShadergenLookup, ExpandsIncludesAndSharesFlagsWithCpp) {
  const ShaderVariant* v = find_demo("add.f32");
  ASSERT_NE(v, nullptr);
  const std::string stride = "const STRIDE = " + std::to_string(demo_flags::kStride) + "u;\n";
  EXPECT_NE(v->wgsl.find(stride), std::string_view::npos);
  EXPECT_NE(v->wgsl.find("fn demo_index("), std::string_view::npos);
  EXPECT_EQ(v->wgsl.find("#include"), std::string_view::npos);
}

// The escaping round trip: quotes, a backslash, a tab, a non-ASCII character and "??=" all come
// out of the compiler exactly as the template holds them.
TEST(ShadergenLookup, EmbedsWgslByteForByte) {
  const ShaderVariant* v = find_demo("zero.f32");
  ASSERT_NE(v, nullptr);
  const std::string expected =
      "// Sets every element to 0.0. Escaping check: \"quotes\", back\\slash, tab\there, "
      "\xCF\x80, ?\?=.\n"
      "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
      "\n"
      "@compute @workgroup_size(256)\n"
      "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
      "  if (gid.x < arrayLength(&out)) {\n"
      "    out[gid.x] = f32(0.0);\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(v->wgsl, expected);
  EXPECT_EQ(param(*v, "workgroup_size"), "256");  // written as a TOML integer
}

}  // namespace
}  // namespace wgx::shaders
