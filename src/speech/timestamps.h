// The rules Whisper's decoding applies to one step's logits, on the host, in place: a token that
// may not come next gets -infinity. They follow transformers' WhisperTimeStampLogitsProcessor,
// SuppressTokensLogitsProcessor and SuppressTokensAtBeginLogitsProcessor, so that greedy
// transcripts match transformers' generate().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wgx::speech {

struct TimestampTokens {
  int32_t eos = 0;              // <|endoftext|>: the ids below it are text
  int32_t no_timestamps = 0;    // <|notimestamps|>
  int32_t begin = 0;            // <|0.00|>; the timestamps are [begin, vocab)
  int64_t max_initial_index = 50;  // the window's first timestamp is at most begin + this
};

// Timestamps come in pairs (a segment's end, then the next one's start) or singly, never go
// back, the first token is a timestamp of at most max_initial_index, and where the timestamps
// together are likelier than any one text token, a timestamp comes. `generated`: the tokens after
// the window's prompt so far.
void apply_timestamp_rules(std::span<float> logits, std::span<const int32_t> generated, const TimestampTokens& t);

// -infinity for each id in `ids` that is inside the logits.
void suppress(std::span<float> logits, std::span<const int32_t> ids);

// The first largest logit.
int32_t argmax(std::span<const float> logits);

// A window's generated tokens split at timestamps: each segment's text tokens between a start
// and an end timestamp (times in seconds from the window's start). A segment whose end timestamp
// never came ends at `window_seconds`.
struct TokenSegment {
  double start = 0, end = 0;
  std::vector<int32_t> tokens;
};
struct SplitWindow {
  std::vector<TokenSegment> segments;
  // Where the next window starts, in seconds from this one's start: the last timestamp where the
  // tokens end inside a segment, else the window's end.
  double consumed = 0;
};
SplitWindow split_at_timestamps(std::span<const int32_t> generated, const TimestampTokens& t, double window_seconds);

constexpr double kSecondsPerTimestamp = 0.02;

}  // namespace wgx::speech
