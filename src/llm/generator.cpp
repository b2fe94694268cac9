#include "llm/generator.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "llm/emitter.h"

namespace wgx::llm {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds of the whole process (Dawn's threads, and SwiftShader's when it is the "GPU") and of
// the calling thread.
struct CpuTime {
  double process = 0, thread = 0;
};
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
CpuTime cpu_now() { return {cpu_seconds(CLOCK_PROCESS_CPUTIME_ID), cpu_seconds(CLOCK_THREAD_CPUTIME_ID)}; }

const graph::NamedValue* find_named(const std::vector<graph::NamedValue>& list, std::string_view name) {
  for (const auto& v : list) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace

ModelLimits model_limits(const graph::Graph& graph) {
  auto missing = [](const std::string& what) {
    throw std::invalid_argument("the model graph has no " + what + " (see models/model.h for what a model provides)");
  };
  const graph::NamedValue* tokens = find_named(graph.inputs, "tokens");
  const graph::NamedValue* logits = find_named(graph.outputs, "logits");
  const auto pos = graph::find_sym(graph, "input_pos");
  if (!tokens) missing("input \"tokens\"");
  if (!logits) missing("output \"logits\"");
  if (!pos) missing("sym \"input_pos\"");
  const graph::Shape& tshape = graph.type(tokens->value).shape;
  const graph::Shape& lshape = graph.type(logits->value).shape;
  if (tshape.size() != 2 || !tshape[0].is_const(1)) missing("input \"tokens\" of shape [1, seq]");
  if (lshape.empty() || !lshape.back().is_const()) missing("output \"logits\" with a constant vocabulary size");
  ModelLimits limits;
  limits.max_prefill = tshape[1].max_value(graph.syms);
  limits.max_seq = graph.syms[pos->index].max + 1;
  limits.vocab = lshape.back().value();
  if (const graph::NamedValue* next = find_named(graph.outputs, "next_token")) {
    const graph::TensorType& t = graph.type(next->value);
    if (t.dtype != graph::DType::i32 || t.shape.size() != 2 || !t.shape[0].is_const(1) || !t.shape[1].is_const(1)) {
      missing("output \"next_token\" of type i32 [1, 1] (it has " + graph::to_string(t, &graph.syms) + ")");
    }
    limits.next_token = true;
  }
  if (const graph::NamedValue* words = find_named(graph.inputs, "sampling")) {
    const graph::TensorType& t = graph.type(words->value);
    if (t.dtype != graph::DType::i32 || t.shape.size() != 1 || !t.shape[0].is_const(8)) {
      missing("input \"sampling\" of type i32 [8] (it has " + graph::to_string(t, &graph.syms) + ")");
    }
    limits.device_sampling = limits.next_token;
  }
  for (const graph::MutableBuffer& b : graph.buffers) {
    if (b.name != "seen_tokens") continue;
    const graph::TensorType& t = graph.type(b.value);
    const int64_t words = ops::sampling::seen_words(limits.vocab);
    if (t.dtype != graph::DType::i32 || t.shape.size() != 1 || !t.shape[0].is_const(words)) {
      missing("state \"seen_tokens\" of type i32 [" + std::to_string(words) + "] (it has " +
              graph::to_string(t, &graph.syms) + ")");
    }
    limits.device_penalty = limits.device_sampling;
  }
  return limits;
}

bool device_can_pick(const SamplingOptions& s, const ModelLimits& limits) {
  if (s.repetition_penalty != 1.0f && !limits.device_penalty) return false;
  if (s.greedy()) return limits.next_token;
  return limits.device_sampling && s.top_k >= 1 && s.top_k <= ops::sampling::kMaxTopK;
}

bool device_can_draw(const SamplingOptions& s, const ModelLimits& limits) {
  return !s.greedy() && device_can_pick(s, limits);
}

ops::sampling::Words device_words(const SamplingOptions& s) {
  if (s.greedy()) return ops::sampling::greedy_words(s.repetition_penalty);
  return ops::sampling::sampling_words(s.top_k, s.temperature, s.top_p, s.min_p, s.seed, s.repetition_penalty);
}

std::vector<int32_t> seen_words(std::span<const int32_t> context, int64_t vocab) {
  std::vector<int32_t> words(static_cast<size_t>(ops::sampling::seen_words(vocab)), 0);
  for (int32_t t : context) {
    if (t < 0 || t >= vocab) continue;
    words[static_cast<size_t>(t / 32)] |= static_cast<int32_t>(1u << (t % 32));
  }
  return words;
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Eos: return "eos";
    case StopReason::StopString: return "stop string";
    case StopReason::MaxTokens: return "max tokens";
    case StopReason::Cancelled: return "cancelled";
  }
  return "?";
}

double GenerationStats::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0.0;
}

double GenerationStats::decode_tokens_per_second() const {
  return decode_seconds > 0 && generated_tokens > 1 ? static_cast<double>(generated_tokens - 1) / decode_seconds : 0.0;
}

