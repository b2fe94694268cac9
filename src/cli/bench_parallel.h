// wgx bench --parallel: continuous batching's aggregate decode rate and inter-token latency at
// several widths (bench_parallel.cpp says how it measures).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "wgx/wgx.hpp"

namespace wgx::cli {

struct ParallelBenchArgs {
  std::vector<int64_t> widths;  // sequences at once, one run each
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  int64_t warmup_ms = 0;
  bool profile = false;
  bool json = false;
  Sampling sampling = Sampling::greedy();                  // every sequence's (--sample)
  std::string sampling_text;                               // it, as printed
  std::string name;                                          // the model, as printed
  std::function<std::vector<int32_t>(int64_t)> prompt_of;  // sequence i's prompt
};

// `model` was loaded with LoadOptions::parallel at least the widest width.
int bench_parallel(Model& model, const ParallelBenchArgs& args);

}  // namespace wgx::cli
