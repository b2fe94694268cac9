// wgx bench: prefill and decode speed of a model, end to end (token picking included), through
// the same Session::generate path wgx run takes: a prompt of -p tokens that ends at --pos, then
// -n tokens decoded (greedy unless --sample, eos ignored), after warm-up runs of the same shape.
// Besides the speeds: dispatches and submits per decode token, host CPU time per decode token, the
// device memory and, with --profile, GPU time per op, route and kernel (on the program itself:
// api/internal.h).
//
// --pos puts the prompt deep in the context: the session is fed pos - p tokens of the prompt's
// kind first (not timed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "api/internal.h"
#include "cli/bench_parallel.h"
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
                          process (llama-3.2-1b, qwen3-0.6b, llama-3.1-8b, qwen3-8b or
                          demo-tiny); the prompt is random
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
  --parallel W1,W2,...    continuous batching instead (wgx::Batch, as wgx serve --parallel runs
                          it): for each width W, W sequences with prompts of -p tokens start
                          together, their prompts fed first, then decode -n tokens each
                          (greedy unless --sample, eos ignored), as llama-batched-bench runs them. Reports
                          each width's prefill rate, aggregate decode rate (the decode phase's
                          tokens over its time), per-stream rate and inter-token latency
                          p50/p99 (the wall time of a step that gives every sequence a token);
                          with --profile, one decode step's GPU time and its ops. The model is
                          loaded for the widest W; --ctx defaults to -p + -n + 1 here. --pos,
                          --sync, --in-flight and --steps-per-submit do not apply

)";

constexpr const char* kFiller =
    "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. ";

using Clock = std::chrono::steady_clock;

struct BenchArgs {
  ModelArgs model;
  int64_t prompt_tokens = 128;
  int64_t new_tokens = 128;
  std::optional<int64_t> pos;
  bool profile = false;
  bool json = false;
  bool sync = false;
  bool sample = false;  // --sample (or a sampling setting): tokens drawn, on the device where it can
  Sampling settings = [] {
    Sampling s;
    s.seed = 1;
    return s;
  }();
  int64_t in_flight = GenerateOptions{}.in_flight;
  int64_t steps_per_submit = GenerateOptions{}.steps_per_submit;
  bool steps_given = false;  // --steps-per-submit (else at most --in-flight)
  int64_t prefill_runs = 5;  // the prefill time reported is the median of this many
  int64_t warmup_ms = 1000;  // untimed runs first, for at least this long
  std::vector<int64_t> parallel;  // --parallel's widths (empty: one session)

  int64_t start() const { return pos.value_or(prompt_tokens); }  // the first decoded position
};

// What one timed run gives.
struct Timing {
  Result result;
  llm::GenerationStats stats;  // with the host's phases
};

// The options of the timed generations: -n tokens after the first, eos ignored.
GenerateOptions generate_options(const BenchArgs& a, int64_t tokens) {
  GenerateOptions o;
  o.max_tokens = tokens;
  o.ignore_eos = true;
  o.sampling = a.sample ? a.settings : Sampling::greedy();
  o.sampling.seed = a.settings.seed;
  o.in_flight = a.sync ? 0 : a.in_flight;
  o.steps_per_submit = a.steps_per_submit;
  return o;
}

// One run: the session fed `filler` (untimed), then the prompt and `tokens` new tokens (none: the
// prefill alone, up to its first token).
Timing run(Session& session, const BenchArgs& a, std::span<const int32_t> filler,
           std::span<const int32_t> prompt, int64_t tokens) {
  session.reset();
  if (!filler.empty()) {
    GenerateOptions o;
    o.max_tokens = 0;
    session.generate(filler, o);
  }
  Timing t;
  t.result = session.generate(prompt, generate_options(a, tokens > 0 ? tokens + 1 : 1));
  t.stats = Internals::impl(session).last_stats;
  return t;
}

std::string sampling_text(const char* where, const Sampling& so) {
  char text[224];
  std::snprintf(text, sizeof text, "%s: temperature %g, top-k %d, top-p %g, min-p %g%s, seed %llu", where,
                static_cast<double>(so.temperature), so.top_k, static_cast<double>(so.top_p),
                static_cast<double>(so.min_p), so.repetition_penalty != 1.0f ? ", a repetition penalty" : "",
                static_cast<unsigned long long>(so.seed.value_or(0)));
  return text;
}

