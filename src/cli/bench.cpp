// wgx bench: prefill and decode speed of a model, end to end (token picking included): a prompt
// of -p tokens that ends at --pos, then -n tokens decoded greedily with eos ignored, one step
// each, after one warm-up run of the same shape. Besides the speeds: dispatches and submits per
// decode token, host CPU time per decode token, the device memory and, with --profile, GPU time
// per op, route and kernel.
//
// Decoding is pipelined by default: the graph's "next_token" (the device's pick, greedy unless
// --sample) feeds the next step on the device, and up to --in-flight steps are submitted before the host waits for
// the oldest one's token (read back asynchronously). --sync times the synchronous loop instead:
// each step's logits read back and the argmax taken on the host (the next step recorded
// meanwhile: Program::prepare), then the next step submitted.
//
// The program is driven here rather than through llm::Generator: a synthetic model has no
// tokenizer, and --pos puts the prompt deep in the context without feeding what comes before.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "cli/bench_profile.h"
#include "cli/commands.h"
#include "cli/llm_common.h"
#include "llm/sampler.h"
#include "ops/sampling/sample_params.h"

namespace wgx::cli {

namespace {

constexpr const char* kBenchUsage = R"(usage: wgx bench (--model PATH | --synthetic NAME) [options] [model options]

Times the prefill of a prompt and the decoding of new tokens (greedy, eos ignored, the picking
of each token included) after warm-up runs of the same shape, and reports the dispatches,
submits and host CPU time per decode token and the device memory. The warm-up repeats the
measured run for --warmup milliseconds: a GPU that idled while the model loaded runs at a
fraction of its clocks until its load has lasted a while (an H200 takes ~0.2 s to reach them),
which a short timed run would otherwise count.

Decoding is pipelined: the token is picked on the device (the argmax, or with --sample a
draw), each step feeds its token to the next on the device, and up to --in-flight steps are
submitted before the host waits for the oldest token, which it reads back asynchronously (one
submit per token, or per --steps-per-submit). --sync times the synchronous loop instead (the
logits copied out with the step, the next step recorded while it runs, the host waiting for the
logits, the token picked on the host: as host sampling runs), for comparison. Models without a
"next_token" output (.wgx files converted before it existed) decode synchronously.

  --synthetic NAME        instead of --model: random weights at a real geometry, built in
                          process (llama-3.2-1b, qwen3-0.6b or demo-tiny); the prompt is random
                          token ids. --ctx defaults to 4096 here as well
  --seed S                seed of the synthetic weights and prompt (default 1)
  --shared-layers         (with --synthetic; a diagnostic) every layer reads layer 0's product
                          weights, so that a decode step's weights fit the GPU's L2 cache: what
                          keeping weights in the cache could give at most
  -p, --prompt-tokens N   prompt length (default 128)
  -n, --max-tokens N      tokens to decode (default 128)
  --pos N                 position of the first decoded token (default: -p, the prompt at 0).
                          The prompt fills positions N-p..N-1 and the cache below it stays
                          empty: decoding deep in a long context without prefilling it
  --sync                  decode synchronously (see above)
  --sample                each token drawn with wgx run's default sampling (temperature 0.8,
                          top-k 40, top-p 0.95, min-p 0.05; seed 1): on the device, pipelined,
                          where the model has the "sampling" input and the settings allow it
                          (wgx run --help); with --sync, or otherwise, by the host sampler,
                          synchronously. --temp, --top-k, --top-p, --min-p, --repeat-penalty
                          change the settings (and imply --sample)
  --in-flight N           pipelined decode steps on the device at once, 1 to 8 (default 6)
  --steps-per-submit K    pipelined decode steps recorded into one submit, 1 to --in-flight
                          (default 3, or --in-flight where that is less)
  --prefill-runs N        prefills timed (each on a reset cache); the median is reported
                          (default 5)
  --warmup MS             untimed runs of the same shape for at least MS milliseconds first
                          (default 1000; 0: one short run, for the first-use costs only)
  --profile               also GPU time per op, route and kernel of one prefill and one decode
                          step, on a second build of the model with timestamps on (not timed above),
                          and each step's GPU time as it runs unprofiled (timestamps per pass,
                          not per dispatch), alone and behind decode steps queued back to back
  --json                  one JSON object on stdout instead of text

)";

