// Fuzzes audio decoding from memory, audio::decode_audio (libsndfile's virtual I/O, mixing to
// mono, resampling to 16 kHz with libsoxr).
//
// The input is the bytes of an audio file in any format libsndfile reads. What is not audio, or
// is audio wgx refuses (no samples, an absurd rate, NaN), must end in an AudioError. Audio it
// accepts must be finite, carry the source's rate and channels in range, and hold as many 16 kHz
// samples as the frames decoded make at that rate (within one).
#include <cmath>

#include "audio/decode.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wgx;
  audio::Audio a;
  try {
    a = audio::decode_audio({data, size}, "fuzz");
  } catch (const audio::AudioError&) {
    return 0;
  }
  fuzz::check(a.source_rate >= audio::kMinSourceRate && a.source_rate <= audio::kMaxSourceRate,
              "the source rate is out of range");
  fuzz::check(a.source_channels >= 1 && a.source_channels <= audio::kMaxChannels, "the channels are out of range");
  fuzz::check(a.source_frames > 0, "accepted audio without frames");
  const double expected = static_cast<double>(a.source_frames) * audio::kSampleRate / a.source_rate;
  fuzz::check(std::abs(static_cast<double>(a.samples.size()) - std::round(expected)) <= 1.0,
              "the sample count does not follow from the frames and the rate");
  for (float v : a.samples) fuzz::check(std::isfinite(v), "a sample is not finite");
  return 0;
}
