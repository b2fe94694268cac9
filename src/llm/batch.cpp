#include "llm/batch.h"

#include <algorithm>
#include <stdexcept>

#include "ops/quant/product_parts.h"

namespace wgx::llm {

namespace {

// Every step runs the products' tiled kernels with one plan, whatever the step holds: at least
// kMinRows rows (with fewer the products take their gemv kernels; dummy rows, at a slot past the
// caches, write nothing) and at most kMaxRows, one tile of rows (q4_gemm splits K by the number
// of row tiles). A row's arithmetic then does not depend on the other rows, so a greedy sequence
// gets the same tokens alone as beside others.
constexpr int64_t kMinRows = static_cast<int64_t>(ops::quant::products::kGemvRows) + 1;
constexpr int64_t kMaxRows = static_cast<int64_t>(ops::quant::products::kTile);

const graph::NamedValue* find(const std::vector<graph::NamedValue>& list, const char* name) {
  for (const graph::NamedValue& v : list) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Whether the rows graph picks the sequence's tokens (sample_rows_penalized: greedy, or drawn
// from a top_k of 1 to 128, after a repetition penalty), else the host does from its logits.
bool device_pick(const GenerationOptions& o) {
  ModelLimits rows;
  rows.next_token = true;
  rows.device_sampling = true;
  rows.device_penalty = true;
  return device_can_pick(o.sampling, rows) && (o.sampling.greedy() || o.sample_on_device);
}

// A pick's slot in "pick_slots" where its sequence has no seen set on the device.
constexpr int32_t kNoSeenSet = -1;

}  // namespace

BatchLimits batch_limits(const graph::Graph& graph) {
  auto missing = [](const std::string& what) {
    throw std::invalid_argument("the rows graph has no " + what + " (models/decoder.h: build_rows_decoder)");
  };
  const graph::NamedValue* tokens = find(graph.inputs, "tokens");
  const graph::NamedValue* logits = find(graph.outputs, "logits");
  if (!tokens) missing("input \"tokens\"");
  if (!find(graph.inputs, "rows")) missing("input \"rows\"");
  if (!find(graph.inputs, "logit_rows")) missing("input \"logit_rows\"");
  if (!find(graph.inputs, "sampling")) missing("input \"sampling\"");
  if (!find(graph.inputs, "counters")) missing("input \"counters\"");
  if (!find(graph.inputs, "pick_slots")) missing("input \"pick_slots\"");
  if (std::none_of(graph.buffers.begin(), graph.buffers.end(),
                   [](const graph::MutableBuffer& b) { return b.name == "seen_tokens"; })) {
    missing("state \"seen_tokens\"");
  }
  if (!logits) missing("output \"logits\"");
  if (!find(graph.outputs, "next_tokens")) missing("output \"next_tokens\"");
  BatchLimits l;
  l.max_rows = graph.type(tokens->value).shape.back().max_value(graph.syms);
  l.picks = graph.type(find(graph.inputs, "logit_rows")->value).shape.back().max_value(graph.syms);
  l.vocab = graph.type(logits->value).shape.back().value();
  for (const graph::MutableBuffer& b : graph.buffers) {
    const graph::Shape& s = graph.type(b.value).shape;
    if (s.size() == 4) {
      l.slots = s[0].value();
      l.max_seq = s[2].value();
      break;
    }
  }
  if (l.slots < 1) missing("KV cache [slots, kv_heads, max_seq, head_dim]");
  return l;
}

Batch::Batch(runtime::Program& program, std::optional<tokenizer::Tokenizer> tokenizer, BatchLimits limits)
    : program_(program), tokenizer_(std::move(tokenizer)), limits_(limits) {
  program_.reset_state();
  for (int64_t s = 0; s < limits_.slots; ++s) free_.push_back(static_cast<int32_t>(s));
  kept_.resize(static_cast<size_t>(limits_.slots));
}

uint64_t Batch::add(std::vector<int32_t> prompt, const GenerationOptions& options, TokenCallback on_token) {
  if (free_.empty()) throw std::invalid_argument("no free slot: all " + std::to_string(limits_.slots) + " run");
  if (prompt.empty()) throw std::invalid_argument("the prompt is empty");
  if (options.max_new_tokens < 1) throw std::invalid_argument("a sequence of a batch generates at least one token");
  for (int32_t id : prompt) {
    if (id < 0 || id >= limits_.vocab) {
      throw std::invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                                  std::to_string(limits_.vocab) + ")");
    }
  }
  const int64_t need = static_cast<int64_t>(prompt.size()) + options.max_new_tokens;
  if (need > limits_.max_seq) {
    throw ContextFullError("a sequence holds " + std::to_string(limits_.max_seq) + " tokens, but the prompt has " +
                           std::to_string(prompt.size()) + " and " + std::to_string(options.max_new_tokens) +
                           " new tokens were asked for");
  }
  // The free slot whose rows hold the longest prefix of the prompt (leaving a token to feed: its
  // row gives the logits), among those where the prefix is more than half of what the slot keeps
  // (a prompt that shares a chat template's first tokens with a long conversation does not take
  // its slot); else the least recently freed, with whatever prefix it holds.
  size_t best = 0;
  int64_t best_score = 0;
  std::vector<int64_t> shared(free_.size());
  for (size_t i = 0; i < free_.size(); ++i) {
    const std::vector<int32_t>& kept = kept_[static_cast<size_t>(free_[i])];
    const auto limit = static_cast<int64_t>(std::min(kept.size(), prompt.size() - 1));
    int64_t& n = shared[i];
    while (n < limit && kept[static_cast<size_t>(n)] == prompt[static_cast<size_t>(n)]) ++n;
    const int64_t score = 2 * n - static_cast<int64_t>(kept.size());  // rows kept less rows lost
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  const int64_t reuse = shared[best];
  auto s = std::make_unique<Sequence>();
  s->id = next_id_++;
  s->slot = free_[best];
  s->fed = reuse;
  s->options = options;
  s->on_token = std::move(on_token);
  s->context = std::move(prompt);
  s->device_pick = device_pick(options);
  if (!s->device_pick) s->sampler.emplace(options.sampling);
  s->result.stats.drawn_on_device = s->device_pick && !options.sampling.greedy();
  if (penalized_on_device(*s)) {
    // The slot's seen set: the prompt's tokens (the device adds each pick).
    const auto words = static_cast<uint64_t>(ops::sampling::seen_words(limits_.vocab));
    program_.write_state_at<int32_t>("seen_tokens", static_cast<uint64_t>(s->slot) * words,
                                     seen_words(s->context, limits_.vocab));
  }
  s->emitter = std::make_unique<Emitter>(tokenizer_, s->options, s->on_token, s->result);
  s->start = Clock::now();
  s->result.stats.prompt_tokens = static_cast<int64_t>(s->context.size()) - reuse;
  s->result.stats.cached_tokens = reuse;
  free_.erase(free_.begin() + static_cast<ptrdiff_t>(best));
  kept_[static_cast<size_t>(s->slot)].clear();  // rows past the prefix change from the next step
  const uint64_t id = s->id;
  sequences_.push_back(std::move(s));
  return id;
}

void Batch::cancel(uint64_t id) {
  for (auto& s : sequences_) {
    if (s->id == id) s->cancelled = true;
  }
}

Batch::Finished Batch::finish(size_t index) {
  Sequence& s = *sequences_[index];
  GenerationStats& st = s.result.stats;
  st.generated_tokens = static_cast<int64_t>(s.result.tokens.size());
  if (!s.result.tokens.empty()) st.decode_seconds = seconds(Clock::now() - s.first_token);
  Finished f{s.id, std::move(s.result)};
  // Its rows: the context's tokens up to `fed` (a step ahead fed the last taken token; a token
  // picked after it, dropped or cancelled, is not in the context).
  std::vector<int32_t>& kept = kept_[static_cast<size_t>(s.slot)];
  kept.assign(s.context.begin(), s.context.begin() + std::min(s.fed, static_cast<int64_t>(s.context.size())));
  free_.push_back(s.slot);
  sequences_.erase(sequences_.begin() + static_cast<ptrdiff_t>(index));
  return f;
}

std::vector<Batch::Finished> Batch::step() {
  try {
    return step_unguarded();
  } catch (...) {
    // A step that failed may have left rows half written: no slot's rows are trusted again.
    for (std::vector<int32_t>& kept : kept_) kept.clear();
    throw;
  }
}

std::vector<Batch::Finished> Batch::step_unguarded() {
  std::vector<Finished> done;
  if (in_flight_) {
    // The step submitted last: the next goes to the GPU before its tokens are taken, where it
    // can (chained), so that the host's work between steps overlaps the GPU's.
    std::optional<Step> next;
    if (chainable(*in_flight_)) next = submit(chained(*in_flight_), true);
    Step s = std::move(*in_flight_);
    in_flight_ = std::move(next);
    take(s, done);
  } else {
    drop_cancelled(done);
    if (sequences_.empty()) return done;
    Step s = submit(plan(), false);
    if (chainable(s)) in_flight_ = submit(chained(s), true);
    take(s, done);
  }
  drop_cancelled(done);
  // A chained step whose sequences all ended gives nothing: it is dropped (the GPU runs it; the
  // next step is queued after it).
  if (in_flight_ && std::none_of(in_flight_->picked.begin(), in_flight_->picked.end(),
                                 [&](uint64_t id) { return find_sequence(id) != nullptr; })) {
    in_flight_.reset();
  }
  return done;
}

void Batch::drop_cancelled(std::vector<Finished>& done) {
  for (size_t i = 0; i < sequences_.size();) {
    if (sequences_[i]->cancelled) {
      sequences_[i]->result.stop = StopReason::Cancelled;
      done.push_back(finish(i));
    } else {
      ++i;
    }
  }
}

Batch::Sequence* Batch::find_sequence(uint64_t id) const {
  for (const auto& s : sequences_) {
    if (s->id == id) return s.get();
  }
  return nullptr;
}

Batch::Plan Batch::plan() {
  // Decoding rows first (a token each), then prompts in arrival order while rows are left (or
  // the other way round: set_prompts_first).
  struct Part {
    Sequence* seq;
    int64_t from, count;
  };
  std::vector<Part> parts;
  Plan p;
  int64_t rows_left = std::min(limits_.max_rows, kMaxRows);
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& s : sequences_) {
      const int64_t pending = static_cast<int64_t>(s->context.size()) - s->fed;
      const bool decoding = !s->result.tokens.empty();
      if ((pass == 0) != (decoding != prompts_first_) || pending <= 0 || rows_left <= 0) continue;
      const int64_t n = std::min(pending, rows_left);
      parts.push_back({s.get(), s->fed, n});
      rows_left -= n;
      (decoding ? p.decode_rows : p.prompt_rows) += n;
    }
  }
  for (const Part& part : parts) {
    for (int64_t i = 0; i < part.count; ++i) {
      p.tokens.push_back(part.seq->context[static_cast<size_t>(part.from + i)]);
      p.rows.push_back(part.seq->slot);
      p.rows.push_back(static_cast<int32_t>(part.from + i));
    }
    part.seq->fed += part.count;
    if (part.from + part.count == static_cast<int64_t>(part.seq->context.size())) {
      add_pick(p, *part.seq, static_cast<int32_t>(p.tokens.size() - 1), part.from + part.count - 1);
    }
  }
  pad(p, true);
  return p;
}

