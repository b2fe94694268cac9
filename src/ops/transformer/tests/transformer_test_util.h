// Helpers for the transformer family's tests: the f16 bound (f16 data: numeric_test_util.h).
#pragma once

#include "numeric_test_util.h"

namespace wgx::runtime::testing {

// The f16 bound of these tests: the kernels compute in f32 and round once, so within an f16 ulp
// (rel 2^-10, twice the rounding error) of the exact value, or 1e-4 where f16 is subnormal.
constexpr double kF16Abs = 1e-4;
constexpr double kF16Rel = 1.0 / 1024;

}  // namespace wgx::runtime::testing
