// Running a built model step by step on the GPU next to the CPU reference, and measuring how far
// apart their logits are.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/program.h"

namespace wgx::models::testing {

// Feeds `tokens` at `pos` and returns the logits output ([vocab] or [S, vocab] flattened).
inline std::vector<float> gpu_step(runtime::Program& prog, const std::vector<int32_t>& tokens, int64_t pos) {
  prog.set_sym("input_pos", pos);
  prog.set_input<int32_t>("tokens", tokens, {1, static_cast<int64_t>(tokens.size())});
  prog.execute();
  return prog.read_f32("logits");
}

// Element-wise distance of `got` from `want` under "abs <= a OR rel <= r".
struct Diff {
  double max_abs = 0;        // largest |got - want|
  double max_rel = 0;        // largest |got - want| / |want| among elements outside abs
  size_t failures = 0;       // elements outside both bounds
  std::string first_failure;

  void add(const std::vector<float>& got, const std::vector<double>& want, double abs_tol, double rel_tol,
           const std::string& where) {
    if (got.size() != want.size()) {
      ++failures;
      if (first_failure.empty()) {
        first_failure = where + ": " + std::to_string(got.size()) + " values, want " + std::to_string(want.size());
      }
      return;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const double err = std::abs(double{got[i]} - want[i]);
      const bool finite = std::isfinite(got[i]);
      max_abs = std::max(max_abs, finite ? err : INFINITY);
      if (err <= abs_tol && finite) continue;
      const double rel = err / std::abs(want[i]);
      max_rel = std::max(max_rel, finite ? rel : INFINITY);
      if (rel <= rel_tol && finite) continue;
      if (failures++ == 0) {
        first_failure = where + " logit " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                        std::to_string(want[i]);
      }
    }
  }
};

}  // namespace wgx::models::testing
