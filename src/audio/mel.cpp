#include "audio/mel.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>

#include "audio/error.h"

namespace wgx::audio {
namespace {

constexpr int kSampleRate = 16000;
constexpr double kLogFloor = 1e-10;  // mel_floor: log10 of silence is -10, not -inf
constexpr double kDynamicRange = 8.0;  // log10 units kept below the window's maximum

// The slaney mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above.
constexpr double kLogStartHz = 1000.0;
constexpr double kLogStartMel = 15.0;
// Written as transformers writes them (a multiplication each way), so rounding matches too.
double hz_to_mel(double hz) {
  return hz < kLogStartHz ? 3.0 * hz / 200.0 : kLogStartMel + std::log(hz / kLogStartHz) * (27.0 / std::log(6.4));
}

double mel_to_hz(double mel) {
  return mel < kLogStartMel ? 200.0 * mel / 3.0 : kLogStartHz * std::exp(std::log(6.4) / 27.0 * (mel - kLogStartMel));
}

// FFTW's planner is not thread-safe, so the one plan is made under a lock; executing it on other
// arrays (fftw_execute_dft_r2c) is. FFTW_UNALIGNED: callers' arrays need no particular alignment.
fftw_plan rfft_plan() {
  static std::mutex mutex;
  static fftw_plan plan = nullptr;
  std::lock_guard lock(mutex);
  if (!plan) {
    std::vector<double> in(kMelFft);
    std::vector<fftw_complex> out(kMelBins);
    plan = fftw_plan_dft_r2c_1d(kMelFft, in.data(), out.data(), FFTW_ESTIMATE | FFTW_UNALIGNED);
    if (!plan) throw std::runtime_error("FFTW could not plan a 400-point real transform");
  }
  return plan;
}

// The nonzero range of each filter, so the product skips the zeros (a filter spans a few bins).
struct FilterRange {
  int first = 0;
  int end = 0;
};

}  // namespace

std::vector<double> mel_filter_bank(int n_mels) {
  if (n_mels < 1 || n_mels > 512) {
    throw std::invalid_argument("mel_filter_bank: n_mels must be 1 to 512, not " + std::to_string(n_mels));
  }
  // Filter edges evenly spaced in mels from 0 to 8 kHz: filter m rises from edge m to m + 1 and
  // falls to m + 2.
  const double mel_min = hz_to_mel(0.0);
  const double mel_max = hz_to_mel(kMelMaxFrequency);
  // As numpy's linspace: start + i * step, and the last one exactly the end.
  std::vector<double> edges(static_cast<size_t>(n_mels) + 2);
  const double step = (mel_max - mel_min) / (n_mels + 1);
  for (size_t i = 0; i < edges.size(); ++i) {
    const double mel = i + 1 == edges.size() ? mel_max : static_cast<double>(i) * step + mel_min;
    edges[i] = mel_to_hz(mel);
  }
  std::vector<double> bank(static_cast<size_t>(n_mels) * kMelBins, 0.0);
  for (int m = 0; m < n_mels; ++m) {
    const double lower = edges[m], center = edges[m + 1], upper = edges[m + 2];
    const double norm = 2.0 / (upper - lower);  // slaney: equal area per filter
    for (int k = 0; k < kMelBins; ++k) {
      const double hz = static_cast<double>(k) * (kSampleRate / 2) / (kMelBins - 1);
      const double rise = (hz - lower) / (center - lower);
      const double fall = (upper - hz) / (upper - center);
      bank[static_cast<size_t>(m) * kMelBins + k] = std::max(0.0, std::min(rise, fall)) * norm;
    }
  }
  return bank;
}

MelSpec log_mel(std::span<const float> samples_16k, int n_mels) {
  const std::vector<double> bank = mel_filter_bank(n_mels);
  std::vector<FilterRange> ranges(static_cast<size_t>(n_mels));
  for (int m = 0; m < n_mels; ++m) {
    const double* row = bank.data() + static_cast<size_t>(m) * kMelBins;
    FilterRange& r = ranges[static_cast<size_t>(m)];
    while (r.first < kMelBins && row[r.first] == 0.0) ++r.first;
    r.end = kMelBins;
    while (r.end > r.first && row[r.end - 1] == 0.0) --r.end;
  }

  // The 30 s window, zero-padded, with n_fft / 2 reflected samples on each side (x[1], x[2], ...
  // before x[0]; the edge sample itself is not repeated).
  constexpr int64_t kPad = kMelFft / 2;
  const auto n = static_cast<int64_t>(std::min<size_t>(samples_16k.size(), kMelChunkSamples));
  std::vector<double> padded(static_cast<size_t>(kMelChunkSamples + 2 * kPad), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const float v = samples_16k[static_cast<size_t>(i)];
    if (!std::isfinite(v)) throw AudioError("log_mel: sample " + std::to_string(i) + " is NaN or infinite");
    padded[static_cast<size_t>(kPad + i)] = v;
  }
  for (int64_t i = 0; i < kPad; ++i) {
    padded[static_cast<size_t>(kPad - 1 - i)] = padded[static_cast<size_t>(kPad + 1 + i)];
    padded[static_cast<size_t>(kPad + kMelChunkSamples + i)] = padded[static_cast<size_t>(kPad + kMelChunkSamples - 2 - i)];
  }

  std::vector<double> window(kMelFft);  // periodic Hann: the symmetric one of n_fft + 1, last dropped
  for (int k = 0; k < kMelFft; ++k) window[k] = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * k / kMelFft);

  const fftw_plan plan = rfft_plan();
  std::vector<double> frame(kMelFft);
  std::vector<fftw_complex> spectrum(kMelBins);
  std::vector<double> power(kMelBins);
  std::vector<double> logs(static_cast<size_t>(n_mels * kMelChunkFrames));
  double peak = -std::numeric_limits<double>::infinity();
  for (int64_t t = 0; t < kMelChunkFrames; ++t) {
    const double* start = padded.data() + t * kMelHop;
    for (int k = 0; k < kMelFft; ++k) frame[k] = start[k] * window[k];
    fftw_execute_dft_r2c(plan, frame.data(), spectrum.data());
    for (int k = 0; k < kMelBins; ++k) power[k] = spectrum[k][0] * spectrum[k][0] + spectrum[k][1] * spectrum[k][1];
    for (int m = 0; m < n_mels; ++m) {
      const double* row = bank.data() + static_cast<size_t>(m) * kMelBins;
      double mel = 0.0;
      for (int k = ranges[m].first; k < ranges[m].end; ++k) mel += row[k] * power[k];
      const double value = std::log10(std::max(mel, kLogFloor));
      logs[static_cast<size_t>(m * kMelChunkFrames + t)] = value;
      peak = std::max(peak, value);
    }
  }

  MelSpec spec;
  spec.n_mels = n_mels;
  spec.frames = kMelChunkFrames;
  spec.values.resize(logs.size());
  for (size_t i = 0; i < logs.size(); ++i) {
    spec.values[i] = static_cast<float>((std::max(logs[i], peak - kDynamicRange) + 4.0) / 4.0);
  }
  return spec;
}

}  // namespace wgx::audio