Generator::Generator(runtime::Program& program, std::optional<tokenizer::Tokenizer> tokenizer, ModelLimits limits)
    : program_(program), tokenizer_(std::move(tokenizer)), limits_(limits) {
  if (limits_.max_seq < 1 || limits_.max_prefill < 1 || limits_.vocab < 1) {
    throw std::invalid_argument("model limits must be positive (max_seq, max_prefill, vocab)");
  }
  program_.reset_state();
}

void Generator::reset() {
  program_.reset_state();
  context_.clear();
  fed_ = 0;
}

void Generator::truncate(size_t tokens) {
  if (tokens >= context_.size()) return;
  context_.resize(tokens);
  fed_ = std::min(fed_, static_cast<int64_t>(tokens));
}

std::vector<float> Generator::feed(std::span<const int32_t> ids, int64_t chunk, int64_t* steps) {
  runtime::AsyncRead last;  // the last step's logits, copied out in its own command buffer
  for (size_t at = 0; at < ids.size();) {
    const size_t n = std::min(ids.size() - at, static_cast<size_t>(chunk));
    program_.set_input<int32_t>("tokens", ids.subspan(at, n), {1, static_cast<int64_t>(n)});
    program_.set_sym("input_pos", fed_);
    if (at + n == ids.size()) last = program_.read_async("logits");
    program_.execute();
    fed_ += static_cast<int64_t>(n);
    at += n;
    ++*steps;
  }
  // A one-token step is likely followed by another: record it while this one runs (its token,
  // picked from these logits, is a queue write before its submit: Program::prepare).
  if (ids.size() == 1 && fed_ < limits_.max_seq) {
    program_.set_sym("input_pos", fed_);
    program_.prepare();
  }
  std::vector<float> logits = last.f32();
  // A graph built with all_logits returns every position's row: keep the last.
  const size_t vocab = static_cast<size_t>(limits_.vocab);
  if (logits.size() < vocab || logits.size() % vocab != 0) {
    throw std::runtime_error("the model's logits hold " + std::to_string(logits.size()) +
                             " values, not a multiple of the vocabulary (" + std::to_string(vocab) + ")");
  }
  logits.erase(logits.begin(), logits.end() - static_cast<ptrdiff_t>(vocab));
  return logits;
}

runtime::AsyncRead Generator::feed_pipelined(std::span<const int32_t> ids, int64_t chunk, int64_t* steps,
                                             const std::vector<int32_t>* seen) {
  runtime::AsyncRead first;
  for (size_t at = 0; at < ids.size();) {
    const size_t n = std::min(ids.size() - at, static_cast<size_t>(chunk));
    program_.set_input<int32_t>("tokens", ids.subspan(at, n), {1, static_cast<int64_t>(n)});
    program_.set_sym("input_pos", fed_);
    if (at + n == ids.size()) {
      if (seen) program_.write_state<int32_t>("seen_tokens", *seen);
      program_.feed_from("tokens", "next_token");
      first = program_.read_async("next_token");
    }
    program_.execute();
    fed_ += static_cast<int64_t>(n);
    at += n;
    ++*steps;
  }
  return first;
}

