// Raw PCM from a byte stream (stdin, a socket): the format is fixed, so there is no header to
// read. Signed 16-bit little-endian samples, one channel, 16 kHz (what `ffmpeg -f s16le -ac 1
// -ar 16000 -` writes); each sample becomes sample / 32768 in [-1, 1), as libsndfile scales them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace wgx::audio {

// A whole buffer; an odd byte count is an AudioError (a sample cut in half).
std::vector<float> pcm16_to_float(std::span<const uint8_t> bytes);

// Bytes arriving in pieces of any size: push returns the samples completed so far, and keeps a
// sample's first byte when a piece ends between its two bytes.
class PcmStream {
 public:
  std::vector<float> push(std::span<const uint8_t> bytes);
  // True when the bytes pushed so far end in the middle of a sample.
  bool has_partial_sample() const { return pending_.has_value(); }

 private:
  std::optional<uint8_t> pending_;
};

}  // namespace wgx::audio
