// wgx bench --profile: the GPU time of one step (Program::last_timings(), one entry per dispatch,
// labelled with its node's label and kernel) summed per op, route, kernel and kind of node (the
// label with its layer index starred), longest first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/internal.h"
#include "ops/sampling/sample_params.h"
#include "runtime/program.h"

namespace wgx::cli {

struct ProfileRow {
  std::string op;     // "linear"
  std::string route;  // the route Program::routes() chose for its nodes
  std::string kernel;  // "q4_gemv[q4_gemv.f32.wg.r1.comb.i8]": a route's kernels are rows apart
  std::string nodes;  // "layers.*.attn.o_proj"; "" for nodes without a label
  size_t dispatches = 0;
  double microseconds = 0;
};

struct StepProfile {
  std::string step;  // "decode: 1 token at position 4096"
  std::vector<ProfileRow> rows;
  double total_microseconds = 0;
  size_t dispatches = 0;
  // The step's GPU time as it runs unprofiled (no pass per dispatch): the median of step_runs
  // runs timed first timestamp to last; 0 if not measured.
  double step_microseconds = 0;
  int step_runs = 0;
  double queued_microseconds = 0;  // the same behind steps queued back to back; 0 if not measured
};

// The last execute()'s timings of a program timing its dispatches (Timing::Dispatches).
StepProfile profile_step(const runtime::Program& program, std::string step);

std::string profile_table(const StepProfile& profile);
nlohmann::json profile_json(const StepProfile& profile);

// The median GPU time of `runs` executes by `step` (a program timing its passes): first
// timestamp to last of each.
template <typename Step>
double median_step(int runs, Step step, const runtime::Program& p) {
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    step();
    const std::vector<gpu::DispatchTiming>& t = p.last_timings();
    if (t.empty()) return 0;
    us.push_back(static_cast<double>(t.back().end_ns - t.front().begin_ns) * 1e-3);
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

// "1 token at position 7", "8 tokens at positions 0..7".
std::string tokens_at(int64_t count, int64_t first);

// One prefill step (the prompt's last, ending at `start`) and one decode step of the model, on a
// second build of its kept graph with timestamps (the model's own program is released first);
// the device's pick follows `pick`.
std::pair<StepProfile, StepProfile> profile_steps(Model::Impl& m, std::span<const int32_t> prompt, int64_t start,
                                                  const runtime::RuntimeOptions& options,
                                                  const ops::sampling::Words& pick);

}  // namespace wgx::cli