// The prompt's tokens, `count` of them: the filler text where the model has a tokenizer, random
// ids otherwise (from the synthetic weights' seed).
std::vector<int32_t> make_tokens(const Model& m, const BenchArgs& a, int64_t count, uint64_t stream) {
  std::vector<int32_t> ids;
  const Model::Impl& impl = Internals::impl(m);
  if (impl.tokenizer) {
    const std::vector<int32_t> piece = impl.tokenizer->encode(kFiller);
    while (static_cast<int64_t>(ids.size()) < count) ids.insert(ids.end(), piece.begin(), piece.end());
  } else {
    llm::Rng rng(a.model.seed + stream);
    while (static_cast<int64_t>(ids.size()) < count) {
      ids.push_back(static_cast<int32_t>(rng.next() % static_cast<uint64_t>(impl.limits.vocab)));
    }
  }
  ids.resize(static_cast<size_t>(count));
  return ids;
}

// "1,4,16,64" -> {1, 4, 16, 64}.
std::vector<int64_t> parse_widths(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(parse_int("--parallel", text.substr(at, comma - at), 1, 4096));
    at = comma + 1;
  }
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
      a.in_flight = parse_int("--in-flight", args.value(), 1, 8);
    } else if (args.take("--steps-per-submit")) {
      a.steps_per_submit = parse_int("--steps-per-submit", args.value(), 1, 8);
      a.steps_given = true;
    } else if (args.take("--prefill-runs")) {
      a.prefill_runs = parse_int("--prefill-runs", args.value(), 1, 100);
    } else if (args.take("--warmup")) {
      a.warmup_ms = parse_int("--warmup", args.value(), 0, 600000);
    } else if (args.take("--profile")) {
      a.profile = true;
    } else if (args.take("--json")) {
      a.json = true;
    } else if (args.take("--parallel")) {
      a.parallel = parse_widths(args.value());
    } else if (take_sampling_option(args, a.settings)) {
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
  if (!a.parallel.empty()) {
    if (a.pos || a.sync || a.steps_given) {
      throw std::invalid_argument("bench: --parallel decodes from the prompt's end, in batched steps; "
                                  "--pos, --sync, --in-flight and --steps-per-submit do not apply");
    }
    if (a.new_tokens < 4) throw std::invalid_argument("bench: --parallel decodes at least 4 tokens (-n)");
    if (!a.model.load.context) a.model.load.context = a.prompt_tokens + a.new_tokens + 1;
    a.model.load.parallel = *std::max_element(a.parallel.begin(), a.parallel.end());
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
  if (a.start() + a.new_tokens + 1 > context) {
    throw std::invalid_argument("bench: decoding " + std::to_string(a.new_tokens) + " tokens from position " +
                                std::to_string(a.start()) + " exceeds the context of " + std::to_string(context) +
                                " tokens; raise --ctx or lower --pos, -p or -n");
  }
}

uint64_t kv_cache_bytes(const models::ModelConfig& c, int64_t context, uint64_t element_bytes) {
  return static_cast<uint64_t>(2 * c.num_layers * c.num_kv_heads * context * c.head_dim) * element_bytes;
}

std::string model_name(const BenchArgs& a) {
  return a.model.synthetic.empty()
             ? a.model.path
             : "synthetic " + a.model.synthetic + (a.model.shared_layers ? " (every layer with layer 0's weights)" : "");
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
  if (a.model.load.context) check_context(a, *a.model.load.context);
  const Engine engine = make_engine(global);
  Model m = load_model(engine, a.model, a.profile);
  Model::Impl& impl = Internals::impl(m);
  check_context(a, impl.limits.max_seq);
  if (!a.parallel.empty()) {
    ParallelBenchArgs p;
    p.widths = a.parallel;
    p.prompt_tokens = a.prompt_tokens;
    p.new_tokens = a.new_tokens;
    p.warmup_ms = a.warmup_ms;
    p.profile = a.profile;
    p.json = a.json;
    if (a.sample) {
      p.sampling = a.settings;
      p.sampling_text = sampling_text("sampled", a.settings);
    } else {
      p.sampling_text = "greedy";
    }
    p.name = model_name(a);
    // Each sequence's prompt its own: the filler text (or random ids) from a different place.
    const std::vector<int32_t> text = make_tokens(m, a, a.prompt_tokens + 4096, 0);
    p.prompt_of = [&text, &a](int64_t i) {
      const auto from = text.begin() + (i * 61) % 4096;
      return std::vector<int32_t>(from, from + a.prompt_tokens);
    };
    return bench_parallel(m, p);
  }
  const std::vector<int32_t> prompt = make_tokens(m, a, a.prompt_tokens, 0);
  const int64_t start = a.start();
  const std::vector<int32_t> filler = make_tokens(m, a, start - a.prompt_tokens, 1);
  std::optional<Session> session = m.session();
  // Warm-up: first-use costs, then the clocks (see the usage).
  run(*session, a, filler, prompt, std::min<int64_t>(a.new_tokens, 4));
  int warmups = 0;
  for (const auto w0 = Clock::now(); Clock::now() - w0 < std::chrono::milliseconds(a.warmup_ms); ++warmups) {
    run(*session, a, filler, prompt, a.new_tokens);
  }
  Timing t = run(*session, a, filler, prompt, a.new_tokens);
  const Stats& st = t.result.stats;
  // One prefill varies by 2x between runs (GPU clocks): report the median of several, each on a
  // reset cache, with the fastest beside it; the dispatches of a prefill's last step after them.
  std::vector<double> prefills{st.prefill_seconds};
  do {
    const Timing p = run(*session, a, filler, prompt, 0);
    if (static_cast<int64_t>(prefills.size()) < a.prefill_runs) prefills.push_back(p.result.stats.prefill_seconds);
  } while (static_cast<int64_t>(prefills.size()) < a.prefill_runs);
  const size_t prefill_dispatches = impl.program->dispatches_per_execute();
  const size_t prefill_submits = impl.program->submits_per_execute();
  std::sort(prefills.begin(), prefills.end());
  const double prefill_s = prefills[prefills.size() / 2];
  const double fastest_prefill_s = prefills.front();
  const bool pipelined = st.pipelined;
  const bool drawn = st.drawn_on_device;
  const bool device_settings = a.sample && pipelined;
  const double submits_per_step = pipelined ? 1.0 / static_cast<double>(a.steps_per_submit) : 1.0;
  const char* mode = drawn ? "pipelined_sampled" : pipelined ? "pipelined" : a.sample ? "sampled" : "sync";
  const runtime::MemoryReport mem = impl.program->memory();
  const size_t kernels = impl.program->kernels_compiled();  // profile_steps releases the program
  const ModelInfo info = m.info();
  std::optional<std::pair<StepProfile, StepProfile>> profile;
  const bool timestamps = impl.engine->gpu->features().timestamp_query;
  if (a.profile && timestamps) {
    const ops::sampling::Words pick = device_settings ? llm::device_words([&] {
      llm::SamplingOptions s;
      s.temperature = a.settings.temperature;
      s.top_k = a.settings.top_k;
      s.top_p = a.settings.top_p;
      s.min_p = a.settings.min_p;
      s.repetition_penalty = a.settings.repetition_penalty;
      s.seed = a.settings.seed.value_or(1);
      return s;
    }())
                                                      : ops::sampling::greedy_words();
    session.reset();  // the profile builds the program again, with timestamps
    profile = profile_steps(impl, prompt, start, impl.engine->options, pick);
  }

  const int64_t n = a.new_tokens;
  const double prefill_tok_s = static_cast<double>(a.prompt_tokens) / prefill_s;
  const double decode_tok_s = static_cast<double>(n) / st.decode_seconds;
  const uint64_t kv16 = kv_cache_bytes(impl.config, impl.limits.max_seq, 2);
  const uint64_t kv32 = kv_cache_bytes(impl.config, impl.limits.max_seq, 4);
  const char* kv = info.kv_cache.c_str();
  const std::string name = model_name(a);
  const llm::GenerationStats& gs = t.stats;
  const double thread_ms = per_token_ms(gs.decode_thread_cpu_seconds, n);

  if (a.json) {
    nlohmann::json out = {
        {"model", name},
        {"description", info.description},
        {"adapter", info.adapter},
        {"load_s", info.load_seconds},
        {"build_s", info.build_seconds},
        {"kernels_compiled", kernels},
        {"context", info.context},
        {"prompt_tokens", a.prompt_tokens},
        {"prompt_pos", start - a.prompt_tokens},
        {"prefill_steps", st.prefill_steps},
        {"prefill_s", prefill_s},
        {"prefill_runs", a.prefill_runs},
        {"warmup_ms", a.warmup_ms},
        {"warmup_runs", warmups},
        {"prefill_fastest_s", fastest_prefill_s},
        {"prefill_tok_s", prefill_tok_s},
        {"first_token_s", st.first_token_seconds},
        {"decode_tokens", n},
        {"decode_pos", start},
        {"decode_s", st.decode_seconds},
        {"decode_mode", mode},
        {"token_ids", t.result.tokens},
        {"decode_in_flight", pipelined ? a.in_flight : 1},
        {"decode_steps_per_submit", pipelined ? a.steps_per_submit : 1},
        {"decode_tok_s", decode_tok_s},
        {"dispatches_per_prefill_step", prefill_dispatches},
        {"submits_per_prefill_step", prefill_submits},
        {"dispatches_per_decode_token", st.dispatches_per_step},
        {"submits_per_decode_token", submits_per_step},
        {"host_wall_ms_per_decode_token", per_token_ms(st.decode_seconds, n)},
        {"host_cpu_ms_per_decode_token", per_token_ms(gs.decode_cpu_seconds, n)},
        {"host_thread_cpu_ms_per_decode_token", thread_ms},
        {"host_execute_ms_per_decode_token",
         {{"resize", per_token_ms(gs.decode_host.resize, n)},
          {"params", per_token_ms(gs.decode_host.params, n)},
          {"record", per_token_ms(gs.decode_host.record, n)},
          {"copies", per_token_ms(gs.decode_host.copies, n)},
          {"submit", per_token_ms(gs.decode_host.submit, n)}}},
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
              info.description.c_str(), info.load_seconds, info.build_seconds, kernels);
  std::printf("prefill      %s in %.3f s: %s tok/s (%lld step%s, %zu dispatches in %zu submit%s in the last; median of %lld runs, "
              "fastest %s tok/s)\n",
              tokens_at(a.prompt_tokens, start - a.prompt_tokens).c_str(), prefill_s, rate(prefill_tok_s).c_str(),
              static_cast<long long>(st.prefill_steps), st.prefill_steps == 1 ? "" : "s", prefill_dispatches,
              prefill_submits, prefill_submits == 1 ? "" : "s", static_cast<long long>(a.prefill_runs),
              rate(static_cast<double>(a.prompt_tokens) / fastest_prefill_s).c_str());
  std::printf("first token  %.3f s\n", st.first_token_seconds);
  std::printf("warm-up      %d untimed run%s of the same shape first (--warmup %lld ms)\n", warmups,
              warmups == 1 ? "" : "s", static_cast<long long>(a.warmup_ms));
  if (pipelined) {
    std::printf("decode       %s in %.3f s: %s tok/s (pipelined, up to %lld steps in flight, %lld a submit%s)\n",
                tokens_at(n, start).c_str(), st.decode_seconds, rate(decode_tok_s).c_str(),
                static_cast<long long>(a.in_flight), static_cast<long long>(a.steps_per_submit),
                device_settings
                    ? sampling_text(drawn ? ", drawn on the device" : ", picked on the device", a.settings).c_str()
                    : "");
    if (a.steps_per_submit == 1) {
      std::printf("per token    %zu dispatches, 1 submit (the step's command buffer, with the token's copies)\n",
                  st.dispatches_per_step);
    } else {
      std::printf("per token    %zu dispatches, 1/%lld submit (%lld steps' command buffer, with their tokens' copies)\n",
                  st.dispatches_per_step, static_cast<long long>(a.steps_per_submit),
                  static_cast<long long>(a.steps_per_submit));
    }
  } else {
    std::string how = a.sync ? "" : ": the model has no next_token output";
    if (a.sample) how = sampling_text(", sampled on the host", a.settings);
    std::printf("decode       %s in %.3f s: %s tok/s (synchronous%s)\n", tokens_at(n, start).c_str(), st.decode_seconds,
                rate(decode_tok_s).c_str(), how.c_str());
    std::printf("per token    %zu dispatches, 1 submit (the step's command buffer, with the logits' copy; the "
                "host waits for it)\n",
                st.dispatches_per_step);
  }
  std::printf("host time    per decode token: wall %.3f ms, CPU %.3f ms (process), %.3f ms (this thread)\n",
              per_token_ms(st.decode_seconds, n), per_token_ms(gs.decode_cpu_seconds, n), thread_ms);
  std::printf("             of which executing: resize %.3f ms, params %.3f, recording %.3f, copies and readback "
              "%.3f, submitting %.3f (Dawn turning the recording into the backend's commands)\n",
              per_token_ms(gs.decode_host.resize, n), per_token_ms(gs.decode_host.params, n),
              per_token_ms(gs.decode_host.record, n), per_token_ms(gs.decode_host.copies, n),
              per_token_ms(gs.decode_host.submit, n));
  std::printf("memory       %s: constants %s, state %s, intermediates %s (%s without reuse), scratch %s, inputs %s\n",
              hb(mem.total()).c_str(), hb(mem.constants).c_str(), hb(mem.state).c_str(), hb(mem.intermediates).c_str(),
              hb(mem.unplanned).c_str(), hb(mem.scratch).c_str(), hb(mem.inputs).c_str());
  std::printf("kv cache     %s as %s at context %lld (f16 %s, f32 %s: f16 saves %s)\n",
              hb(info.kv_cache == "f16" ? kv16 : kv32).c_str(), kv, static_cast<long long>(impl.limits.max_seq),
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
