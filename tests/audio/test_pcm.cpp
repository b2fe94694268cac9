// Raw 16-bit little-endian PCM (stdin streaming): values, odd lengths, pieces of any size.
#include <gtest/gtest.h>

#include "audio/error.h"
#include "audio/pcm.h"

namespace wgx::audio {
namespace {

std::vector<uint8_t> bytes_of(const std::vector<int16_t>& samples) {
  std::vector<uint8_t> out;
  for (int16_t s : samples) {
    const auto u = static_cast<uint16_t>(s);
    out.push_back(static_cast<uint8_t>(u & 0xff));
    out.push_back(static_cast<uint8_t>(u >> 8));
  }
  return out;
}

TEST(AudioPcm16, ScalesAsLibsndfile) {
  const std::vector<float> got = pcm16_to_float(bytes_of({0, 16384, -32768, 32767, -1}));
  const std::vector<float> want = {0.0f, 0.5f, -1.0f, 32767.0f / 32768.0f, -1.0f / 32768.0f};
  EXPECT_EQ(got, want);
}

TEST(AudioPcm16, OddLengthIsAnError) {
  const std::vector<uint8_t> three = {1, 2, 3};
  try {
    pcm16_to_float(three);
    FAIL() << "no error";
  } catch (const AudioError& e) {
    EXPECT_NE(std::string(e.what()).find("3 bytes"), std::string::npos) << e.what();
  }
}

TEST(AudioPcm16, StreamInPiecesEqualsWhole) {
  std::vector<int16_t> samples;
  for (int i = 0; i < 1001; ++i) samples.push_back(static_cast<int16_t>(i * 977 - 30000));
  const std::vector<uint8_t> bytes = bytes_of(samples);
  const std::vector<float> whole = pcm16_to_float(bytes);

  PcmStream stream;
  std::vector<float> pieces;
  const size_t sizes[] = {1, 2, 3, 0, 5, 101, 1};
  size_t at = 0;
  for (size_t i = 0; at < bytes.size(); ++i) {
    const size_t n = std::min(sizes[i % std::size(sizes)], bytes.size() - at);
    const std::vector<float> got = stream.push(std::span(bytes).subspan(at, n));
    pieces.insert(pieces.end(), got.begin(), got.end());
    at += n;
  }
  EXPECT_FALSE(stream.has_partial_sample());
  EXPECT_EQ(pieces, whole);

  const uint8_t half[] = {0x34};
  EXPECT_TRUE(stream.push(half).empty());
  EXPECT_TRUE(stream.has_partial_sample());
}

}  // namespace
}  // namespace wgx::audio
