// wgx::Session: one conversation over a model's program. The model runs one generation at a time
// (its mutex); its cache holds the conversation of one session, the `cache_owner`: another
// session's turn feeds that session's tokens again first.
#include <algorithm>
#include <random>

#include "api/internal.h"

namespace wgx {

namespace {

uint64_t random_seed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) | rd();
}

}  // namespace

StopReason stop_reason(llm::StopReason r) {
  switch (r) {
    case llm::StopReason::Eos: return StopReason::Eos;
    case llm::StopReason::StopString: return StopReason::StopString;
    case llm::StopReason::MaxTokens: return StopReason::MaxTokens;
    case llm::StopReason::Cancelled: return StopReason::Cancelled;
  }
  return StopReason::MaxTokens;
}

Stats stats_of(const llm::GenerationStats& s) {
  Stats o;
  o.prompt_tokens = s.prompt_tokens;
  o.cached_tokens = s.cached_tokens;
  o.generated_tokens = s.generated_tokens;
  o.prefill_steps = s.prefill_steps;
  o.prefill_seconds = s.prefill_seconds;
  o.first_token_seconds = s.first_token_seconds;
  o.decode_seconds = s.decode_seconds;
  o.pipelined = s.pipelined;
  o.drawn_on_device = s.drawn_on_device;
  o.dispatches_per_step = s.dispatches_per_step;
  o.decode_cpu_seconds = s.decode_cpu_seconds;
  o.decode_thread_cpu_seconds = s.decode_thread_cpu_seconds;
  return o;
}

llm::GenerationOptions generation_options(const GenerateOptions& o, const Model::Impl& m, uint64_t seed) {
  if (o.max_tokens < 0) throw Error(ErrorKind::BadArgument, "max_tokens must be at least 0");
  llm::GenerationOptions g;
  g.max_new_tokens = o.max_tokens;
  g.sampling.temperature = o.sampling.temperature;
  g.sampling.top_k = o.sampling.top_k;
  g.sampling.top_p = o.sampling.top_p;
  g.sampling.min_p = o.sampling.min_p;
  g.sampling.repetition_penalty = o.sampling.repetition_penalty;
  g.sampling.seed = seed;
  if (!o.ignore_eos) g.eos_ids = m.eos_ids;
  g.stop_strings = o.stop;
  g.skip_special = o.skip_special;
  g.decode_in_flight = o.in_flight;
  g.decode_steps_per_submit = std::min(o.steps_per_submit, std::max<int64_t>(o.in_flight, 1));
  g.sample_on_device = !o.host_sampling;
  return g;
}

namespace {

const tokenizer::Tokenizer& tokenizer_of(const Model::Impl& m) {
  if (!m.tokenizer) {
    throw Error(ErrorKind::BadArgument, m.info.path + " has no tokenizer (a synthetic model): give token ids");
  }
  return *m.tokenizer;
}

llm::ChatTemplate chat_template_of(const Model::Impl& m) {
  if (!m.chat_template) {
    throw Error(ErrorKind::InvalidModel, m.info.path +
                                             ": its tokenizer has neither <|im_start|> (Qwen3) nor "
                                             "<|start_header_id|> (Llama 3): no chat template to chat with; "
                                             "generate from text instead");
  }
  return *m.chat_template;
}

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::Eos: return "eos";
    case StopReason::StopString: return "stop string";
    case StopReason::MaxTokens: return "max tokens";
    case StopReason::Cancelled: return "cancelled";
  }
  return "?";
}

Sampling Sampling::greedy() {
  Sampling s;
  s.temperature = 0;
  return s;
}

double Stats::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0.0;
}

double Stats::decode_tokens_per_second() const {
  return decode_seconds > 0 && generated_tokens > 1 ? static_cast<double>(generated_tokens - 1) / decode_seconds
                                                    : 0.0;
}

