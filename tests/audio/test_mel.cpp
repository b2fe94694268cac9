// Whisper's log-mel features against a reference written here from the definitions, in double:
// the slaney mel scale's formulas spelled out, and a naive DFT (no FFTW). Negative controls show
// that the comparison catches the usual mistakes (a symmetric Hann window, no reflection at the
// ends, no centering).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <thread>

#include "audio/error.h"
#include "audio/mel.h"

namespace wgx::audio {
namespace {

constexpr double kFeatureTolerance = 1e-5;  // absolute, on the final (x + 4) / 4 features
constexpr double kFilterTolerance = 1e-12;
constexpr int kN = 400, kBins = 201, kHop = 160, kFrames = 3000, kWindowSamples = 480000;

// ---- The reference -----------------------------------------------------------------------------

double slaney_mel(double hz) { return hz >= 1000.0 ? 15.0 + std::log(hz / 1000.0) / (std::log(6.4) / 27.0) : hz * 3.0 / 200.0; }
double slaney_hz(double mel) { return mel >= 15.0 ? 1000.0 * std::pow(6.4, (mel - 15.0) / 27.0) : mel * 200.0 / 3.0; }

// filters[m][k]: a triangle over mel-spaced edges, scaled by 2 / (its width in Hz).
std::vector<std::vector<double>> reference_filters(int n_mels) {
  std::vector<double> edge(n_mels + 2);
  for (int i = 0; i < n_mels + 2; ++i) edge[i] = slaney_hz(slaney_mel(8000.0) * i / (n_mels + 1));
  std::vector<std::vector<double>> filters(n_mels, std::vector<double>(kBins));
  for (int m = 0; m < n_mels; ++m) {
    for (int k = 0; k < kBins; ++k) {
      const double hz = 40.0 * k;  // 16 kHz / 400
      double w = 0;
      if (hz > edge[m] && hz <= edge[m + 1]) w = (hz - edge[m]) / (edge[m + 1] - edge[m]);
      if (hz > edge[m + 1] && hz < edge[m + 2]) w = (edge[m + 2] - hz) / (edge[m + 2] - edge[m + 1]);
      filters[m][k] = w * 2.0 / (edge[m + 2] - edge[m]);
    }
  }
  return filters;
}

enum class Mistake { kNone, kSymmetricWindow, kZeroPadding, kNotCentered };

// [n_mels, 3000] row-major, computed the slow way.
std::vector<double> reference_log_mel(const std::vector<float>& samples, int n_mels, Mistake mistake = Mistake::kNone) {
  std::vector<double> x(kWindowSamples, 0.0);
  for (size_t i = 0; i < std::min<size_t>(samples.size(), kWindowSamples); ++i) x[i] = samples[i];
  // Sample at position p of the centered signal (p may be negative or past the end).
  auto at = [&](int64_t p) -> double {
    if (p >= 0 && p < kWindowSamples) return x[p];
    if (mistake == Mistake::kZeroPadding) return 0.0;
    return p < 0 ? x[-p] : x[2 * (kWindowSamples - 1) - p];
  };
  const int64_t shift = mistake == Mistake::kNotCentered ? 0 : kN / 2;
  const double period = mistake == Mistake::kSymmetricWindow ? kN - 1 : kN;
  std::vector<double> cosine(kN), sine(kN);
  for (int j = 0; j < kN; ++j) cosine[j] = std::cos(2 * std::numbers::pi * j / kN), sine[j] = std::sin(2 * std::numbers::pi * j / kN);
  const auto filters = reference_filters(n_mels);

  std::vector<double> logs(static_cast<size_t>(n_mels) * kFrames);
  std::vector<double> frame(kN), power(kBins);
  for (int t = 0; t < kFrames; ++t) {
    for (int k = 0; k < kN; ++k) frame[k] = at(int64_t{t} * kHop + k - shift) * (0.5 - 0.5 * std::cos(2 * std::numbers::pi * k / period));
    for (int f = 0; f < kBins; ++f) {
      double re = 0, im = 0;
      for (int k = 0, j = 0; k < kN; ++k, j = (j + f) % kN) re += frame[k] * cosine[j], im -= frame[k] * sine[j];
      power[f] = re * re + im * im;
    }
    for (int m = 0; m < n_mels; ++m) {
      double mel = 0;
      for (int f = 0; f < kBins; ++f) mel += filters[m][f] * power[f];
      logs[static_cast<size_t>(m) * kFrames + t] = std::log10(std::max(mel, 1e-10));
    }
  }
  const double top = *std::max_element(logs.begin(), logs.end());
  for (double& v : logs) v = (std::max(v, top - 8.0) + 4.0) / 4.0;
  return logs;
}

double max_difference(const MelSpec& spec, const std::vector<double>& reference) {
  EXPECT_EQ(spec.values.size(), reference.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(spec.values.size(), reference.size()); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(spec.values[i]) - reference[i]));
  }
  return worst;
}