Batch::Plan Batch::chained(const Step& last) {
  Plan p;
  p.decode_rows = static_cast<int64_t>(last.picked.size());
  for (uint64_t id : last.picked) {
    Sequence& s = *find_sequence(id);
    p.rows.push_back(s.slot);
    p.rows.push_back(static_cast<int32_t>(s.fed));
    add_pick(p, s, static_cast<int32_t>(p.picked.size()), s.fed);
    ++s.fed;  // the token `last` picks, which the device feeds
  }
  pad(p, false);
  return p;
}

void Batch::pad(Plan& p, bool with_tokens) const {
  const int64_t min_rows = std::min(kMinRows, limits_.max_rows);
  while (static_cast<int64_t>(p.rows.size() / 2) < min_rows) {
    if (with_tokens) p.tokens.push_back(0);
    p.rows.push_back(static_cast<int32_t>(limits_.slots));  // no slot: the row writes nothing
    p.rows.push_back(0);
  }
  // Logits for the picked rows, the first repeated up to min_rows (a step of prompt chunks only
  // picks none: its logits go unused); the padding's tokens go unused, so they are greedy picks
  // (all-zero words), the cheapest.
  const int64_t min_picks = std::min(kMinRows, limits_.picks);
  const int32_t first = p.picks.empty() ? 0 : p.picks.front();
  while (static_cast<int64_t>(p.picks.size()) < min_picks) {
    p.picks.push_back(first);
    p.words.resize(p.words.size() + 8, 0);
    p.counters.push_back(0);
    p.slots.push_back(kNoSeenSet);
  }
}