Session Model::session(const SessionOptions& options) const {
  return translated(ErrorKind::BadArgument, [&] {
    auto s = std::make_unique<Session::Impl>();
    s->model = impl_;
    s->options = options;
    std::lock_guard lock(impl_->mutex);
    // The generator resets the program's state: the cache is this session's now (empty).
    s->generator = std::make_unique<llm::Generator>(*impl_->program, impl_->tokenizer, impl_->limits);
    impl_->cache_owner = s.get();
    return Session(std::move(s));
  });
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session::~Session() {
  if (!impl_) return;
  std::lock_guard lock(impl_->model->mutex);
  if (impl_->model->cache_owner == impl_.get()) impl_->model->cache_owner = nullptr;
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    Session old(std::move(*this));  // released like a session going out of scope
    impl_ = std::move(other.impl_);
  }
  return *this;
}

namespace {

// Runs one generation of `s` feeding `ids` after its first `keep` tokens (the rest of its
// tokens are dropped), holding the model. A failure leaves the conversation as it was.
Result run(Session::Impl& s, std::span<const int32_t> ids, size_t keep, llm::GenerationOptions g,
           const TokenCallback& on_token, uint64_t seed) {
  Model::Impl& m = *s.model;
  std::lock_guard lock(m.mutex);
  llm::Generator& gen = *s.generator;
  if (m.cache_owner != &s) {
    gen.forget_cache();
    m.cache_owner = &s;
  }
  const std::vector<int32_t> before = gen.context();
  s.cancel = false;
  std::exception_ptr thrown;  // by the caller's callback: ends the generation, then rethrown as it is
  const llm::TokenCallback callback = [&](int32_t token, std::string_view text) {
    try {
      if (on_token && !on_token(text, token)) return false;
    } catch (...) {
      thrown = std::current_exception();
      return false;
    }
    return !s.cancel.load(std::memory_order_relaxed);
  };
  try {
    gen.truncate(keep);
    llm::GenerationResult r = gen.generate(ids, g, callback);
    s.last_stats = r.stats;
    if (thrown) std::rethrow_exception(thrown);
    Result out;
    out.text = std::move(r.text);
    out.tokens = std::move(r.tokens);
    out.stop = stop_reason(r.stop);
    out.seed = seed;
    out.stats = stats_of(r.stats);
    return out;
  } catch (...) {
    // The conversation as it was; the cache is fed again from its start next time.
    gen.restore(before);
    if (thrown) std::rethrow_exception(thrown);
    rethrow_as_error(ErrorKind::BadArgument);
  }
}

}  // namespace

uint64_t seed_of(const GenerateOptions& o) { return o.sampling.seed.value_or(random_seed()); }

namespace {

// Text at the start of a session gets the tokenizer's special tokens (as tokenizer(text));
// later text continues the sequence as it is.
std::vector<int32_t> encode_prompt(const Session::Impl& s, std::string_view prompt, const GenerateOptions& o) {
  tokenizer::EncodeOptions e;
  e.add_special_tokens = o.add_special_tokens && s.generator->context().empty();
  return translated(ErrorKind::BadArgument, [&] { return tokenizer_of(*s.model).encode(prompt, e); });
}

}  // namespace

