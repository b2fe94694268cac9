#include "speech/stream.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "audio/mel.h"

namespace wgx::speech {

namespace {

// " If I don't" -> {" If", " I", " don't"}: a word begins at each space.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  for (char c : text) {
    if (out.empty() || (c == ' ' && !out.back().empty() && out.back().back() != ' ')) out.emplace_back();
    out.back() += c;
  }
  return out;
}

size_t common_prefix(std::span<const std::string> a, std::span<const std::string> b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

Stream::Stream(Transcriber& transcriber, TranscribeOptions options, StreamOptions stream)
    : t_(transcriber), options_(std::move(options)), stream_(stream) {
  if (options_.timestamps) throw std::invalid_argument("a stream gives text without timestamps");
  t_.check(options_);
  if (!(stream_.step > 0 && stream_.step <= stream_.max_buffer)) {
    throw std::invalid_argument("the stream's step must be > 0 s and at most its buffer");
  }
  if (!(stream_.max_buffer >= 2 && stream_.max_buffer <= 29)) {
    throw std::invalid_argument("the stream's buffer must hold 2 to 29 s");
  }
  if (!(stream_.cut_search >= 1 && stream_.cut_search < stream_.max_buffer)) {
    throw std::invalid_argument("the stream's cut search must be >= 1 s and shorter than its buffer");
  }
  language_ = options_.language;
}

std::vector<std::string> Stream::hypothesis(size_t samples) {
  const audio::MelSpec mel =
      audio::log_mel(std::span<const float>(buffer_).first(samples), static_cast<int>(t_.config().num_mel_bins));
  t_.encode(mel.values);
  if (language_.empty() && t_.config().multilingual()) language_ = t_.detect_language();
  const std::vector<int32_t> tokens = t_.generate(t_.prompt(language_, options_), options_);
  ++hypotheses_;
  return words_of(t_.text_of(tokens));
}

std::string Stream::commit(std::span<const std::string> words) {
  std::string out;
  for (const std::string& w : words) {
    committed_.push_back(w);
    out += w;
  }
  // The stream's text starts as a transcript's does: with the first word's space.
  text_ += out;
  return out;
}

std::string Stream::close_buffer(const std::vector<std::string>& words, size_t cut) {
  // Normally `words` begins with the committed words. Where it changed one, the committed word
  // stays and stands for it.
  const size_t from = std::min(words.size(), committed_.size());
  const std::string out = commit(std::span<const std::string>(words).subspan(from));
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<ptrdiff_t>(cut));
  committed_.clear();
  previous_.clear();
  return out;
}

size_t Stream::quietest_cut() const {
  const size_t frame = kRate / 10;  // 0.1 s, in steps of 0.05 s
  const size_t end = buffer_.size() - std::min(buffer_.size(), static_cast<size_t>(kRate / 2));
  const size_t begin = buffer_.size() - std::min(buffer_.size(), static_cast<size_t>(stream_.cut_search * kRate));
  size_t best = end;
  double best_energy = INFINITY;
  for (size_t at = begin; at + frame <= end; at += frame / 2) {
    double e = 0;
    for (size_t i = at; i < at + frame; ++i) e += static_cast<double>(buffer_[i]) * buffer_[i];
    if (e < best_energy) {
      best_energy = e;
      best = at + frame / 2;
    }
  }
  return best;
}

std::string Stream::advance() {
  std::string out;
  since_hypothesis_ = 0;
  if (buffer_.size() > static_cast<size_t>(stream_.max_buffer * kRate)) {
    const size_t cut = quietest_cut();
    out += close_buffer(hypothesis(cut), cut);
  }
  const std::vector<std::string> words = hypothesis(buffer_.size());
  // LocalAgreement-2: what this hypothesis and the last agree on, past what is committed, if
  // both still agree with the committed words.
  const size_t agreed = common_prefix(words, previous_);
  if (common_prefix(words, committed_) == committed_.size() && agreed > committed_.size()) {
    out += commit(std::span<const std::string>(words).subspan(committed_.size(), agreed - committed_.size()));
  }
  previous_ = words;
  return out;
}

std::string Stream::push(std::span<const float> samples) {
  if (finished_) throw std::invalid_argument("the stream has finished");
  for (float x : samples) {
    if (!std::isfinite(x)) throw std::invalid_argument("the audio has a sample that is not a finite number");
  }
  std::string out;
  const auto step = static_cast<size_t>(stream_.step * kRate);
  while (!samples.empty()) {
    const size_t n = std::min(samples.size(), step - since_hypothesis_);
    buffer_.insert(buffer_.end(), samples.begin(), samples.begin() + static_cast<ptrdiff_t>(n));
    samples = samples.subspan(n);
    since_hypothesis_ += n;
    heard_ += n;
    if (since_hypothesis_ == step) out += advance();
  }
  return out;
}

std::string Stream::finish() {
  if (finished_) return "";
  finished_ = true;
  std::string out;
  while (buffer_.size() > static_cast<size_t>(stream_.max_buffer * kRate)) {
    const size_t cut = quietest_cut();
    out += close_buffer(hypothesis(cut), cut);
  }
  if (!buffer_.empty()) out += close_buffer(hypothesis(buffer_.size()), buffer_.size());
  return out;
}

}  // namespace wgx::speech