constexpr const char* kFiller =
    "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. ";

// What one synchronous decode step submits: Program::execute's command buffer, which also copies
// the logits into a staging buffer for the host (read_async), as llm::Generator's synchronous
// path does. Pipelined steps submit only their command buffer (--steps-per-submit of them in
// one), which also copies each token into the next step's input and into a staging buffer.
constexpr int kSubmitsPerSyncStep = 1;

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct BenchArgs {
  ModelArgs model;
  int64_t prompt_tokens = 128;
  int64_t new_tokens = 128;
  std::optional<int64_t> pos;
  bool profile = false;
  bool json = false;
  bool sync = false;
  bool sample = false;  // --sample (or a sampling setting): tokens drawn, on the device where it can
  llm::SamplingOptions settings = [] {
    llm::SamplingOptions s = default_sampling();
    s.seed = 1;
    return s;
  }();
  std::optional<llm::SamplingOptions> sampling() const {
    if (!sample) return std::nullopt;
    return settings;
  }
  int64_t in_flight = llm::GenerationOptions{}.decode_in_flight;
  int64_t steps_per_submit = llm::GenerationOptions{}.decode_steps_per_submit;
  bool steps_given = false;  // --steps-per-submit (else at most --in-flight)
  int64_t prefill_runs = 5;  // the prefill time reported is the median of this many
  int64_t warmup_ms = 1000;  // untimed runs first, for at least this long

  int64_t start() const { return pos.value_or(prompt_tokens); }  // the first decoded position
};

// CPU seconds of the whole process (Dawn's threads, and SwiftShader's when it is the "GPU") and
// of the calling thread alone (recording, queue writes, waiting for the readback).
struct CpuTime {
  double process = 0;
  double thread = 0;
};

// CPU seconds of `clock`, to the nanosecond (fine enough to add up the many short stretches of
// Timing::submit_cpu).
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double thread_cpu_now() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

CpuTime cpu_now() { return {cpu_seconds(CLOCK_PROCESS_CPUTIME_ID), thread_cpu_now()}; }

struct Timing {
  int64_t prefill_steps = 0;
  size_t prefill_dispatches = 0;  // of the last prefill step
  size_t prefill_submits = 0;     // its command buffers (Program::execute submits a long step in parts)
  size_t decode_dispatches = 0;   // of a decode step
  double prefill_s = 0;           // until the prompt's logits are on the host
  double first_token_s = 0;       // until the first token is sampled
  double decode_s = 0;
  CpuTime decode_cpu;
  // The calling thread's CPU seconds spent setting a step up, recording and submitting it (the
  // rest of decode_cpu.thread is waiting for and reading the tokens).
  double submit_cpu = 0;
  runtime::Program::HostTimes submit_phases;  // of submit_cpu, execute()'s phases
  bool pipelined = false;
  std::vector<int32_t> tokens;  // the first token, then one per decode step
};

// execute()'s host phases since `h0`.
runtime::Program::HostTimes phases_since(const runtime::Program& p, const runtime::Program::HostTimes& h0) {
  const runtime::Program::HostTimes& h = p.host_times();
  return {h.resize - h0.resize, h.params - h0.params, h.record - h0.record, h.copies - h0.copies,
          h.submit - h0.submit};
}

void feed(runtime::Program& p, std::span<const int32_t> ids, int64_t pos) {
  p.set_input<int32_t>("tokens", ids, {1, static_cast<int64_t>(ids.size())});
  p.set_sym("input_pos", pos);
  p.execute();
}

// Prefills `prompt` so that it ends at `start`, in steps of at most `chunk` tokens.
int64_t prefill(runtime::Program& p, std::span<const int32_t> prompt, int64_t start, int64_t chunk) {
  const int64_t first = start - static_cast<int64_t>(prompt.size());
  int64_t steps = 0;
  for (size_t at = 0; at < prompt.size(); ++steps) {
    const size_t n = std::min(prompt.size() - at, static_cast<size_t>(chunk));
    feed(p, prompt.subspan(at, n), first + static_cast<int64_t>(at));
    at += n;
  }
  return steps;
}

int32_t greedy(const runtime::Program& p) { return llm::argmax(p.read_f32("logits")); }