GenerationResult Generator::generate(std::span<const int32_t> prompt, const GenerationOptions& options,
                                     const TokenCallback& on_token) {
  const auto start = Clock::now();
  validate(options.sampling);
  if (options.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens must be >= 0");
  if (options.prefill_chunk < 0) throw std::invalid_argument("prefill_chunk must be >= 0");
  constexpr auto kMaxInFlight = static_cast<int64_t>(runtime::Program::kMaxReadsInFlight);
  if (options.decode_in_flight < 0 || options.decode_in_flight > kMaxInFlight) {
    throw std::invalid_argument("decode_in_flight must be in [0, " + std::to_string(kMaxInFlight) + "]");
  }
  if (options.decode_steps_per_submit < 1 || options.decode_steps_per_submit > kMaxInFlight) {
    throw std::invalid_argument("decode_steps_per_submit must be in [1, " + std::to_string(kMaxInFlight) + "] (it is " +
                                std::to_string(options.decode_steps_per_submit) + ")");
  }
  const int64_t per_submit = std::min(options.decode_steps_per_submit, options.decode_in_flight);
  for (int32_t id : prompt) {
    if (id < 0 || id >= limits_.vocab) {
      throw std::invalid_argument("prompt token " + std::to_string(id) + " is outside the model's vocabulary (" +
                                  std::to_string(limits_.vocab) + " tokens)");
    }
  }
  const int64_t used = static_cast<int64_t>(context_.size());
  const int64_t asked = static_cast<int64_t>(prompt.size()) + options.max_new_tokens;
  if (used + asked > limits_.max_seq) {
    throw ContextFullError("the context holds " + std::to_string(limits_.max_seq) + " tokens, but " +
                           (used ? std::to_string(used) + " are in use, " : std::string()) + "the prompt has " +
                           std::to_string(prompt.size()) + " and " + std::to_string(options.max_new_tokens) +
                           " new tokens were asked for: ask for fewer new tokens, shorten the prompt, " +
                           (used ? "reset the conversation, " : "") + "or build the model with a longer context");
  }
  context_.insert(context_.end(), prompt.begin(), prompt.end());
  const std::span<const int32_t> pending = std::span<const int32_t>(context_).subspan(static_cast<size_t>(fed_));
  if (pending.empty()) throw std::invalid_argument("nothing to feed: the prompt is empty");

  GenerationResult result;
  GenerationStats& stats = result.stats;
  stats.prompt_tokens = static_cast<int64_t>(pending.size());
  stats.cached_tokens = fed_;
  const int64_t chunk =
      options.prefill_chunk > 0 ? std::min(options.prefill_chunk, limits_.max_prefill) : limits_.max_prefill;
  const SamplingOptions& so = options.sampling;
  const bool pipelined = options.max_new_tokens > 0 && options.decode_in_flight > 0 && device_can_pick(so, limits_) &&
                         (so.greedy() || options.sample_on_device);
  const bool drawn = pipelined && !so.greedy();
  // The device's pick follows these words (greedy where the host samples: the cheapest).
  if (limits_.device_sampling) {
    const ops::sampling::Words w = pipelined ? device_words(so) : ops::sampling::greedy_words();
    program_.set_input<int32_t>("sampling", w, {static_cast<int64_t>(w.size())});
  }
  // A penalty on the device looks at the seen set: the context's tokens, then each pick's.
  std::vector<int32_t> seen;
  if (pipelined && so.repetition_penalty != 1.0f) seen = seen_words(context_, limits_.vocab);

  stats.pipelined = pipelined;
  stats.drawn_on_device = drawn;
  Emitter emitter(tokenizer_, options, on_token, result);
  Clock::time_point first_token;
  CpuTime cpu0;
  runtime::Program::HostTimes host0;
  // Takes one sampled token: the context, then text, callback and stop conditions. Whether to
  // go on.
  auto accept = [&](int32_t token) {
    if (result.tokens.empty()) {
      first_token = Clock::now();
      stats.first_token_seconds = std::chrono::duration<double>(first_token - start).count();
      cpu0 = cpu_now();
      host0 = program_.host_times();
    }
    context_.push_back(token);
    return emitter.accept(token);
  };

  if (!pipelined) {
    std::vector<float> logits = feed(pending, chunk, &stats.prefill_steps);
    stats.prefill_seconds = seconds_since(start);
    if (options.max_new_tokens == 0) return result;
    Sampler sampler(options.sampling);
    while (accept(sampler.sample(logits, context_))) {
      int64_t steps = 0;
      logits = feed(std::span<const int32_t>(&context_.back(), 1), 1, &steps);
    }
  } else {
    // Every step feeds the next on the device; the feed ends with this call, however it ends.
    struct EndFeed {
      runtime::Program& p;
      ~EndFeed() {
        try {
          p.stop_feed("tokens");
        } catch (...) {
        }
      }
    } end_feed{program_};
    std::deque<runtime::AsyncRead> in_flight;
    in_flight.push_back(feed_pipelined(pending, chunk, &stats.prefill_steps, seen.empty() ? nullptr : &seen));
    // Decode step j (j >= 1) feeds token j-1 at position base + j - 1 and yields token j.
    const int64_t base = fed_;
    int64_t requested = 1;  // tokens asked of the device so far
    for (bool go_on = true; go_on;) {
      // A group of steps once there is room for all of it (or for all that is left).
      for (;;) {
        const int64_t n = std::min(per_submit, options.max_new_tokens - requested);
        if (n <= 0 || static_cast<int64_t>(in_flight.size()) + n > options.decode_in_flight) break;
        auto step = [&](int k) {
          program_.set_sym("input_pos", base + requested - 1 + k);
          in_flight.push_back(program_.read_async("next_token"));
        };
        step(0);
        program_.execute_steps(static_cast<int>(n), step);
        requested += n;
      }
      const int32_t token = in_flight.front().i32().at(0);
      in_flight.pop_front();
      if (result.tokens.empty()) stats.prefill_seconds = seconds_since(start);
      if (token < 0 || token >= limits_.vocab) {
        throw std::runtime_error("the model's next_token is " + std::to_string(token) +
                                 ", outside the vocabulary: were all logits NaN (or, when sampling, infinite)?");
      }
      go_on = accept(token);
      if (go_on) ++fed_;  // fed by the step already submitted (or about to be)
    }
  }
  stats.generated_tokens = static_cast<int64_t>(result.tokens.size());
  stats.decode_seconds = seconds_since(first_token);
  const CpuTime cpu1 = cpu_now();
  stats.decode_cpu_seconds = cpu1.process - cpu0.process;
  stats.decode_thread_cpu_seconds = cpu1.thread - cpu0.thread;
  const runtime::Program::HostTimes& h = program_.host_times();
  stats.decode_host = {h.resize - host0.resize, h.params - host0.params, h.record - host0.record,
                       h.copies - host0.copies, h.submit - host0.submit};
  stats.dispatches_per_step = program_.dispatches_per_execute();
  return result;
}

}  // namespace wgx::llm
