// The whole path, file to features, against transformers itself: WhisperFeatureExtractor's
// input_features for a sample WAV, saved as float32 [n_mels, 3000] beside the tiny Whisper
// checkpoints (tools/hf_reference/make_tiny_whisper.py writes them). transformers computes in
// float32 (torch.stft), so the tolerance is wider than against the double reference in test_mel.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "audio/decode.h"
#include "audio/mel.h"

namespace wgx::audio {
namespace {

constexpr double kTransformersTolerance = 1e-4;  // absolute; float32 against double

void compare(const std::string& folder, int n_mels) {
  const std::filesystem::path dir = std::filesystem::path(WGX_HF_FIXTURES) / folder;
  if (!std::filesystem::exists(dir / "features.f32")) GTEST_SKIP() << "no " << (dir / "features.f32");
  const MelSpec spec = log_mel(load_audio(dir / "sample.wav").samples, n_mels);
  std::vector<float> expected(static_cast<size_t>(n_mels) * kMelChunkFrames);
  std::ifstream in(dir / "features.f32", std::ios::binary);
  in.read(reinterpret_cast<char*>(expected.data()), static_cast<std::streamsize>(expected.size() * sizeof(float)));
  ASSERT_TRUE(in && in.peek() == EOF) << "features.f32 is not [" << n_mels << ", 3000] float32";
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(double{spec.values[i]} - expected[i]));
  EXPECT_LT(worst, kTransformersTolerance);
}

TEST(AudioLogMelTransformers, EightyMels) { compare("tiny_whisper", 80); }
TEST(AudioLogMelTransformers, HundredTwentyEightMels) { compare("tiny_whisper_v3", 128); }

}  // namespace
}  // namespace wgx::audio