void Batch::add_pick(Plan& p, const Sequence& s, int32_t row, int64_t position) {
  p.picks.push_back(row);
  p.picked.push_back(s.id);
  // The host picks from the logits where the device does not: a greedy pick is cheapest.
  const ops::sampling::Words w = s.device_pick ? device_words(s.options.sampling) : ops::sampling::greedy_words();
  p.words.insert(p.words.end(), w.begin(), w.end());
  // The draw's counter: the position of the row whose logits it draws from (as the generator's).
  p.counters.push_back(static_cast<int32_t>(position));
  p.slots.push_back(penalized_on_device(s) ? s.slot : kNoSeenSet);
}

bool Batch::penalized_on_device(const Sequence& s) {
  return s.device_pick && s.options.sampling.repetition_penalty != 1.0f;
}

bool Batch::chainable(const Step& s) const {
  // `s` fed its tokens on (decoding only, device picks), every running sequence decoded a row of
  // it (nothing joined or left since), and each may take a token more after that one: the next
  // step's rows are then these sequences' rows again, and `s`'s next_tokens are its tokens.
  if (!s.fed_on || s.picked.size() != sequences_.size()) return false;
  for (uint64_t id : s.picked) {
    const Sequence* q = find_sequence(id);
    if (!q || q->cancelled ||
        q->options.max_new_tokens - static_cast<int64_t>(q->result.tokens.size()) < 2) {
      return false;
    }
  }
  return true;
}

