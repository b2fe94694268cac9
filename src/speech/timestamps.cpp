#include "speech/timestamps.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wgx::speech {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void fill(std::span<float> logits, int64_t from, int64_t to) {
  from = std::clamp<int64_t>(from, 0, static_cast<int64_t>(logits.size()));
  to = std::clamp<int64_t>(to, from, static_cast<int64_t>(logits.size()));
  std::fill(logits.begin() + from, logits.begin() + to, kNegInf);
}

// log(sum(exp(x))) over [from, to), stable.
double log_sum_exp(std::span<const float> x, int64_t from, int64_t to) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = from; i < to; ++i) m = std::max(m, static_cast<double>(x[static_cast<size_t>(i)]));
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (int64_t i = from; i < to; ++i) s += std::exp(static_cast<double>(x[static_cast<size_t>(i)]) - m);
  return m + std::log(s);
}

}  // namespace

void apply_timestamp_rules(std::span<float> logits, std::span<const int32_t> generated, const TimestampTokens& t) {
  const auto vocab = static_cast<int64_t>(logits.size());
  fill(logits, t.no_timestamps, t.no_timestamps + 1);
  const size_t n = generated.size();
  const bool last_was_ts = n >= 1 && generated[n - 1] >= t.begin;
  const bool penultimate_was_ts = n < 2 || generated[n - 2] >= t.begin;
  if (last_was_ts) {
    if (penultimate_was_ts) {
      fill(logits, t.begin, vocab);  // a pair closed: text (or the end) comes next
    } else {
      fill(logits, 0, t.eos);  // a segment's end: its pair, or the end of text
    }
  }
  // Timestamps never go back; after a segment's end the next start may equal it.
  int32_t last_ts = -1;
  for (int32_t id : generated) {
    if (id >= t.begin) last_ts = id;
  }
  if (last_ts >= 0) fill(logits, t.begin, (last_was_ts && !penultimate_was_ts) ? last_ts : last_ts + 1);
  if (n == 0) {
    fill(logits, 0, t.begin);  // a window starts with a timestamp
    fill(logits, t.begin + t.max_initial_index + 1, vocab);
  }
  // Where the timestamps together are likelier than any single text token, one of them comes.
  const double ts_mass = log_sum_exp(logits, t.begin, vocab);
  double text_max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < t.begin; ++i) text_max = std::max(text_max, static_cast<double>(logits[static_cast<size_t>(i)]));
  // Both against the same normalizer (log-softmax), which cancels.
  if (ts_mass > text_max) fill(logits, 0, t.begin);
}

void suppress(std::span<float> logits, std::span<const int32_t> ids) {
  for (int32_t id : ids) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size()) logits[static_cast<size_t>(id)] = kNegInf;
  }
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

SplitWindow split_at_timestamps(std::span<const int32_t> generated, const TimestampTokens& t, double window_seconds) {
  SplitWindow out;
  double start = 0;
  bool open = false;  // a segment's start is known
  std::vector<int32_t> text;
  double last_ts = 0;
  bool ended_in_segment = false;
  for (int32_t id : generated) {
    if (id == t.eos) break;
    if (id >= t.begin) {
      const double s = (id - t.begin) * kSecondsPerTimestamp;
      last_ts = s;
      if (open && !text.empty()) {
        out.segments.push_back({start, s, std::move(text)});
        text.clear();
        open = false;
        ended_in_segment = false;
      } else {
        start = s;
        open = true;
        ended_in_segment = true;
      }
    } else if (id < t.eos) {
      if (!open) {
        start = out.segments.empty() ? 0.0 : out.segments.back().end;
        open = true;
      }
      text.push_back(id);
      ended_in_segment = true;
    }
  }
  if (!text.empty()) {
    out.segments.push_back({start, window_seconds, std::move(text)});
  }
  // Tokens cut off inside a segment: the next window starts at its last timestamp, so the
  // segment is transcribed whole there. Otherwise the window is done.
  const bool cut = ended_in_segment && !out.segments.empty() && out.segments.back().end == window_seconds &&
                   last_ts > 0;
  if (cut) out.segments.pop_back();
  out.consumed = cut ? last_ts : window_seconds;
  return out;
}

}  // namespace wgx::speech
