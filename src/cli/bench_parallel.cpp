// wgx bench --parallel W1,W2,...: continuous batching's speed, as a server's clients see it.
// For each width W, W sequences (prompts of -p tokens, each its own) start together in one
// wgx::Batch, which feeds every prompt before they decode (as llama-batched-bench runs them;
// a server's batch feeds decoding rows first); the prefill phase lasts until every one has its
// first token, then the decode phase runs the steps until all have -n tokens. Reported per
// width: the prefill rate (all prompts' tokens over the prefill phase), the aggregate decode
// rate (the decode phase's tokens over its time: llama-batched-bench's S_TG), per-stream rate,
// and the inter-token latency (the wall time of a step that gives every sequence a token) at
// p50 and p99. With --profile, one decode step at each width on timestamps: its GPU time
// (unprofiled, first timestamp to last) against its wall time, and the GPU time per op, route
// and kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "api/internal.h"
#include "cli/bench_parallel.h"
#include "cli/bench_profile.h"

namespace wgx::cli {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct WidthResult {
  int64_t width = 0;
  double prefill_s = 0;
  int64_t prefill_steps = 0;
  double decode_s = 0;
  int64_t decode_steps = 0;
  int64_t decode_tokens = 0;
  std::vector<double> step_ms;  // wall times of the decode steps that gave every sequence a token
  std::optional<StepProfile> profile;
};

// W sequences started together in `batch` (eos ignored, `tokens` tokens each, greedy unless
// --sample); got[i] counts sequence i's tokens.
void start(Batch& batch, const std::vector<std::vector<int32_t>>& prompts, int64_t width, int64_t tokens,
           const Sampling& sampling, std::vector<int64_t>& got) {
  GenerateOptions o;
  o.max_tokens = tokens;
  o.ignore_eos = true;
  o.sampling = sampling;
  got.assign(static_cast<size_t>(width), 0);
  for (int64_t i = 0; i < width; ++i) {
    batch.add(prompts[static_cast<size_t>(i)], o, [&got, i](std::string_view, int32_t) {
      ++got[static_cast<size_t>(i)];
      return true;
    });
  }
}

// Steps until every sequence has its first token; the steps taken.
int64_t prefill(Batch& batch, const std::vector<int64_t>& got) {
  int64_t steps = 0;
  while (std::any_of(got.begin(), got.end(), [](int64_t g) { return g == 0; })) {
    batch.step();
    ++steps;
  }
  return steps;
}

int64_t total(const std::vector<int64_t>& got) { return std::accumulate(got.begin(), got.end(), int64_t{0}); }

// W sequences from their prompts to `tokens` tokens each, every prompt fed before the decoding
// (prompt rows first in each step), so that the sequences decode together: the decode phase
// counts the tokens its steps give, and a step that gives every sequence a token is an
// inter-token gap.
WidthResult run_width(Model& m, const std::vector<std::vector<int32_t>>& prompts, int64_t width, int64_t tokens,
                      const Sampling& sampling) {
  WidthResult r;
  r.width = width;
  Batch batch(m);
  Internals::batch(batch).set_prompts_first(true);
  std::vector<int64_t> got;
  start(batch, prompts, width, tokens, sampling, got);
  const Clock::time_point t0 = Clock::now();
  r.prefill_steps = prefill(batch, got);
  r.prefill_s = seconds_since(t0);
  const int64_t first = total(got);
  const Clock::time_point t1 = Clock::now();
  while (batch.running() > 0) {
    const int64_t before = total(got);
    const Clock::time_point s = Clock::now();
    batch.step();
    if (total(got) - before == width) r.step_ms.push_back(1e3 * seconds_since(s));
    ++r.decode_steps;
  }
  r.decode_s = seconds_since(t1);
  r.decode_tokens = total(got) - first;
  return r;
}

// One decode step of `width` sequences on timestamps (`p`: the model's rows program): per
// dispatch for the table, then per pass (the step as it runs unprofiled) for its GPU time, the
// median of several (`tokens`: what a sequence may generate, at least 4).
StepProfile profile_width(Model& m, runtime::Program& p, const std::vector<std::vector<int32_t>>& prompts,
                          int64_t width, int64_t tokens, const Sampling& sampling) {
  const int64_t runs = std::clamp<int64_t>(tokens - 3, 1, 16);
  Batch batch(m);
  Internals::batch(batch).set_prompts_first(true);
  std::vector<int64_t> got;
  start(batch, prompts, width, runs + 3, sampling, got);
  prefill(batch, got);
  batch.step();  // a decode step, untimed
  p.set_timing(gpu::Timing::Dispatches);
  batch.step();
  StepProfile profile =
      profile_step(p, "decode: " + std::to_string(width) + " sequence" + (width == 1 ? "" : "s") + ", a token each");
  p.set_timing(gpu::Timing::Passes);
  profile.step_runs = static_cast<int>(runs);
  profile.step_microseconds = median_step(profile.step_runs, [&] { batch.step(); }, p);
  p.set_timing(gpu::Timing::Off);
  return profile;
}

}  // namespace

