// What the generated shader tables hold (tools/shadergen writes them; cmake/Shaders.cmake builds
// them): one WGSL template expanded with one set of parameter values.
#pragma once

#include <span>
#include <string_view>
#include <utility>

namespace wgx::shaders {

// All views point into static data of the generated .cpp: they never dangle.
struct ShaderVariant {
  std::string_view template_id;  // the template's file name without .wgsl, e.g. "binary"
  std::string_view variant;      // unique within its family, e.g. "add.f32x4"
  std::string_view wgsl;         // the expanded shader, byte for byte
  // The values substituted for the template's placeholders, sorted by name.
  std::span<const std::pair<std::string_view, std::string_view>> params;
};

}  // namespace wgx::shaders
