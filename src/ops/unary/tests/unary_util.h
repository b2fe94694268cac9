// Helpers shared by the unary family's tests: a comparison that also expects infinities and NaNs,
// which testing::close cannot express (f16 data and raw bytes: numeric_test_util.h).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "numeric_test_util.h"

namespace wgx::runtime::testing {

// NaN where NaN is wanted, the same infinity where one is wanted, and elsewhere within the f32
// tolerance of testing::close (abs 1e-4 OR rel 1e-3): for outputs with special values.
inline ::testing::AssertionResult close_special(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = std::isnan(w)   ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::abs(g - w) <= 1e-4 || std::abs(g - w) <= 1e-3 * std::abs(w);
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace wgx::runtime::testing