// The synchronous loop: each step's logits read back and the next token picked on the host (the
// argmax, or with `sampling` the host sampler, seeded the same every run) before the next step
// is submitted.
Timing run_sync(runtime::Program& p, std::span<const int32_t> prompt, int64_t start, int64_t decode, int64_t chunk,
                const std::optional<llm::SamplingOptions>& sampling) {
  Timing t;
  p.reset_state();
  std::optional<llm::Sampler> sampler;
  if (sampling) sampler.emplace(*sampling);
  // What a repetition penalty looks at: the prompt and the tokens picked.
  std::vector<int32_t> context(prompt.begin(), prompt.end());
  const auto pick = [&](const std::vector<float>& logits) {
    const int32_t token = sampler ? sampler->sample(logits, context) : llm::argmax(logits);
    context.push_back(token);
    return token;
  };
  const auto t0 = Clock::now();
  t.prefill_steps = prefill(p, prompt, start, chunk);
  t.prefill_dispatches = p.dispatches_per_execute();
  t.prefill_submits = p.submits_per_execute();
  const std::vector<float> logits = p.read_f32("logits");
  t.prefill_s = since(t0);
  int32_t token = pick(logits);
  t.first_token_s = since(t0);
  t.tokens.push_back(token);
  const CpuTime c0 = cpu_now();
  const runtime::Program::HostTimes h0 = p.host_times();
  const auto t1 = Clock::now();
  for (int64_t i = 0; i < decode; ++i) {
    const double s0 = thread_cpu_now();
    const runtime::AsyncRead logits_read = p.read_async("logits");
    feed(p, std::span<const int32_t>(&token, 1), start + i);
    // The next step recorded while this one runs, as llm::Generator's synchronous path does.
    if (i + 1 < decode) {
      p.set_sym("input_pos", start + i + 1);
      p.prepare();
    }
    t.submit_cpu += thread_cpu_now() - s0;
    token = pick(logits_read.f32());
    t.tokens.push_back(token);
  }
  t.decode_s = since(t1);
  const CpuTime c1 = cpu_now();
  t.decode_cpu = {c1.process - c0.process, c1.thread - c0.thread};
  t.submit_phases = phases_since(p, h0);
  t.decode_dispatches = p.dispatches_per_execute();
  return t;
}

// The pipelined loop: the last prefill step and every decode step feed "next_token" into
// "tokens" on the device and read it back asynchronously; up to `in_flight` steps are submitted
// (`per_submit` of them a submit, once there is room for them all) before the host waits for the
// oldest token. With `seen` (a repetition penalty), the device's seen set is written before the
// last prefill step, as llm::Generator does.
Timing run_pipelined(runtime::Program& p, std::span<const int32_t> prompt, int64_t start, int64_t decode,
                     int64_t chunk, int64_t in_flight, int64_t per_submit, const std::vector<int32_t>* seen) {
  Timing t;
  t.pipelined = true;
  p.reset_state();
  std::deque<runtime::AsyncRead> reads;
  const auto t0 = Clock::now();
  const int64_t first = start - static_cast<int64_t>(prompt.size());
  for (size_t at = 0; at < prompt.size(); ++t.prefill_steps) {
    const size_t n = std::min(prompt.size() - at, static_cast<size_t>(chunk));
    p.set_input<int32_t>("tokens", prompt.subspan(at, n), {1, static_cast<int64_t>(n)});
    p.set_sym("input_pos", first + static_cast<int64_t>(at));
    at += n;
    if (at == prompt.size()) {
      if (seen) p.write_state<int32_t>("seen_tokens", *seen);
      p.feed_from("tokens", "next_token");
      reads.push_back(p.read_async("next_token"));
    }
    p.execute();
  }
  t.prefill_dispatches = p.dispatches_per_execute();
  t.prefill_submits = p.submits_per_execute();
  t.tokens.push_back(reads.front().i32().at(0));
  reads.pop_front();
  t.prefill_s = since(t0);
  t.first_token_s = t.prefill_s;
  const CpuTime c0 = cpu_now();
  const runtime::Program::HostTimes h0 = p.host_times();
  const auto t1 = Clock::now();
  int64_t submitted = 0;  // decode steps; step i feeds the token before it at start + i
  for (int64_t i = 0; i < decode; ++i) {
    for (;;) {
      const int64_t group = std::min(per_submit, decode - submitted);
      if (group <= 0 || static_cast<int64_t>(reads.size()) + group > in_flight) break;
      const double s0 = thread_cpu_now();
      auto step = [&](int k) {
        p.set_sym("input_pos", start + submitted + k);
        reads.push_back(p.read_async("next_token"));
      };
      step(0);
      p.execute_steps(static_cast<int>(group), step);
      t.submit_cpu += thread_cpu_now() - s0;
      submitted += group;
    }
    t.tokens.push_back(reads.front().i32().at(0));
    reads.pop_front();
  }
  t.decode_s = since(t1);
  const CpuTime c1 = cpu_now();
  t.decode_cpu = {c1.process - c0.process, c1.thread - c0.thread};
  t.submit_phases = phases_since(p, h0);
  t.decode_dispatches = p.dispatches_per_execute();
  p.stop_feed("tokens");
  return t;
}

