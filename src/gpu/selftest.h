// The self-test that `wgx info` runs: y = a*x + b over many floats, every element checked, and
// the bandwidth it reached.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/context.h"

namespace wgx::gpu {

struct SelfTestResult {
  uint64_t elements = 0;
  uint64_t mismatches = 0;
  uint64_t first_mismatch = 0;
  double seconds_per_pass = 0;     // median over the timed passes
  double bytes_per_second = 0;     // bytes read + written per pass / time
  int passes = 0;
  bool gpu_timed = false;          // from GPU timestamps (else host wall clock)
};

// `elements` must be a positive multiple of 4.
SelfTestResult run_axpy_selftest(Context& ctx, uint64_t elements, int passes);

}  // namespace wgx::gpu