ChatPrompt chat_prompt(const Model::Impl& m, const std::vector<Message>& messages, bool thinking,
                       const GenerateOptions& options, uint64_t seed) {
  const llm::ChatTemplate tmpl = chat_template_of(m);
  const tokenizer::Tokenizer& tok = tokenizer_of(m);
  ChatPrompt p;
  p.options = translated(ErrorKind::BadArgument, [&] {
    std::vector<llm::ChatMessage> list;
    for (const Message& msg : messages) list.push_back({msg.role, msg.content, std::nullopt});
    llm::ChatOptions co;
    co.enable_thinking = thinking;
    // Encoded whole, special tokens matched and none added, as apply_chat_template(tokenize=True).
    tokenizer::EncodeOptions e;
    e.add_special_tokens = false;
    p.ids = tok.encode(llm::render_chat(tmpl, list, co), e);
    llm::GenerationOptions o = generation_options(options, m, seed);
    const std::string eot = llm::turn_text(tmpl).end_of_turn;
    const std::optional<int32_t> end = tok.token_to_id(eot);
    if (!end) throw Error(ErrorKind::InvalidModel, "the tokenizer has no " + eot + " token, which its chat template needs");
    if (std::find(o.eos_ids.begin(), o.eos_ids.end(), *end) == o.eos_ids.end()) o.eos_ids.push_back(*end);
    return o;
  });
  const int64_t room = m.limits.max_seq - static_cast<int64_t>(p.ids.size());
  if (room < 1) {
    throw Error(ErrorKind::ContextFull, "the conversation (" + std::to_string(p.ids.size()) +
                                            " tokens) fills the context of " + std::to_string(m.limits.max_seq) +
                                            " tokens: start a new conversation (reset) or load the model with a "
                                            "longer context");
  }
  p.options.max_new_tokens = std::min(p.options.max_new_tokens, room);
  return p;
}

Result Session::generate(std::string_view prompt, const GenerateOptions& options, const TokenCallback& on_token) {
  const std::vector<int32_t> ids = encode_prompt(*impl_, prompt, options);
  return generate(ids, options, on_token);
}

Result Session::generate(std::span<const int32_t> tokens, const GenerateOptions& options,
                         const TokenCallback& on_token) {
  const uint64_t seed = seed_of(options);
  llm::GenerationOptions g = translated(ErrorKind::BadArgument,
                                        [&] { return generation_options(options, *impl_->model, seed); });
  return run(*impl_, tokens, impl_->generator->context().size(), std::move(g), on_token, seed);
}

Result Session::chat(std::string_view message, const GenerateOptions& options, const TokenCallback& on_token) {
  std::vector<Message> messages = impl_->history;
  if (messages.empty() && !impl_->options.system_prompt.empty()) {
    messages.push_back({"system", impl_->options.system_prompt});
  }
  messages.push_back({"user", std::string(message)});
  return chat(messages, options, on_token);
}

Result Session::chat(const std::vector<Message>& messages, const GenerateOptions& options,
                     const TokenCallback& on_token) {
  Model::Impl& m = *impl_->model;
  const uint64_t seed = seed_of(options);
  ChatPrompt prompt = chat_prompt(m, messages, impl_->options.thinking, options, seed);
  const std::vector<int32_t>& ids = prompt.ids;
  llm::GenerationOptions& g = prompt.options;
  // The session's tokens that the conversation starts with stay in the cache; at least the last
  // token is fed, for the logits of the reply's first.
  const std::vector<int32_t>& context = impl_->generator->context();
  size_t keep = 0;
  while (keep < context.size() && keep + 1 < ids.size() && context[keep] == ids[keep]) ++keep;
  Result r = run(*impl_, std::span<const int32_t>(ids).subspan(keep), keep, std::move(g), on_token, seed);
  impl_->history = messages;
  impl_->history.push_back({"assistant", r.text});
  return r;
}

void Session::cancel() { impl_->cancel = true; }

void Session::reset() {
  std::lock_guard lock(impl_->model->mutex);
  impl_->generator->truncate(0);
  impl_->history.clear();
}

void Session::truncate(int64_t tokens) {
  if (tokens < 0) throw Error(ErrorKind::BadArgument, "truncate: tokens must be at least 0, got " + std::to_string(tokens));
  std::lock_guard lock(impl_->model->mutex);
  if (static_cast<size_t>(tokens) >= impl_->generator->context().size()) return;
  impl_->generator->truncate(static_cast<size_t>(tokens));
  impl_->history.clear();
}

std::vector<int32_t> Session::tokens() const { return impl_->generator->context(); }
int64_t Session::context_used() const { return static_cast<int64_t>(impl_->generator->context().size()); }
int64_t Session::context_size() const { return impl_->model->limits.max_seq; }
const std::vector<Message>& Session::history() const { return impl_->history; }

}  // namespace wgx