int bench_parallel(Model& m, const ParallelBenchArgs& a) {
  Model::Impl& impl = Internals::impl(m);
  const int64_t slots = impl.batch_limits ? impl.batch_limits->slots : 0;
  const int64_t widest = *std::max_element(a.widths.begin(), a.widths.end());
  if (slots < widest) throw std::invalid_argument("bench: the model holds " + std::to_string(slots) + " sequences");
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t i = 0; i < widest; ++i) prompts.push_back(a.prompt_of(i));

  // Warm-up: first-use costs at every width, then the widest for --warmup ms (clocks).
  for (int64_t w : a.widths) run_width(m, prompts, w, 2, a.sampling);
  int warmups = 0;
  for (const auto w0 = Clock::now(); Clock::now() - w0 < std::chrono::milliseconds(a.warmup_ms); ++warmups) {
    run_width(m, prompts, widest, a.new_tokens, a.sampling);
  }
  std::vector<WidthResult> results;
  for (int64_t w : a.widths) results.push_back(run_width(m, prompts, w, a.new_tokens, a.sampling));
  const bool timestamps = impl.engine->gpu->features().timestamp_query;
  if (a.profile && timestamps) {
    for (WidthResult& r : results) r.profile = profile_width(m, *impl.rows_program, prompts, r.width, a.new_tokens, a.sampling);
  }

  const ModelInfo info = m.info();
  const auto decode_rate = [&](const WidthResult& r) {
    return static_cast<double>(r.decode_tokens) / r.decode_s;
  };
  const auto prefill_rate = [&](const WidthResult& r) {
    return static_cast<double>(r.width * a.prompt_tokens) / r.prefill_s;
  };
  if (a.json) {
    nlohmann::json out = {{"model", a.name},
                          {"description", info.description},
                          {"adapter", info.adapter},
                          {"parallel", slots},
                          {"context", info.context},
                          {"prompt_tokens", a.prompt_tokens},
                          {"decode_tokens", a.new_tokens},
                          {"warmup_ms", a.warmup_ms},
                          {"warmup_runs", warmups},
                          {"sampling", a.sampling_text},
                          {"widths", nlohmann::json::array()}};
    for (const WidthResult& r : results) {
      nlohmann::json w = {{"width", r.width},
                          {"prefill_s", r.prefill_s},
                          {"prefill_steps", r.prefill_steps},
                          {"prefill_tok_s", prefill_rate(r)},
                          {"decode_s", r.decode_s},
                          {"decode_steps", r.decode_steps},
                          {"decode_tokens", r.decode_tokens},
                          {"decode_tok_s", decode_rate(r)},
                          {"stream_tok_s", decode_rate(r) / static_cast<double>(r.width)},
                          {"itl_p50_ms", percentile(r.step_ms, 0.5)},
                          {"itl_p99_ms", percentile(r.step_ms, 0.99)}};
      if (r.profile) w["profile"] = profile_json(*r.profile);
      out["widths"].push_back(w);
    }
    std::puts(out.dump(2).c_str());
    return 0;
  }
  std::printf("model        %s (%s), %lld sequences at most, context %lld each\n", a.name.c_str(),
              info.description.c_str(), static_cast<long long>(slots), static_cast<long long>(info.context));
  std::printf("each         a prompt of %lld tokens, then %lld tokens decoded (%s, eos ignored); "
              "warm-up: %d untimed run%s at %lld sequences (--warmup %lld ms)\n",
              static_cast<long long>(a.prompt_tokens), static_cast<long long>(a.new_tokens), a.sampling_text.c_str(), warmups,
              warmups == 1 ? "" : "s", static_cast<long long>(widest), static_cast<long long>(a.warmup_ms));
  std::printf("%8s %14s %14s %12s %12s %12s %12s\n", "streams", "prefill tok/s", "decode tok/s", "per stream",
              "ITL p50 ms", "ITL p99 ms", "GPU/step ms");
  for (const WidthResult& r : results) {
    char gpu[32] = "-";
    if (r.profile) std::snprintf(gpu, sizeof gpu, "%.3f", r.profile->step_microseconds * 1e-3);
    std::printf("%8lld %14.1f %14.1f %12.1f %12.3f %12.3f %12s\n", static_cast<long long>(r.width), prefill_rate(r),
                decode_rate(r), decode_rate(r) / static_cast<double>(r.width), percentile(r.step_ms, 0.5),
                percentile(r.step_ms, 0.99), gpu);
  }
  for (const WidthResult& r : results) {
    if (r.profile) std::fputs(profile_table(*r.profile).c_str(), stdout);
  }
  if (a.profile && !timestamps) std::puts("profile      not available: the adapter has no timestamp-query feature");
  return 0;
}

}  // namespace wgx::cli