// The device's pick for the model's "sampling" input: with --sample's settings where the device
// picks with them, else greedy.
ops::sampling::Words pick_words(const BenchArgs& a, bool device_settings) {
  return device_settings ? llm::device_words(a.settings) : ops::sampling::greedy_words();
}

void set_pick(const LoadedModel& m, runtime::Program& p, const ops::sampling::Words& w) {
  if (m.limits.device_sampling) p.set_input<int32_t>("sampling", w, {static_cast<int64_t>(w.size())});
}

// `device_settings`: the pipelined steps pick their tokens on the device with --sample's settings
// (the model's "sampling" input: drawn, or greedy with a repetition penalty), else the device's
// pick is greedy.
Timing run(const LoadedModel& m, const BenchArgs& a, bool pipelined, bool device_settings,
           std::span<const int32_t> prompt, int64_t start, int64_t decode, int64_t chunk) {
  runtime::Program& p = *m.program;
  set_pick(m, p, pick_words(a, device_settings));
  if (!pipelined) return run_sync(p, prompt, start, decode, chunk, a.sampling());
  // The prompt is the context a repetition penalty looks at.
  std::vector<int32_t> seen;
  if (device_settings && a.settings.repetition_penalty != 1.0f) seen = llm::seen_words(prompt, m.limits.vocab);
  return run_pipelined(p, prompt, start, decode, chunk, a.in_flight, a.steps_per_submit,
                       seen.empty() ? nullptr : &seen);
}

std::string sampling_text(const char* where, const llm::SamplingOptions& so) {
  char text[224];
  std::snprintf(text, sizeof text, "%s: temperature %g, top-k %d, top-p %g, min-p %g%s, seed %llu", where,
                static_cast<double>(so.temperature), so.top_k, static_cast<double>(so.top_p),
                static_cast<double>(so.min_p), so.repetition_penalty != 1.0f ? ", a repetition penalty" : "",
                static_cast<unsigned long long>(so.seed));
  return text;
}

std::vector<int32_t> make_prompt(const LoadedModel& m, const BenchArgs& a) {
  std::vector<int32_t> ids;
  if (m.tokenizer) {
    const std::vector<int32_t> piece = m.tokenizer->encode(kFiller);
    while (static_cast<int64_t>(ids.size()) < a.prompt_tokens) ids.insert(ids.end(), piece.begin(), piece.end());
  } else {
    llm::Rng rng(a.model.seed);
    while (static_cast<int64_t>(ids.size()) < a.prompt_tokens) {
      ids.push_back(static_cast<int32_t>(rng.next() % static_cast<uint64_t>(m.limits.vocab)));
    }
  }
  ids.resize(static_cast<size_t>(a.prompt_tokens));
  return ids;
}

// "1 token at position 7", "8 tokens at positions 0..7".
std::string tokens_at(int64_t count, int64_t first) {
  if (count == 1) return "1 token at position " + std::to_string(first);
  return std::to_string(count) + " tokens at positions " + std::to_string(first) + ".." +
         std::to_string(first + count - 1);
}

constexpr int kStepRuns = 24;  // decode steps timed whole for the profile (prefill: a quarter)
constexpr int kQueued = 7;     // untimed decode steps queued before a timed one

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