Batch::Step Batch::submit(Plan p, bool chained) {
  Step s;
  const auto n = static_cast<int64_t>(p.rows.size() / 2);
  if (!chained) program_.set_input<int32_t>("tokens", p.tokens, {1, n});
  program_.set_input<int32_t>("rows", p.rows, {n, 2});
  const auto picks = static_cast<int64_t>(p.picks.size());
  program_.set_input<int32_t>("logit_rows", p.picks, {picks});
  program_.set_input<int32_t>("sampling", p.words, {picks, 8});
  program_.set_input<int32_t>("counters", p.counters, {picks});
  program_.set_input<int32_t>("pick_slots", p.slots, {picks});
  bool any_host = false;
  for (uint64_t id : p.picked) any_host = any_host || !find_sequence(id)->device_pick;
  // Where the next step could take this one's tokens as they are, the device copies them into
  // "tokens" at its end (chainable() decides whether the next step does).
  s.fed_on = p.prompt_rows == 0 && !any_host && p.picks.size() == static_cast<size_t>(n);
  if (s.fed_on && !chained) program_.feed_from("tokens", "next_tokens");
  s.next = program_.read_async("next_tokens");
  if (any_host) s.logits = program_.read_async("logits");
  program_.execute();
  if (chained) ++chained_steps_;
  s.picked = std::move(p.picked);
  s.decode_rows = p.decode_rows;
  s.prompt_rows = p.prompt_rows;
  return s;
}

void Batch::take(Step& step, std::vector<Finished>& done) {
  last_decode_rows_ = step.decode_rows;
  last_prompt_rows_ = step.prompt_rows;
  if (step.picked.empty()) return;
  const std::vector<int32_t> ids = step.next.i32();
  std::vector<float> all;
  if (step.logits) all = step.logits->f32();
  const auto vocab = static_cast<size_t>(limits_.vocab);
  for (size_t k = 0; k < step.picked.size(); ++k) {
    const auto it = std::find_if(sequences_.begin(), sequences_.end(),
                                 [&](const auto& x) { return x->id == step.picked[k]; });
    if (it == sequences_.end() || (*it)->cancelled) continue;  // ended since the step was submitted
    Sequence& s = **it;
    int32_t token = ids.at(k);
    if (!s.device_pick) {
      const std::span<const float> row(all.data() + k * vocab, vocab);
      token = s.sampler->sample(row, s.context);
    }
    if (token < 0 || token >= limits_.vocab) {
      throw std::runtime_error("the model's next token is " + std::to_string(token) +
                               ", outside the vocabulary: were all logits NaN?");
    }
    if (s.result.tokens.empty()) {
      s.first_token = Clock::now();
      s.result.stats.first_token_seconds = seconds(s.first_token - s.start);
      s.result.stats.prefill_seconds = s.result.stats.first_token_seconds;
    }
    s.context.push_back(token);
    if (!s.emitter->accept(token)) done.push_back(finish(static_cast<size_t>(it - sequences_.begin())));
  }
}

}  // namespace wgx::llm
