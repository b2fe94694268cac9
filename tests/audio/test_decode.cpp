// Decoding and resampling: tones written with libsndfile in several formats, rates and channel
// counts come back as mono 16 kHz with the length and the tone they should have; the streaming
// reader gives the one-shot load's samples whatever the piece sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "audio/decode.h"
#include "audio_files.h"

namespace wgx::audio {
namespace {

using testing::AudioFiles;
using testing::tone;

constexpr double kHz = 440.0;
// Output samples left out of the tone checks at each end, where the resampler's filter meets the
// signal's abrupt start and end (6 ms).
constexpr size_t kEdge = 100;

struct Case {
  const char* name;
  int format;
  int rate;
  int channels;
  double max_error;  // the largest |decoded - expected tone| away from the ends
};

class AudioDecode : public AudioFiles, public ::testing::WithParamInterface<Case> {};

// Channel c carries the tone at amplitude 0.6 - 0.4c; their mean is what mono must hold.
double channel_amplitude(int c) { return 0.6 - 0.4 * c; }

double mono_amplitude(int channels) {
  double sum = 0;
  for (int c = 0; c < channels; ++c) sum += channel_amplitude(c);
  return sum / channels;
}

TEST_P(AudioDecode, MonoSixteenKilohertzTone) {
  const Case& k = GetParam();
  const int64_t frames = k.rate * 3 / 2;  // 1.5 s
  const auto file = write(std::string(k.name), k.format, k.rate, k.channels, frames,
                          [&](int64_t f, int c) { return tone(kHz, channel_amplitude(c), k.rate, f); });
  if (file.empty()) GTEST_SKIP() << "this libsndfile does not write " << k.name;

  const Audio audio = load_audio(file);
  EXPECT_EQ(audio.source_rate, k.rate);
  EXPECT_EQ(audio.source_channels, k.channels);
  EXPECT_EQ(audio.source_frames, frames);
  const auto expected_length = std::llround(static_cast<double>(frames) * kSampleRate / k.rate);
  EXPECT_NEAR(static_cast<double>(audio.samples.size()), static_cast<double>(expected_length), 1.0);

  const double amplitude = mono_amplitude(k.channels);
  double max_error = 0;
  for (size_t n = kEdge; n + kEdge < audio.samples.size(); ++n) {
    max_error = std::max(max_error, std::abs(audio.samples[n] - tone(kHz, amplitude, kSampleRate, static_cast<int64_t>(n))));
  }
  EXPECT_LT(max_error, k.max_error);
}

// Vorbis is lossy and shifts phase, so the tone is fitted (a sine and a cosine at 440 Hz, least
// squares) rather than compared sample by sample: its amplitude and what is left over.
TEST_F(AudioFiles, OggVorbisKeepsTheTone) {
  const int rate = 44100;
  const auto file = write("tone.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, rate, 2, rate * 3 / 2,
                          [&](int64_t f, int c) { return tone(kHz, channel_amplitude(c), rate, f); });
  if (file.empty()) GTEST_SKIP() << "this libsndfile does not write Ogg Vorbis";
  const Audio audio = load_audio(file);
  EXPECT_EQ(audio.source_rate, rate);
  EXPECT_NEAR(static_cast<double>(audio.samples.size()), 24000.0, 1.0);
  double ss = 0, sc = 0, cc = 0, ys = 0, yc = 0;
  for (size_t n = kEdge; n + kEdge < audio.samples.size(); ++n) {
    const double w = 2.0 * std::numbers::pi * kHz * static_cast<double>(n) / kSampleRate;
    const double s = std::sin(w), c = std::cos(w), y = audio.samples[n];
    ss += s * s, sc += s * c, cc += c * c, ys += y * s, yc += y * c;
  }
  const double det = ss * cc - sc * sc;
  const double a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det;
  EXPECT_NEAR(std::hypot(a, b), mono_amplitude(2), 0.02);
  double residual = 0;
  size_t count = 0;
  for (size_t n = kEdge; n + kEdge < audio.samples.size(); ++n, ++count) {
    const double w = 2.0 * std::numbers::pi * kHz * static_cast<double>(n) / kSampleRate;
    const double e = audio.samples[n] - a * std::sin(w) - b * std::cos(w);
    residual += e * e;
  }
  EXPECT_LT(std::sqrt(residual / static_cast<double>(count)), 0.01);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, AudioDecode,
    ::testing::Values(Case{"wav16_44100_stereo.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 44100, 2, 1e-3},
                      Case{"wavfloat_44100_stereo.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 2, 1e-4},
                      Case{"wav16_8000_mono.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1, 1e-3},
                      Case{"wav16_16000_mono.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, 1e-4},
                      Case{"flac16_44100_stereo.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 44100, 2, 1e-3},
                      Case{"flac24_48000_mono.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 48000, 1, 1e-4}),
    [](const ::testing::TestParamInfo<Case>& param) {
      std::string name = param.param.name;
      return name.substr(0, name.find('.'));
    });

// The streaming reader, read in pieces of odd sizes, gives exactly the one-shot load's samples;
// so does decoding the same bytes from memory.
TEST_F(AudioFiles, StreamingEqualsOneShot) {
  const int rate = 44100;
  const auto file = write("long.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, rate, 2, rate * 2 + 17,
                          [&](int64_t f, int c) { return tone(kHz * (1 + c), 0.3, rate, f) + 0.1 * std::sin(0.001 * f * f); });
  const Audio whole = load_audio(file);

  AudioReader reader(file);
  EXPECT_EQ(reader.source_rate(), rate);
  EXPECT_EQ(reader.source_channels(), 2);
  std::vector<float> pieces;
  const size_t sizes[] = {1, 7, 1013, 4099, 3, 65537};
  for (size_t i = 0; !reader.done(); ++i) {
    const size_t want = sizes[i % std::size(sizes)];
    const std::vector<float> piece = reader.read(want);
    EXPECT_TRUE(piece.size() == want || reader.done()) << "a short piece before the end";
    pieces.insert(pieces.end(), piece.begin(), piece.end());
  }
  EXPECT_TRUE(reader.read(10).empty());
  EXPECT_EQ(pieces, whole.samples);

  const std::vector<uint8_t> bytes = read_bytes(file);
  const Audio from_memory = decode_audio(bytes, "long.wav");
  EXPECT_EQ(from_memory.samples, whole.samples);
  EXPECT_EQ(from_memory.source_frames, whole.source_frames);
}

// An hour of audio (8 kHz, 8-bit: 29 MB) read 30 s at a time, as the transcriber reads long
// files: the header says an hour, every window but the last is whole, the samples add up to an
// hour at 16 kHz, and the tone is still there, at its level, in the last window.
TEST_F(AudioFiles, AnHourIsReadAWindowAtATime) {
  const int rate = 8000;
  const int64_t frames = int64_t{3600} * rate;
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_U8;
  const auto file = path("hour.wav");
  SNDFILE* out = sf_open(file.c_str(), SFM_WRITE, &info);
  ASSERT_NE(out, nullptr) << sf_strerror(nullptr);
  std::vector<float> block(static_cast<size_t>(rate));
  for (int64_t f0 = 0; f0 < frames; f0 += rate) {
    for (int64_t i = 0; i < rate; ++i) block[static_cast<size_t>(i)] = static_cast<float>(tone(kHz, 0.5, rate, f0 + i));
    ASSERT_EQ(sf_writef_float(out, block.data(), rate), rate);
  }
  sf_close(out);

  AudioReader reader(file);
  EXPECT_DOUBLE_EQ(reader.header_seconds(), 3600.0);
  constexpr size_t kWindow = size_t{30} * kSampleRate;
  int64_t total = 0, windows = 0;
  std::vector<float> last;
  while (!reader.done()) {
    std::vector<float> w = reader.read(kWindow);
    if (!reader.done()) {
      ASSERT_EQ(w.size(), kWindow) << "window " << windows;
    }
    total += static_cast<int64_t>(w.size());
    ++windows;
    if (!w.empty()) last = std::move(w);
  }
  EXPECT_EQ(windows, 120);
  EXPECT_EQ(total, int64_t{3600} * kSampleRate);
  ASSERT_FALSE(last.empty());
  double peak = 0;
  for (float v : last) peak = std::max(peak, std::abs(static_cast<double>(v)));
  EXPECT_NEAR(peak, 0.5, 0.02) << "the tone's level in the last window";
}

}  // namespace
}  // namespace wgx::audio
