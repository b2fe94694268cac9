#include "speech/transcriber.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "audio/mel.h"

namespace wgx::speech {

namespace {

constexpr int64_t kRate = 16000;
constexpr int64_t kWindowSamples = 30 * kRate;

// log_softmax in f32 as torch computes it before beam search's processors: x - max - log(sum).
void log_softmax(std::span<float> x) {
  const float m = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (float v : x) sum += std::exp(static_cast<double>(v - m));
  const auto log_sum = static_cast<float>(std::log(sum));
  for (float& v : x) v = v - m - log_sum;
}

}  // namespace

Transcriber::Transcriber(gpu::Context& gpu, const models::BuiltWhisper& model, tokenizer::Tokenizer tokenizer,
                         const runtime::RuntimeOptions& options)
    : gpu_(gpu), config_(model.config), tok_(std::move(tokenizer)), decoder_graph_(model.decoder), options_(options) {
  encoder_ = std::make_unique<runtime::Program>(gpu, model.encoder, model.encoder_weights, options);
  decoder_ = std::make_unique<runtime::Program>(gpu, model.decoder, model.decoder_weights, options);
  if (const auto begin = config_.timestamp_begin(); begin && *begin < config_.vocab_size) {
    ts_ = TimestampTokens{config_.eos_token_id, *config_.no_timestamps_token, *begin,
                          config_.max_initial_timestamp_index};
  }
}

void Transcriber::encode(std::span<const float> features) {
  encoder_->set_input<float>("features", features, {1, config_.num_mel_bins, audio::kMelChunkFrames});
  encoder_->execute();
  for (int64_t i = 0; i < config_.decoder_layers; ++i) {
    for (const std::string& name : {models::whisper_cross_k(i), models::whisper_cross_v(i)}) {
      encoder_->copy_to_state(name, *decoder_, name);
      for (const auto& d : beam_decoders_) encoder_->copy_to_state(name, *d, name);
    }
  }
  // The window's encoder time is its GPU work: without this wait it would land in the decoder's
  // first step (one wait a window; the decoder's first read waits anyway).
  gpu_.wait_idle();
}

std::vector<gpu::DispatchTiming> Transcriber::profile_encoder() {
  encoder_->set_timing(gpu::Timing::Dispatches);
  encoder_->execute();
  std::vector<gpu::DispatchTiming> t = encoder_->last_timings();
  encoder_->set_timing(gpu::Timing::Off);
  return t;
}

void Transcriber::ensure_decoders(size_t n) {
  const graph::WeightStore none;  // every constant is decoder_'s
  while (beam_decoders_.size() + 1 < n) {
    auto d = std::make_unique<runtime::Program>(gpu_, decoder_graph_, none, *decoder_, options_);
    for (int64_t i = 0; i < config_.decoder_layers; ++i) {
      for (const std::string& name : {models::whisper_cross_k(i), models::whisper_cross_v(i)}) {
        decoder_->copy_state(name, *d, name);
      }
    }
    beam_decoders_.push_back(std::move(d));
  }
}

namespace {

// Feeds `tokens` at `pos` and runs the step (the logits are read by last_logits).
void start_step(runtime::Program& decoder, std::span<const int32_t> tokens, int64_t pos) {
  std::vector<int32_t> positions(tokens.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(pos + static_cast<int64_t>(i));
  const auto n = static_cast<int64_t>(tokens.size());
  decoder.set_sym("input_pos", pos);
  decoder.set_input<int32_t>("tokens", tokens, {1, n});
  decoder.set_input<int32_t>("positions", positions, {1, n});
  decoder.execute();
}

std::vector<float> last_logits(const runtime::Program& decoder, int64_t vocab_size) {
  std::vector<float> logits = decoder.read_f32("logits");
  // With all_logits the output holds every position's; the last one decides.
  const auto vocab = static_cast<size_t>(vocab_size);
  if (logits.size() > vocab) logits.erase(logits.begin(), logits.end() - static_cast<ptrdiff_t>(vocab));
  return logits;
}

}  // namespace

std::vector<float> Transcriber::step(std::span<const int32_t> tokens, int64_t pos, runtime::Program* decoder) {
  runtime::Program& d = decoder ? *decoder : *decoder_;
  start_step(d, tokens, pos);
  return last_logits(d, config_.vocab_size);
}

std::string Transcriber::detect_language() {
  if (!config_.multilingual()) return "";
  const int32_t sot = config_.decoder_start_token_id;
  const std::vector<float> logits = step(std::span<const int32_t>(&sot, 1), 0);
  std::string best;
  float best_logit = 0;
  for (const auto& [name, id] : config_.languages) {
    const float l = logits[static_cast<size_t>(id)];
    if (best.empty() || l > best_logit) {
      best = name;
      best_logit = l;
    }
  }
  return best;
}

void Transcriber::check(const TranscribeOptions& o) const {
  if (!o.language.empty() && config_.multilingual() && !config_.languages.contains(o.language)) {
    std::string known;
    for (const auto& [name, id] : config_.languages) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("language \"" + o.language + "\" is not one of the model's: " + known);
  }
  if (!o.language.empty() && !config_.multilingual() && o.language != "en") {
    throw std::invalid_argument("this model is English-only; language \"" + o.language + "\" cannot be transcribed");
  }
  if (o.task == Task::Translate && !config_.translate_token) {
    throw std::invalid_argument("this model has no translate task (English-only, or no task_to_id)");
  }
  if (o.timestamps && !ts_) throw std::invalid_argument("this model has no timestamp tokens");
  if (o.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens must be >= 0");
  if (o.beams < 1 || o.beams > kMaxBeams) {
    throw std::invalid_argument("beams must be 1 (greedy) to " + std::to_string(kMaxBeams) + ", not " +
                                std::to_string(o.beams));
  }
}

std::vector<int32_t> Transcriber::prompt(const std::string& language, const TranscribeOptions& o) const {
  std::vector<int32_t> p{config_.decoder_start_token_id};
  if (config_.multilingual()) {
    p.push_back(config_.languages.at(language.empty() ? "en" : language));
    const std::optional<int32_t> task = o.task == Task::Translate ? config_.translate_token : config_.transcribe_token;
    if (task) p.push_back(*task);
  }
  if (!o.timestamps && config_.no_timestamps_token) p.push_back(*config_.no_timestamps_token);
  return p;
}

std::vector<int32_t> Transcriber::generate(const std::vector<int32_t>& prompt, const TranscribeOptions& o) {
  const int64_t room = config_.max_target_positions - static_cast<int64_t>(prompt.size());
  if (room < 1) throw std::invalid_argument("the prompt fills the decoder's positions");
  const int64_t limit = std::min(room, o.max_new_tokens > 0 ? o.max_new_tokens : config_.max_target_positions / 2);
  if (o.beams > 1) return generate_beams(prompt, o, limit);
  std::vector<int32_t> out;
  std::vector<float> logits = step(prompt, 0);
  int64_t pos = static_cast<int64_t>(prompt.size());
  while (static_cast<int64_t>(out.size()) < limit) {
    filter(logits, out, o);
    const int32_t next = argmax(logits);
    out.push_back(next);
    if (next == config_.eos_token_id || static_cast<int64_t>(out.size()) == limit) break;
    logits = step(std::span<const int32_t>(&next, 1), pos++);
  }
  return out;
}

void Transcriber::filter(std::span<float> scores, const std::vector<int32_t>& generated,
                         const TranscribeOptions& o) const {
  if (o.timestamps) apply_timestamp_rules(scores, generated, *ts_);
  suppress(scores, config_.suppress_tokens);
  if (generated.empty()) suppress(scores, config_.begin_suppress_tokens);
}

// transformers' beam search (generate(num_beams = n), length penalty 1, early_stopping false):
// each step every running hypothesis's log-probs (log_softmax, then the rules) plus its score;
// of the best 2n continuations, <|endoftext|> (or any continuation at the length limit) among
// the first n finishes a hypothesis, scored by its sum over its length, and the best n others
// run on. The search ends when every candidate finishes, or when n have finished and the best
// running score over its length is no better than the worst finished one. A hypothesis that
// forks gets a decoder of its own: its parent's caches are copied into one whose hypothesis
// ended (the first child keeps the parent's).
std::vector<int32_t> Transcriber::generate_beams(const std::vector<int32_t>& prompt, const TranscribeOptions& o,
                                                 int64_t limit) {
  struct Hypothesis {
    std::vector<int32_t> tokens;  // after the prompt
    float score = 0;              // running: the sum of log-probs; finished: over the length
    size_t decoder = 0;           // running: its program in `decoders`; a candidate: its parent
  };
  const auto n = static_cast<size_t>(o.beams);
  ensure_decoders(n);
  std::vector<runtime::Program*> decoders{decoder_.get()};
  for (size_t i = 0; i + 1 < n; ++i) decoders.push_back(beam_decoders_[i].get());
  const auto vocab = static_cast<size_t>(config_.vocab_size);
  const auto start = static_cast<int64_t>(prompt.size());
  std::vector<Hypothesis> running{{{}, 0.f, 0}}, finished;
  std::vector<std::vector<float>> logits{step(prompt, 0, decoders[0])};
  for (int64_t len = 0;; ++len) {
    std::vector<float> scores(running.size() * vocab);
    for (size_t b = 0; b < running.size(); ++b) {
      const std::span<float> row(scores.data() + b * vocab, vocab);
      std::copy(logits[b].begin(), logits[b].end(), row.begin());
      log_softmax(row);
      filter(row, running[b].tokens, o);
      for (float& x : row) x += running[b].score;
    }
    // The best 2n, ties to the lower (beam, token) as they are laid out.
    const size_t k = std::min(2 * n, scores.size());
    std::vector<uint32_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0u);
    std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(), [&](uint32_t a, uint32_t b) {
      return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
    });
    const bool at_limit = len + 1 >= limit;
    std::vector<Hypothesis> next, done;
    bool all_done = true;
    for (size_t c = 0; c < k; ++c) {
      const size_t parent = order[c] / vocab;
      const auto token = static_cast<int32_t>(order[c] % vocab);
      const float score = scores[order[c]];
      if (at_limit || token == config_.eos_token_id) {
        if (c < n) {
          std::vector<int32_t> t = running[parent].tokens;
          t.push_back(token);
          done.push_back({std::move(t), score / static_cast<float>(len + 1), 0});
        }
        continue;
      }
      all_done = false;
      if (next.size() < n) {
        std::vector<int32_t> t = running[parent].tokens;
        t.push_back(token);
        next.push_back({std::move(t), score, parent});
      }
    }
    // The best n finished so far (earlier ones first among equals).
    finished.insert(finished.end(), done.begin(), done.end());
    std::stable_sort(finished.begin(), finished.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (finished.size() > n) finished.resize(n);
    if (all_done) break;
    if (finished.size() == n && !(next[0].score / static_cast<float>(len + 1) > finished.back().score)) break;

    // Decoders: a parent's first child keeps its parent's; the others take those left free.
    std::vector<bool> kept(running.size(), false), used(n, false);
    std::vector<size_t> forks;
    for (size_t j = 0; j < next.size(); ++j) {
      const size_t parent = next[j].decoder;
      if (!kept[parent]) {
        kept[parent] = true;
        next[j].decoder = running[parent].decoder;
        used[next[j].decoder] = true;
      } else {
        forks.push_back(j);
      }
    }
    size_t free = 0;
    for (size_t j : forks) {
      while (used[free]) ++free;
      used[free] = true;
      const runtime::Program& from = *decoders[running[next[j].decoder].decoder];
      for (int64_t i = 0; i < config_.decoder_layers; ++i) {
        from.copy_state(models::whisper_self_k(i), *decoders[free], models::whisper_self_k(i));
        from.copy_state(models::whisper_self_v(i), *decoders[free], models::whisper_self_v(i));
      }
      next[j].decoder = free;
    }
    running = std::move(next);
    for (const Hypothesis& h : running) start_step(*decoders[h.decoder], std::span(&h.tokens.back(), 1), start + len);
    logits.clear();
    for (const Hypothesis& h : running) logits.push_back(last_logits(*decoders[h.decoder], config_.vocab_size));
  }
  return finished.front().tokens;
}

std::string Transcriber::text_of(std::span<const int32_t> tokens) const {
  std::vector<int32_t> text;
  for (int32_t id : tokens) {
    if (id < config_.eos_token_id) text.push_back(id);
  }
  return tok_.decode(text, true);
}

Transcript Transcriber::transcribe(std::span<const float> samples, const TranscribeOptions& options,
                                   const TranscribeProgress& progress) {
  auto window_at = [samples](size_t seek, size_t count) {
    const size_t from = std::min(seek, samples.size());
    return samples.subspan(from, std::min(count, samples.size() - from));
  };
  return transcribe_windows(window_at, static_cast<double>(samples.size()) / kRate, options, progress);
}

Transcript Transcriber::transcribe(audio::AudioReader& reader, const TranscribeOptions& options,
                                   const TranscribeProgress& progress) {
  // buffer holds the samples from buffer_start on: at most a window, and what the last read added.
  std::vector<float> buffer;
  size_t buffer_start = 0;
  auto window_at = [&](size_t seek, size_t count) {
    const size_t drop = std::min(seek - buffer_start, buffer.size());
    buffer.erase(buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(drop));
    buffer_start += drop;
    while (buffer_start + buffer.size() < seek + count && !reader.done()) {
      const size_t want = seek + count - buffer_start - buffer.size();
      const size_t at = buffer.size();
      buffer.resize(at + want);
      buffer.resize(at + reader.read(std::span<float>(buffer).subspan(at)));
      if (buffer_start < seek) {  // a seek past the buffer (not made by transcribe_windows): skip
        const size_t skip = std::min(seek - buffer_start, buffer.size());
        buffer.erase(buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(skip));
        buffer_start += skip;
      }
    }
    const std::span<const float> held(buffer);
    if (buffer_start < seek) return held.subspan(0, 0);
    return held.subspan(0, std::min(count, held.size()));
  };
  return transcribe_windows(window_at, reader.header_seconds(), options, progress);
}

Transcript Transcriber::transcribe_windows(const WindowSource& window_at, double total_seconds,
                                           const TranscribeOptions& options, const TranscribeProgress& progress) {
  check(options);
  Transcript r;
  r.language = options.language;
  const auto n_mels = static_cast<int>(config_.num_mel_bins);
  size_t seek = 0;
  while (true) {
    const std::span<const float> window = window_at(seek, kWindowSamples);
    if (window.empty()) {
      if (seek == 0) throw std::invalid_argument("the audio has no samples");
      break;
    }
    const size_t len = window.size();
    const double offset = static_cast<double>(seek) / kRate;
    const double window_seconds = static_cast<double>(len) / kRate;
    const auto t0 = std::chrono::steady_clock::now();
    const audio::MelSpec mel = audio::log_mel(window, n_mels);
    encode(mel.values);
    const auto t1 = std::chrono::steady_clock::now();
    if (r.language.empty() && config_.multilingual()) r.language = detect_language();
    const std::vector<int32_t> tokens = generate(prompt(r.language, options), options);
    r.encode_seconds += std::chrono::duration<double>(t1 - t0).count();
    r.decode_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    r.tokens.insert(r.tokens.end(), tokens.begin(), tokens.end());
    ++r.windows;
    double consumed = window_seconds;
    if (options.timestamps) {
      const SplitWindow split = split_at_timestamps(tokens, *ts_, window_seconds);
      for (const TokenSegment& s : split.segments) {
        // A timestamp past the audio's end (the features are padded to 30 s) ends at it.
        const double start = std::min(s.start, window_seconds), end = std::clamp(s.end, start, window_seconds);
        r.segments.push_back({offset + start, offset + end, tok_.decode(s.tokens, true)});
      }
      // A window must move on; a first timestamp of 0 would start it again where it was.
      if (split.consumed > 0) consumed = std::min(split.consumed, window_seconds);
    } else {
      r.segments.push_back({offset, offset + window_seconds, text_of(tokens)});
    }
    r.audio_seconds = std::max(r.audio_seconds, offset + window_seconds);
    seek += static_cast<size_t>(std::max<int64_t>(1, static_cast<int64_t>(consumed * kRate)));
    const double done = std::min(r.audio_seconds, static_cast<double>(seek) / kRate);
    if (progress) progress(done, std::max(total_seconds, r.audio_seconds));
  }
  for (const Segment& s : r.segments) r.text += s.text;
  return r;
}

}  // namespace wgx::speech
