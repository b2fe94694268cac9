// Whisper's log-mel features, as transformers' WhisperFeatureExtractor computes them.
//
// The audio (mono, 16 kHz) is padded with zeros or cut to 30 s (480,000 samples), reflected by
// n_fft / 2 at both ends (center=True), cut into frames of 400 samples every 160 under a periodic
// Hann window, and each frame's power spectrum |rfft|^2 (201 bins) goes through a bank of slaney
// mel filters (0 to 8 kHz, slaney-normalized). Then log10(max(mel, 1e-10)), the STFT's last frame
// dropped (3,000 frames remain), values floored at the maximum less 8, and (x + 4) / 4.
//
// The FFT runs on the host with FFTW3: a well-kept library, in double precision like the
// reference, and a 30 s window costs about 10 ms with 80 mels and 17 ms with 128 on one core of
// the 2-core build machine, far below the encoder's time on the GPU. Everything is computed in
// double and returned as float. log_mel may run on several threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wgx::audio {

inline constexpr int kMelFft = 400;                     // n_fft
inline constexpr int kMelHop = 160;                     // hop_length
inline constexpr int kMelBins = kMelFft / 2 + 1;        // rfft bins: 201
inline constexpr int64_t kMelChunkSamples = 480000;     // n_samples: 30 s at 16 kHz
inline constexpr int64_t kMelChunkFrames = 3000;        // nb_max_frames
inline constexpr double kMelMaxFrequency = 8000.0;      // the filters' top, half of 16 kHz

// Features of one 30 s window: values[m * frames + t] for mel m and frame t, the layout of
// transformers' input_features[0] ([n_mels, 3000], row-major), so a saved float array of that
// shape compares element by element.
struct MelSpec {
  int64_t n_mels = 0;
  int64_t frames = 0;
  std::vector<float> values;

  float at(int64_t mel, int64_t frame) const { return values[static_cast<size_t>(mel * frames + frame)]; }
};

// The mel filter bank, [n_mels, kMelBins] row-major (transformers' mel_filter_bank gives the
// transpose): as mel_filter_bank(num_frequency_bins=201, num_mel_filters=n_mels,
// min_frequency=0, max_frequency=8000, sampling_rate=16000, norm="slaney", mel_scale="slaney").
// n_mels: 80 (Whisper) or 128 (large-v3); 1 to 512 are accepted.
std::vector<double> mel_filter_bank(int n_mels);

// Log-mel features of up to 30 s of mono 16 kHz audio (longer input is cut to 30 s). Always
// kMelChunkFrames frames. Throws std::invalid_argument for n_mels out of range, AudioError for a
// NaN or infinite sample.
MelSpec log_mel(std::span<const float> samples_16k, int n_mels);

}  // namespace wgx::audio