// One prefill step (the prompt's last) and one decode step on a build with timestamps (the next
// token picked as in the timed runs), each run twice so the second, timed one finds the device
// warm. The timed program is released first.
std::pair<StepProfile, StepProfile> profile_steps(LoadedModel& m, std::span<const int32_t> prompt, int64_t start,
                                                  const runtime::RuntimeOptions& options,
                                                  const ops::sampling::Words& pick) {
  m.program.reset();
  runtime::Program p(*m.gpu, m.built->graph, m.built->weights, options);
  set_pick(m, p, pick);
  std::pair<StepProfile, StepProfile> out;
  const size_t last = std::min(prompt.size(), static_cast<size_t>(m.limits.max_prefill));
  const int64_t first = start - static_cast<int64_t>(last);
  int32_t token = 0;
  for (int pass = 0; pass < 2; ++pass) {
    p.set_timing(gpu::Timing::Dispatches);
    p.reset_state();
    feed(p, prompt.last(last), first);
    out.first = profile_step(p, "prefill: " + tokens_at(static_cast<int64_t>(last), first));
    token = greedy(p);
    feed(p, std::span<const int32_t>(&token, 1), start);
    out.second = profile_step(p, "decode: " + tokens_at(1, start));
  }
  // The steps as they run unprofiled: the same work timed per pass (one pass but for copies),
  // repeated; the median. Then the decode step behind kQueued untimed ones submitted back to
  // back (as the pipelined loop submits them): what the GPU does with a full queue.
  const auto decode = [&] { feed(p, std::span<const int32_t>(&token, 1), start); };
  p.set_timing(gpu::Timing::Passes);
  out.first.step_runs = kStepRuns / 4;
  out.first.step_microseconds = median_step(out.first.step_runs, [&] {
    p.reset_state();
    feed(p, prompt.last(last), first);
  }, p);
  out.second.step_runs = kStepRuns;
  out.second.step_microseconds = median_step(kStepRuns, decode, p);
  out.second.queued_microseconds = median_step(kStepRuns / 4, [&] {
    p.set_timing(gpu::Timing::Off);
    for (int i = 0; i < kQueued; ++i) decode();
    p.set_timing(gpu::Timing::Passes);
    decode();
  }, p);
  return out;
}

