// Inputs that are not usable audio: each gives an AudioError that names the input and says what
// is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "audio/decode.h"
#include "audio_files.h"

namespace wgx::audio {
namespace {

using testing::AudioFiles;

// The AudioError `load` throws; fails the test when it throws none or its message lacks a word.
template <typename Load>
std::string error_of(Load load, const std::vector<std::string>& words) {
  try {
    load();
  } catch (const AudioError& e) {
    const std::string message = e.what();
    for (const std::string& w : words) EXPECT_NE(message.find(w), std::string::npos) << "'" << w << "' not in: " << message;
    return message;
  }
  ADD_FAILURE() << "no AudioError";
  return {};
}

class AudioErrors : public AudioFiles {
 protected:
  // A 16-bit mono WAV at 16 kHz: 44 bytes of header, then 2 bytes a frame.
  std::filesystem::path wav(const std::string& name, int64_t frames) const {
    return write(name, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, frames,
                 [](int64_t f, int) { return 0.5 * std::sin(0.05 * f); });
  }

  std::filesystem::path with_bytes(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                      static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }
};

TEST_F(AudioErrors, MissingFile) {
  const auto file = path("nowhere.wav");
  error_of([&] { load_audio(file); }, {file.string(), "no such file"});
  error_of([&] { AudioReader reader(file); }, {"no such file"});
}

TEST_F(AudioErrors, Directory) {
  error_of([&] { load_audio(path("")); }, {"is a directory"});
}

TEST_F(AudioErrors, TextFile) {
  write_text("notes.wav", "These are notes, not audio.\n");
  // libsndfile's own message is quoted after "libsndfile:".
  error_of([&] { load_audio(path("notes.wav")); }, {"notes.wav", "not an audio file", "libsndfile: "});
}

TEST_F(AudioErrors, HeaderCutShort) {
  std::vector<uint8_t> bytes = read_bytes(wav("whole.wav", 1000));
  bytes.resize(20);  // inside the fmt chunk
  const auto file = with_bytes("cut.wav", bytes);
  error_of([&] { load_audio(file); }, {"cut.wav", "truncated header"});
  error_of([&] { decode_audio(bytes, "upload.wav"); }, {"upload.wav", "truncated header"});
}

TEST_F(AudioErrors, EmptyInput) {
  error_of([&] { decode_audio({}, "empty"); }, {"empty", "not an audio file"});
  write_text("empty.wav", "");
  error_of([&] { load_audio(path("empty.wav")); }, {"empty.wav"});
}

TEST_F(AudioErrors, ZeroSamples) {
  const auto file = wav("silent.wav", 0);
  error_of([&] { load_audio(file); }, {"silent.wav", "zero length"});
  error_of([&] { decode_audio(read_bytes(file), "silent.wav"); }, {"zero length"});
}

// A data chunk cut short gives the frames that are there: libsndfile trims the header's length to
// the file's, and the cut sample's lone byte is dropped.
TEST_F(AudioErrors, DataCutShortGivesWhatIsThere) {
  std::vector<uint8_t> bytes = read_bytes(wav("whole.wav", 16000));
  bytes.resize(44 + 2 * 1000 + 1);
  const auto file = with_bytes("cut.wav", bytes);
  const Audio audio = load_audio(file);
  EXPECT_EQ(audio.source_frames, 1000);
  ASSERT_EQ(audio.samples.size(), 1000u);
  const std::vector<float> whole = load_audio(path("whole.wav")).samples;
  EXPECT_EQ(audio.samples, std::vector<float>(whole.begin(), whole.begin() + 1000));
}

// The rate field of a WAV header (bytes 24..27) set to nonsense.
TEST_F(AudioErrors, AbsurdSampleRates) {
  const std::vector<uint8_t> good = read_bytes(wav("good.wav", 1000));
  for (uint32_t rate : {0u, 5u, 999u, 768001u, 2000000000u}) {
    std::vector<uint8_t> bytes = good;
    std::memcpy(bytes.data() + 24, &rate, 4);  // little-endian, as this machine
    try {
      decode_audio(bytes, "rate.wav");
      ADD_FAILURE() << "rate " << rate << " accepted";
    } catch (const AudioError& e) {
      // libsndfile refuses some rates itself; the others are ours to refuse.
      const std::string message = e.what();
      EXPECT_TRUE(message.find("sample rate") != std::string::npos || message.find("libsndfile") != std::string::npos)
          << message;
    }
  }
}

TEST_F(AudioErrors, NonFiniteSamples) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto with_nan = write("nan.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 2, 100,
                              [&](int64_t f, int c) { return f == 5 && c == 1 ? nan : 0.1; });
  error_of([&] { load_audio(with_nan); }, {"nan.wav", "NaN sample at frame 5, channel 1"});
  const auto with_inf = write("inf.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 5000,
                              [&](int64_t f, int) { return f == 4500 ? -inf : 0.1; });
  error_of([&] { load_audio(with_inf); }, {"infinite sample at frame 4500"});
  // Finite, but past what the resampler's float arithmetic holds (found by fuzzing).
  const auto huge = write("huge.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 5000,
                          [&](int64_t f, int) { return f % 2 ? 3e38 : -3e38; });
  error_of([&] { load_audio(huge); }, {"huge.wav", "too large to resample"});
}

}  // namespace
}  // namespace wgx::audio
