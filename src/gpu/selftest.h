// The self-tests that `wgx info` runs: y = a*x + b over many floats, every element checked, and
// the bandwidth it reached; and what a chain of small dependent dispatches costs the host to
// record and the device to run (the floor under a decode step of many small kernels).
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

// `dispatches` dependent dispatches of `workgroups` workgroups of 256 invocations (each adds 1 to
// the same counters, one per invocation: the least work a dispatch of that size can do),
// recorded into one pass with the pipeline and bind group set before each as a program's step
// sets them, alternating between two pipelines and two bind groups, then one submit and a wait.
struct DispatchCostResult {
  int dispatches = 0;
  uint32_t workgroups = 0;
  bool correct = false;         // every counter ended at `dispatches` (every dispatch ran, in order)
  double host_us_per_dispatch = 0;    // recording and submitting, wall clock on this thread
  double record_us_per_dispatch = 0;  // of which recording (the rest: the submit)
  double device_us_per_dispatch = 0;  // the pass's GPU time, or the wall clock from the submit on
  bool gpu_timed = false;             // from GPU timestamps
};
DispatchCostResult run_dispatch_cost(Context& ctx, int dispatches, uint32_t workgroups = 1);

// `dispatches` dispatches of `phases` dependent phases of `workgroups` workgroups each, the
// phases handed over inside the dispatch (a count of finished workgroups per phase that the next
// phase's workgroups poll), with or without tickets (a workgroup's place in the phases taken from
// a counter, or its index): what a dependency costs without a dispatch boundary.
struct HandoffCostResult {
  int dispatches = 0;
  int phases = 0;
  uint32_t workgroups = 0;
  bool correct = false;   // every value ended at `phases`, the counters at zero
  bool gave_up = false;   // a wait reached its poll limit (the phases did not run together)
  double device_us_per_phase = 0;
  bool gpu_timed = false;
};
// mode: 0 places by ticket, 1 by index, 2 `workgroups` workgroups each running every phase.
HandoffCostResult run_handoff_cost(Context& ctx, int dispatches, int phases, uint32_t workgroups, int mode);

}  // namespace wgx::gpu
