// Micro-benchmarks of single ops at model shapes: each case builds a small graph, runs it with
// GPU timestamps, and reports the median GPU time with the bytes and FLOPs it implies.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "graph/builder.h"
#include "runtime/op_kernel.h"

namespace wgx::bench {

struct OpCase {
  std::string name;    // e.g. "linear.q4.gemv llama-3.2-1b qkv M=1"
  std::string family;  // for filtering: "linear", "sdpa", ...
  // Builds the graph (inputs get random data) and sets SymInts through `syms`.
  std::function<void(graph::GraphBuilder&)> build;
  std::vector<std::pair<std::string, int64_t>> syms;  // SymInt values for the run
  // Inputs given these bytes (their max shape) instead of random data.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> inputs;
  double bytes = 0;    // the fewest bytes the op must move (each input read once, output written)
  double flops = 0;
  runtime::RuntimeOptions options;
};

struct OpResult {
  std::string name;
  std::string routes;      // the routes the op's nodes took
  double microseconds = 0;  // median GPU time per execution, each dispatch in a pass of its own
  // GPU time per execution within a stream: the op recorded kStreamRepeats times back to back in
  // one pass (dependent dispatches, as a model's step runs them), the median of a few streams.
  double stream_microseconds = 0;
  double gbps = 0;  // from the stream's time (else the time's)
  double gflops = 0;
  size_t dispatches = 0;
};

// The cases at Llama-3.2-1B and Qwen3-0.6B shapes, for the ops that have kernels.
std::vector<OpCase> model_cases();

// Runs one case `iterations` times after a warm-up of `warmup_ms` (streams of the op).
OpResult run_case(gpu::Context& ctx, const OpCase& c, int iterations, int warmup_ms);

}  // namespace wgx::bench
