// wgx bench-op: times single ops at Llama-3.2-1B and Qwen3-0.6B shapes on the GPU and prints
// time, GB/s and GFLOP/s next to the device's measured copy bandwidth. "time us" puts each
// dispatch in a pass of its own (and counts the pass); "stream us" is the op's share of 32
// executions recorded back to back in one pass, as dependent dispatches run in a model's step,
// and the rates are from it. Each case first runs for --warmup MS (default 300) untimed, so that
// the clocks are up after its weights' upload.
#include <cstdio>
#include <regex>
#include <string>

#include "bench/op_bench.h"
#include "api/internal.h"
#include "cli/commands.h"
#include "cli/llm_common.h"
#include "gpu/selftest.h"

namespace wgx::cli {

int run_bench_op(const GlobalOptions& global, const std::vector<std::string>& args) {
  std::string filter = ".*";
  int iterations = 20;
  int warmup_ms = 300;
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--filter" && i + 1 < args.size()) {
      filter = args[++i];
    } else if (args[i] == "--iters" && i + 1 < args.size()) {
      iterations = static_cast<int>(parse_int("--iters", args[++i], 1, 100000));
    } else if (args[i] == "--warmup" && i + 1 < args.size()) {
      warmup_ms = static_cast<int>(parse_int("--warmup", args[++i], 0, 600000));
    } else if (args[i] == "--json") {
      json = true;
    } else {
      throw std::invalid_argument("bench-op: unknown argument '" + args[i] +
                                  "' (usage: wgx bench-op [--filter REGEX] [--iters N] [--warmup MS] [--json])");
    }
  }
  const std::regex re(filter);
  const Engine engine = make_engine(global);
  gpu::Context& ctx = *Internals::impl(engine).gpu;
  if (!ctx.features().timestamp_query) throw std::invalid_argument("bench-op needs the timestamp-query feature");
  // The ceiling to compare with: this device's streaming bandwidth (y = a*x + b, large).
  const uint64_t elements = ctx.adapter().is_cpu ? (4u << 20) : (64u << 20);
  const double ceiling = gpu::run_axpy_selftest(ctx, elements, 10).bytes_per_second * 1e-9;
  if (json) {
    std::printf("{\"adapter\": \"%s\", \"copy_gbps\": %.1f, \"cases\": [\n", ctx.adapter().device.c_str(), ceiling);
  } else {
    std::printf("adapter %s; streaming bandwidth %.1f GB/s (axpy)\n", ctx.adapter().device.c_str(), ceiling);
    std::printf("%-48s %-22s %10s %10s %10s %9s %10s\n", "case", "route", "time us", "stream us", "GB/s", "% bw",
                "GFLOP/s");
  }
  bool first = true;
  for (bench::OpCase c : bench::model_cases()) {
    if (!std::regex_search(c.name, re)) continue;
    for (const auto& [name, value] : Internals::impl(engine).options) c.options[name] = value;  // tuning sweeps
    bench::OpResult r;
    try {
      r = bench::run_case(ctx, c, iterations, warmup_ms);
    } catch (const std::exception& e) {  // an op without a kernel for this case: say so, go on
      std::fprintf(stderr, "bench-op: %s: skipped: %s\n", c.name.c_str(), e.what());
      continue;
    }
    if (json) {
      std::printf("%s  {\"case\": \"%s\", \"route\": \"%s\", \"us\": %.2f, \"stream_us\": %.2f, \"gbps\": %.1f, "
                  "\"gflops\": %.1f, \"dispatches\": %zu}",
                  first ? "" : ",\n", r.name.c_str(), r.routes.c_str(), r.microseconds, r.stream_microseconds, r.gbps,
                  r.gflops, r.dispatches);
    } else {
      std::printf("%-48s %-22s %10.2f %10.2f %10.1f %8.1f%% %10.1f\n", r.name.c_str(), r.routes.c_str(), r.microseconds,
                  r.stream_microseconds, r.gbps, 100.0 * r.gbps / ceiling, r.gflops);
    }
    std::fflush(stdout);
    first = false;
  }
  if (json) std::printf("\n]}\n");
  return 0;
}

}  // namespace wgx::cli
