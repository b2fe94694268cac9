#include "speech/transcriber.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "audio/mel.h"

namespace wgx::speech {

namespace {

constexpr int64_t kRate = 16000;
constexpr int64_t kWindowSamples = 30 * kRate;

}  // namespace

Transcriber::Transcriber(gpu::Context& gpu, const models::BuiltWhisper& model, tokenizer::Tokenizer tokenizer,
                         const runtime::RuntimeOptions& options)
    : gpu_(gpu), config_(model.config), tok_(std::move(tokenizer)) {
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

std::vector<float> Transcriber::step(std::span<const int32_t> tokens, int64_t pos) {
  std::vector<int32_t> positions(tokens.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(pos + static_cast<int64_t>(i));
  const auto n = static_cast<int64_t>(tokens.size());
  decoder_->set_sym("input_pos", pos);
  decoder_->set_input<int32_t>("tokens", tokens, {1, n});
  decoder_->set_input<int32_t>("positions", positions, {1, n});
  decoder_->execute();
  std::vector<float> logits = decoder_->read_f32("logits");
  // With all_logits the output holds every position's; the last one decides.
  const auto vocab = static_cast<size_t>(config_.vocab_size);
  if (logits.size() > vocab) logits.erase(logits.begin(), logits.end() - static_cast<ptrdiff_t>(vocab));
  return logits;
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
  std::vector<int32_t> out;
  std::vector<float> logits = step(prompt, 0);
  int64_t pos = static_cast<int64_t>(prompt.size());
  while (static_cast<int64_t>(out.size()) < limit) {
    if (o.timestamps) apply_timestamp_rules(logits, out, *ts_);
    suppress(logits, config_.suppress_tokens);
    if (out.empty()) suppress(logits, config_.begin_suppress_tokens);
    const int32_t next = argmax(logits);
    out.push_back(next);
    if (next == config_.eos_token_id || static_cast<int64_t>(out.size()) == limit) break;
    logits = step(std::span<const int32_t>(&next, 1), pos++);
  }
  return out;
}

Transcript Transcriber::transcribe(std::span<const float> samples, const TranscribeOptions& options,
                                   const TranscribeProgress& progress) {
  check(options);
  if (samples.empty()) throw std::invalid_argument("the audio has no samples");
  Transcript r;
  r.language = options.language;
  const double total = static_cast<double>(samples.size()) / kRate;
  const auto n_mels = static_cast<int>(config_.num_mel_bins);
  size_t seek = 0;
  while (seek < samples.size()) {
    const size_t len = std::min<size_t>(kWindowSamples, samples.size() - seek);
    const double offset = static_cast<double>(seek) / kRate;
    const double window_seconds = static_cast<double>(len) / kRate;
    const auto t0 = std::chrono::steady_clock::now();
    const audio::MelSpec mel = audio::log_mel(samples.subspan(seek, len), n_mels);
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
      std::vector<int32_t> text;
      for (int32_t id : tokens) {
        if (id < config_.eos_token_id) text.push_back(id);
      }
      r.segments.push_back({offset, offset + window_seconds, tok_.decode(text, true)});
    }
    seek += static_cast<size_t>(std::max<int64_t>(1, static_cast<int64_t>(consumed * kRate)));
    if (progress) progress(std::min(total, static_cast<double>(seek) / kRate), total);
  }
  for (const Segment& s : r.segments) r.text += s.text;
  return r;
}

}  // namespace wgx::speech
