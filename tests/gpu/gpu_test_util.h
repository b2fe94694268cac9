// Shared fixtures for the GPU layer tests: one Context per test binary (creating a device costs
// tens of milliseconds), chosen like the CLI does (WGX_ADAPTER, default auto).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "gpu/context.h"

namespace wgx::gpu::testing {

inline Context& shared_context() {
  static std::unique_ptr<Context> ctx = [] {
    ContextOptions o = ContextOptions::from_env();
    o.announce = false;
    return std::make_unique<Context>(o);
  }();
  return *ctx;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() & 0xff);
  return v;
}

}  // namespace wgx::gpu::testing
