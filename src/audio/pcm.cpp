#include "audio/pcm.h"

#include "audio/error.h"

namespace wgx::audio {
namespace {

float sample(uint8_t low, uint8_t high) {
  const auto value = static_cast<int16_t>(static_cast<uint16_t>(low | (high << 8)));
  return static_cast<float>(value) / 32768.0f;
}

}  // namespace

std::vector<float> pcm16_to_float(std::span<const uint8_t> bytes) {
  if (bytes.size() % 2 != 0) {
    throw AudioError("16-bit PCM: " + std::to_string(bytes.size()) +
                     " bytes is not a whole number of 2-byte samples");
  }
  PcmStream stream;
  return stream.push(bytes);
}

std::vector<float> PcmStream::push(std::span<const uint8_t> bytes) {
  std::vector<float> out;
  out.reserve((bytes.size() + 1) / 2);
  size_t i = 0;
  if (pending_ && !bytes.empty()) {
    out.push_back(sample(*pending_, bytes[0]));
    pending_.reset();
    i = 1;
  }
  for (; i + 1 < bytes.size(); i += 2) out.push_back(sample(bytes[i], bytes[i + 1]));
  if (i < bytes.size()) pending_ = bytes[i];
  return out;
}

}  // namespace wgx::audio
