// Audio files to what speech models take: mono float PCM at 16 kHz.
//
// libsndfile decodes (WAV, FLAC, Ogg Vorbis/Opus, and whatever else the linked libsndfile
// reads), channels are averaged to mono, and libsoxr resamples to 16 kHz (SOXR_HQ) when the
// file's rate differs. AudioReader does this incrementally, so hours of audio never need to be in
// memory at once: Whisper reads 30 s windows one after another. load_audio and decode_audio are
// AudioReader read to the end, so the two paths give the same samples.
//
// Every failure is an AudioError naming the input: a missing file, bytes that are not audio (or
// a format the linked libsndfile does not read, or a header cut short; libsndfile's own message
// is quoted), no samples, a sample rate outside [kMinSourceRate, kMaxSourceRate], too many
// channels, NaN or infinite samples (float files). A data chunk cut short gives the samples that
// are there: libsndfile trims the length its header claims to what the file holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audio/error.h"

namespace wgx::audio {

// The rate every model input has.
inline constexpr int kSampleRate = 16000;
// Rates outside these are taken for a broken header (telephony's 8 kHz and studio 768 kHz fit).
inline constexpr int kMinSourceRate = 1000;
inline constexpr int kMaxSourceRate = 768000;
inline constexpr int kMaxChannels = 256;

// Decoded audio: mono float samples at kSampleRate, and what the source was.
struct Audio {
  std::vector<float> samples;
  int source_rate = 0;
  int source_channels = 0;
  int64_t source_frames = 0;  // frames decoded from the source, at its own rate
};

// The whole file or byte buffer, decoded, mixed to mono and resampled.
Audio load_audio(const std::filesystem::path& path);
// `name` only labels error messages.
Audio decode_audio(std::span<const uint8_t> bytes, std::string_view name = "<memory>");

// Reads a file (or a byte buffer the caller keeps alive) in pieces: each read(n) returns up to n
// mono samples at kSampleRate, fewer only at the end; an empty result means the end. The
// concatenated pieces equal what load_audio returns, whatever the sizes asked for.
class AudioReader {
 public:
  explicit AudioReader(const std::filesystem::path& path);
  // The bytes must outlive the reader.
  AudioReader(std::span<const uint8_t> bytes, std::string_view name);
  ~AudioReader();
  AudioReader(AudioReader&&) noexcept;
  AudioReader& operator=(AudioReader&&) noexcept;

  std::vector<float> read(size_t max_samples);
  // Fills `out` from the front; returns how many samples were written (< out.size() at the end).
  size_t read(std::span<float> out);
  bool done() const;

  int source_rate() const;
  int source_channels() const;
  int64_t source_frames_read() const;
  // The source's length by its header, in seconds (a file cut short holds less).
  double header_seconds() const;
  const std::string& name() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wgx::audio
