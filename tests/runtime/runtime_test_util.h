// Shared helpers for runtime tests: a shared GPU context (and devices like smaller GPUs), random
// data, tolerant comparison, and the reasons routes were refused. numeric_test_util.h has f16
// data and error bounds.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/context.h"
#include "runtime/program.h"

namespace wgx::runtime::testing {

inline gpu::Context& shared_context() {
  static std::unique_ptr<gpu::Context> ctx = [] {
    gpu::ContextOptions o = gpu::ContextOptions::from_env();
    o.announce = false;
    return std::make_unique<gpu::Context>(o);
  }();
  return *ctx;
}

// A device on shared_context()'s adapter that offers what a smaller GPU would: no subgroups
// feature where `subgroups` is false, `workgroup_storage` bytes of workgroup memory where that is
// not 0 (WebGPU guarantees 16,384), and `storage_binding` bytes a storage binding where that is
// not 0 (a browser's 128 MiB, or less to keep a test small). The routes and kernels such GPUs
// take by default are tested on it. One device per kind, kept for the process and never
// destroyed: SwiftShader crashed in one of its threads when such a device was released at exit.
inline gpu::Context& device_like(bool subgroups, uint32_t workgroup_storage = 0, uint64_t storage_binding = 0) {
  static auto* devices = new std::map<std::tuple<bool, uint32_t, uint64_t>, std::unique_ptr<gpu::Context>>;
  std::unique_ptr<gpu::Context>& d = (*devices)[{subgroups, workgroup_storage, storage_binding}];
  if (!d) {
    gpu::ContextOptions o = gpu::ContextOptions::from_env();
    o.announce = false;
    o.want_subgroups = subgroups;
    o.max_workgroup_storage = workgroup_storage;
    o.max_storage_binding = storage_binding;
    d = std::make_unique<gpu::Context>(o);
  }
  return *d;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The f32 tolerance of the project: abs 1e-4 OR rel 1e-3, per element.
inline ::testing::AssertionResult close(const std::vector<float>& got, const std::vector<float>& want,
                                        double abs_tol = 1e-4, double rel_tol = 1e-3) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(w) ? !std::isnan(g) : !(std::abs(g - w) <= abs_tol || std::abs(g - w) <= rel_tol * std::abs(w))) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

// "route: why" of every route tried before the chosen one, joined.
inline std::string rejected(const RouteChoice& c) {
  std::string s;
  for (const auto& r : c.rejected) s += r + "; ";
  return s;
}

}  // namespace wgx::runtime::testing