BenchArgs parse(const std::vector<std::string>& argv) {
  BenchArgs a;
  ArgWalker args("bench", argv);
  while (!args.done()) {
    if (take_model_option(args, a.model)) continue;
    if (args.take("--synthetic")) {
      a.model.synthetic = args.value();
    } else if (args.take("--shared-layers")) {
      a.model.shared_layers = true;
    } else if (args.take("--seed")) {
      a.model.seed = static_cast<uint64_t>(parse_int("--seed", args.value(), 0, INT64_MAX));
    } else if (args.take("--prompt-tokens", "-p")) {
      a.prompt_tokens = parse_int("-p", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--max-tokens", "-n")) {
      a.new_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--pos")) {
      a.pos = parse_int("--pos", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--sync")) {
      a.sync = true;
    } else if (args.take("--sample")) {
      a.sample = true;
    } else if (args.take("--in-flight")) {
      a.in_flight =
          parse_int("--in-flight", args.value(), 1, static_cast<int64_t>(runtime::Program::kMaxReadsInFlight));
    } else if (args.take("--steps-per-submit")) {
      a.steps_per_submit = parse_int("--steps-per-submit", args.value(), 1,
                                     static_cast<int64_t>(runtime::Program::kMaxReadsInFlight));
      a.steps_given = true;
    } else if (args.take("--prefill-runs")) {
      a.prefill_runs = parse_int("--prefill-runs", args.value(), 1, 100);
    } else if (args.take("--warmup")) {
      a.warmup_ms = parse_int("--warmup", args.value(), 0, 600000);
    } else if (args.take("--profile")) {
      a.profile = true;
    } else if (args.take("--json")) {
      a.json = true;
    } else if (bool seed_given = false; take_sampling_option(args, a.settings, seed_given)) {
      a.sample = true;  // (--seed is the synthetic model's, taken above: the draws' seed stays 1)
    } else {
      args.unknown();
    }
  }
  if (!a.steps_given) a.steps_per_submit = std::min(a.steps_per_submit, a.in_flight);
  if (a.steps_per_submit > a.in_flight) {
    throw std::invalid_argument("bench: --steps-per-submit " + std::to_string(a.steps_per_submit) +
                                " is more than the steps in flight (--in-flight " + std::to_string(a.in_flight) + ")");
  }
  if (a.model.shared_layers && a.model.synthetic.empty()) {
    throw std::invalid_argument("bench: --shared-layers needs --synthetic NAME");
  }
  if (a.model.path.empty() && a.model.synthetic.empty()) {
    throw std::invalid_argument("bench: name the model with --model PATH or --synthetic NAME");
  }
  if (a.start() < a.prompt_tokens) {
    throw std::invalid_argument("bench: --pos " + std::to_string(a.start()) + " is before the end of the " +
                                std::to_string(a.prompt_tokens) + "-token prompt (-p); it must be at least -p");
  }
  return a;
}

// The context check against the cache the model was built with (--ctx, clamped to the model's
// max_position_embeddings).
void check_context(const BenchArgs& a, int64_t context) {
  if (a.start() + a.new_tokens > context) {
    throw std::invalid_argument("bench: decoding " + std::to_string(a.new_tokens) + " tokens from position " +
                                std::to_string(a.start()) + " exceeds the context of " + std::to_string(context) +
                                " tokens; raise --ctx or lower --pos, -p or -n");
  }
}

uint64_t kv_cache_bytes(const models::ModelConfig& c, int64_t context, uint64_t element_bytes) {
  return static_cast<uint64_t>(2 * c.num_layers * c.num_kv_heads * context * c.head_dim) * element_bytes;
}

double per_token_ms(double seconds, int64_t tokens) { return 1e3 * seconds / static_cast<double>(tokens); }

// Tokens per second, with the digits that matter from an H200's thousands to SwiftShader's 0.04.
std::string rate(double tok_s) {
  char text[32];
  std::snprintf(text, sizeof text, tok_s >= 10 ? "%.1f" : "%.3g", tok_s);
  return text;
}

}  // namespace

int run_bench(const GlobalOptions& global, const std::vector<std::string>& argv) {
  for (const std::string& arg : argv) {
    if (arg == "-h" || arg == "--help") {
      std::fputs(kBenchUsage, stdout);
      std::fputs(kModelOptionsHelp, stdout);
      return 0;
    }
  }
  const BenchArgs a = parse(argv);
  check_context(a, a.model.context);
  LoadedModel m = load_model(global, a.model, a.profile);
  check_context(a, m.limits.max_seq);
  const std::vector<int32_t> prompt = make_prompt(m, a);
  const int64_t start = a.start();
  // --sample pipelines where the device can pick with its settings (the model's "sampling" input,
  // with a repetition penalty its "seen_tokens" state), else the host samples, synchronously.
  const bool device_settings = a.sample && !a.sync && llm::device_can_pick(a.settings, m.limits);
  const bool drawn = device_settings && !a.settings.greedy();
  const bool pipelined = !a.sync && m.limits.next_token && (!a.sample || device_settings);
  // Warm-up: first-use costs, then the clocks (see the usage).
  run(m, a, pipelined, device_settings, prompt, start, std::min<int64_t>(a.new_tokens, 4), m.limits.max_prefill);
  int warmups = 0;
  for (const auto w0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(a.warmup_ms); ++warmups) {
    run(m, a, pipelined, device_settings, prompt, start, a.new_tokens, m.limits.max_prefill);
  }
  Timing t = run(m, a, pipelined, device_settings, prompt, start, a.new_tokens, m.limits.max_prefill);
  // One prefill varies by 2x between runs (GPU clocks): report the median of several, each on a
  // reset cache, with the fastest beside it.
  std::vector<double> prefills{t.prefill_s};
  for (int64_t i = 1; i < a.prefill_runs; ++i) {
    prefills.push_back(run(m, a, pipelined, device_settings, prompt, start, 0, m.limits.max_prefill).prefill_s);
  }
  std::sort(prefills.begin(), prefills.end());
  t.prefill_s = prefills[prefills.size() / 2];
  const double fastest_prefill_s = prefills.front();
  const double submits_per_step = pipelined ? 1.0 / static_cast<double>(a.steps_per_submit) : kSubmitsPerSyncStep;
  const char* mode = drawn ? "pipelined_sampled" : pipelined ? "pipelined" : a.sample ? "sampled" : "sync";
  const runtime::MemoryReport mem = m.program->memory();
  const size_t kernels = m.program->kernels_compiled();  // profile_steps releases the program
  std::optional<std::pair<StepProfile, StepProfile>> profile;
  const bool timestamps = m.gpu->features().timestamp_query;
  if (a.profile && timestamps) {
    profile = profile_steps(m, prompt, start, global.program, pick_words(a, device_settings));
  }

  const int64_t n = a.new_tokens;
  const double prefill_tok_s = static_cast<double>(a.prompt_tokens) / t.prefill_s;
  const double decode_tok_s = static_cast<double>(n) / t.decode_s;
  const uint64_t kv16 = kv_cache_bytes(m.config, m.limits.max_seq, 2);
  const uint64_t kv32 = kv_cache_bytes(m.config, m.limits.max_seq, 4);
  const char* kv = a.model.half_kv_cache ? "f16" : "f32";
  const std::string name = a.model.synthetic.empty() ? a.model.path
                           : "synthetic " + a.model.synthetic +
                                 (a.model.shared_layers ? " (every layer with layer 0's weights)" : "");

  if (a.json) {
    nlohmann::json out = {
        {"model", name},
        {"description", m.description},
        {"adapter", m.gpu->adapter().device},
        {"load_s", m.load_seconds},
        {"build_s", m.build_seconds},
        {"kernels_compiled", kernels},
        {"context", m.limits.max_seq},
        {"prompt_tokens", a.prompt_tokens},
        {"prompt_pos", start - a.prompt_tokens},
        {"prefill_steps", t.prefill_steps},
        {"prefill_s", t.prefill_s},
        {"prefill_runs", a.prefill_runs},
        {"warmup_ms", a.warmup_ms},
        {"warmup_runs", warmups},
        {"prefill_fastest_s", fastest_prefill_s},
        {"prefill_tok_s", prefill_tok_s},
        {"first_token_s", t.first_token_s},
        {"decode_tokens", n},
        {"decode_pos", start},
        {"decode_s", t.decode_s},
        {"decode_mode", mode},
        {"token_ids", t.tokens},
        {"decode_in_flight", pipelined ? a.in_flight : 1},
        {"decode_steps_per_submit", pipelined ? a.steps_per_submit : 1},
        {"decode_tok_s", decode_tok_s},
        {"dispatches_per_prefill_step", t.prefill_dispatches},
        {"submits_per_prefill_step", t.prefill_submits},
        {"dispatches_per_decode_token", t.decode_dispatches},
        {"submits_per_decode_token", submits_per_step},
        {"host_wall_ms_per_decode_token", per_token_ms(t.decode_s, n)},
        {"host_cpu_ms_per_decode_token", per_token_ms(t.decode_cpu.process, n)},
        {"host_thread_cpu_ms_per_decode_token", per_token_ms(t.decode_cpu.thread, n)},
        {"host_submit_cpu_ms_per_decode_token", per_token_ms(t.submit_cpu, n)},
        {"host_execute_ms_per_decode_token",
         {{"resize", per_token_ms(t.submit_phases.resize, n)},
          {"params", per_token_ms(t.submit_phases.params, n)},
          {"record", per_token_ms(t.submit_phases.record, n)},
          {"copies", per_token_ms(t.submit_phases.copies, n)},
          {"submit", per_token_ms(t.submit_phases.submit, n)}}},
        {"memory",
         {{"constants", mem.constants},
          {"state", mem.state},
          {"inputs", mem.inputs},
          {"intermediates", mem.intermediates},
          {"intermediates_without_reuse", mem.unplanned},
          {"scratch", mem.scratch},
          {"total", mem.total()}}},
        {"kv_cache", {{"dtype", kv}, {"f16_bytes", kv16}, {"f32_bytes", kv32}}}};
    out["seed"] = a.model.synthetic.empty() ? nlohmann::json() : nlohmann::json(a.model.seed);
    if (profile) {
      out["profile"] = {{"prefill", profile_json(profile->first)}, {"decode", profile_json(profile->second)}};
    } else if (a.profile) {
      out["profile"] = nullptr;
    }
    std::puts(out.dump(2).c_str());
    return 0;
  }

  const auto hb = [](uint64_t b) { return runtime::human_bytes(b); };
  std::printf("model        %s (%s), ready in %.1f s (the program built in %.2f s, %zu kernels compiled)\n", name.c_str(),
              m.description.c_str(), m.load_seconds, m.build_seconds, kernels);
  std::printf("prefill      %s in %.3f s: %s tok/s (%lld step%s, %zu dispatches in %zu submit%s in the last; median of %lld runs, "
              "fastest %s tok/s)\n",
              tokens_at(a.prompt_tokens, start - a.prompt_tokens).c_str(), t.prefill_s, rate(prefill_tok_s).c_str(),
              static_cast<long long>(t.prefill_steps), t.prefill_steps == 1 ? "" : "s", t.prefill_dispatches,
              t.prefill_submits, t.prefill_submits == 1 ? "" : "s", static_cast<long long>(a.prefill_runs),
              rate(static_cast<double>(a.prompt_tokens) / fastest_prefill_s).c_str());
  std::printf("first token  %.3f s\n", t.first_token_s);
  std::printf("warm-up      %d untimed run%s of the same shape first (--warmup %lld ms)\n", warmups,
              warmups == 1 ? "" : "s", static_cast<long long>(a.warmup_ms));
  if (pipelined) {
    std::printf("decode       %s in %.3f s: %s tok/s (pipelined, up to %lld steps in flight, %lld a submit%s)\n",
                tokens_at(n, start).c_str(), t.decode_s, rate(decode_tok_s).c_str(),
                static_cast<long long>(a.in_flight), static_cast<long long>(a.steps_per_submit),
                device_settings
                    ? sampling_text(drawn ? ", drawn on the device" : ", picked on the device", *a.sampling()).c_str()
                    : "");
    if (a.steps_per_submit == 1) {
      std::printf("per token    %zu dispatches, 1 submit (the step's command buffer, with the token's copies)\n",
                  t.decode_dispatches);
    } else {
      std::printf("per token    %zu dispatches, 1/%lld submit (%lld steps' command buffer, with their tokens' copies)\n",
                  t.decode_dispatches, static_cast<long long>(a.steps_per_submit),
                  static_cast<long long>(a.steps_per_submit));
    }
  } else {
    std::string how = a.sync ? "" : ": the model has no next_token output";
    if (const auto so = a.sampling()) how = sampling_text(", sampled on the host", *so);
    std::printf("decode       %s in %.3f s: %s tok/s (synchronous%s)\n", tokens_at(n, start).c_str(), t.decode_s,
                rate(decode_tok_s).c_str(), how.c_str());
    std::printf("per token    %zu dispatches, %d submit (the step's command buffer, with the logits' copy; the "
                "host waits for it)\n",
                t.decode_dispatches, kSubmitsPerSyncStep);
  }
  std::printf("host time    per decode token: wall %.3f ms, CPU %.3f ms (process), %.3f ms (this thread, %.3f of "
              "them setting up, recording and submitting the step)\n",
              per_token_ms(t.decode_s, n), per_token_ms(t.decode_cpu.process, n), per_token_ms(t.decode_cpu.thread, n),
              per_token_ms(t.submit_cpu, n));
  std::printf("             of which executing: resize %.3f ms, params %.3f, recording %.3f, copies and readback "
              "%.3f, submitting %.3f (Dawn turning the recording into the backend's commands)\n",
              per_token_ms(t.submit_phases.resize, n), per_token_ms(t.submit_phases.params, n),
              per_token_ms(t.submit_phases.record, n), per_token_ms(t.submit_phases.copies, n),
              per_token_ms(t.submit_phases.submit, n));
  std::printf("memory       %s: constants %s, state %s, intermediates %s (%s without reuse), scratch %s, inputs %s\n",
              hb(mem.total()).c_str(), hb(mem.constants).c_str(), hb(mem.state).c_str(), hb(mem.intermediates).c_str(),
              hb(mem.unplanned).c_str(), hb(mem.scratch).c_str(), hb(mem.inputs).c_str());
  std::printf("kv cache     %s as %s at context %lld (f16 %s, f32 %s: f16 saves %s)\n",
              hb(a.model.half_kv_cache ? kv16 : kv32).c_str(), kv, static_cast<long long>(m.limits.max_seq),
              hb(kv16).c_str(), hb(kv32).c_str(), hb(kv32 - kv16).c_str());
  if (profile) {
    std::fputs(profile_table(profile->first).c_str(), stdout);
    std::fputs(profile_table(profile->second).c_str(), stdout);
  } else if (a.profile) {
    std::puts("profile      not available: the adapter has no timestamp-query feature");
  }
  return 0;
}

}  // namespace wgx::cli