std::vector<float> noise(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<float> out(n);
  for (float& v : out) v = static_cast<float>(static_cast<double>(random()) / 4294967296.0 - 0.5);
  return out;
}

// 30 s sweeping 50 Hz to 7.9 kHz: every filter lit at some time, and the window's last sample
// nonzero, so the reflection at the far end counts.
std::vector<float> chirp() {
  std::vector<float> out(kWindowSamples);
  const double seconds = kWindowSamples / 16000.0, f0 = 50.0, f1 = 7900.0;
  for (size_t n = 0; n < out.size(); ++n) {
    const double t = n / 16000.0;
    out[n] = static_cast<float>(0.4 * std::sin(2 * std::numbers::pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))));
  }
  return out;
}

// ---- The tests ---------------------------------------------------------------------------------

TEST(AudioMelFilterBank, MatchesSlaneyFormulas) {
  for (int n_mels : {80, 128}) {
    const std::vector<double> bank = mel_filter_bank(n_mels);
    ASSERT_EQ(bank.size(), static_cast<size_t>(n_mels) * kBins);
    const auto reference = reference_filters(n_mels);
    double worst = 0;
    for (int m = 0; m < n_mels; ++m) {
      double sum = 0;
      for (int k = 0; k < kBins; ++k) {
        worst = std::max(worst, std::abs(bank[static_cast<size_t>(m) * kBins + k] - reference[m][k]));
        sum += bank[static_cast<size_t>(m) * kBins + k];
      }
      EXPECT_GT(sum, 0.0) << "filter " << m << " of " << n_mels << " is empty";
    }
    EXPECT_LT(worst, kFilterTolerance) << n_mels << " mels";
  }
}

TEST(AudioLogMel, NoiseMatchesNaiveDft) {
  const std::vector<float> x = noise(16000 * 5 + 333, 7);
  EXPECT_LT(max_difference(log_mel(x, 80), reference_log_mel(x, 80)), kFeatureTolerance);
}

TEST(AudioLogMel, ChirpMatchesNaiveDft) {
  const std::vector<float> x = chirp();
  EXPECT_LT(max_difference(log_mel(x, 128), reference_log_mel(x, 128)), kFeatureTolerance);
}

// The reference with a mistake in it differs by far more than the tolerance: the comparison
// above would catch that mistake in log_mel.
TEST(AudioLogMel, ReferenceMistakesAreCaught) {
  const std::vector<float> x = noise(16000 * 2, 11);
  const MelSpec spec = log_mel(x, 80);
  for (Mistake mistake : {Mistake::kSymmetricWindow, Mistake::kZeroPadding, Mistake::kNotCentered}) {
    EXPECT_GT(max_difference(spec, reference_log_mel(x, 80, mistake)), 1000 * kFeatureTolerance)
        << "mistake " << static_cast<int>(mistake);
  }
}

// The FFT plan is made once, under a lock, and shared: threads starting together agree.
TEST(AudioLogMel, ThreadsAgree) {
  const std::vector<float> x = noise(16000, 13);
  std::vector<MelSpec> specs(4);
  std::vector<std::thread> threads;
  for (MelSpec& spec : specs) threads.emplace_back([&x, &spec] { spec = log_mel(x, 80); });
  for (std::thread& t : threads) t.join();
  for (const MelSpec& spec : specs) EXPECT_EQ(spec.values, specs[0].values);
  EXPECT_EQ(specs[0].values, log_mel(x, 80).values);
}

TEST(AudioLogMel, AlwaysThirtySeconds) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{399}, size_t{401}, size_t{160000}, size_t{479999}, size_t{480000}}) {
    const MelSpec spec = log_mel(noise(n, 3), 80);
    EXPECT_EQ(spec.n_mels, 80);
    EXPECT_EQ(spec.frames, kFrames);
    ASSERT_EQ(spec.values.size(), size_t{80} * kFrames);
    for (float v : spec.values) ASSERT_TRUE(std::isfinite(v)) << n << " samples";
  }
}

TEST(AudioLogMel, LongerInputIsCut) {
  const std::vector<float> x = noise(600000, 5);
  const MelSpec whole = log_mel(x, 80);
  const MelSpec cut = log_mel(std::span(x).first(kWindowSamples), 80);
  EXPECT_EQ(whole.values, cut.values);
}

// Silence is log10(1e-10) = -10 everywhere, so (-10 + 4) / 4.
TEST(AudioLogMel, Silence) {
  const MelSpec spec = log_mel({}, 80);
  for (float v : spec.values) ASSERT_EQ(v, -1.5f);
}

TEST(AudioLogMel, RejectsBadInput) {
  std::vector<float> x(1000, 0.1f);
  x[500] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(log_mel(x, 80), AudioError);
  EXPECT_THROW(log_mel({}, 0), std::invalid_argument);
  EXPECT_THROW(mel_filter_bank(513), std::invalid_argument);
}

}  // namespace
}  // namespace wgx::audio
