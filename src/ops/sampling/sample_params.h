// The words of sample_token's `sampling` input (graph/schemas/sampling.cpp) and the host's copy
// of the uniform number its draw uses (sample_token.wgsl's uniform01), for the code that sets
// the input and for references. Header only: no GPU code.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace wgx::ops::sampling {

// The largest top_k the device draws from (the candidates each chunk of the vocabulary keeps).
inline constexpr int32_t kMaxTopK = 128;
// Logits per workgroup; the vocabulary may have up to 256 chunks.
inline constexpr int64_t kChunk = 2048;
inline constexpr int64_t kMaxVocab = 256 * kChunk;
// Candidates the draw keeps at most: ties with the k-th largest beyond it are dropped, the
// highest indices first.
inline constexpr int32_t kMaxKept = 256;

using Words = std::array<int32_t, 8>;

// Greedy: the largest logit, the lowest index on ties.
inline Words greedy_words() { return {}; }

// Sampling from the top_k (1 .. kMaxTopK) largest of logits / temperature (> 0), then top_p
// (>= 1: off) and min_p (<= 0: off).
inline Words sampling_words(int32_t top_k, float temperature, float top_p, float min_p, uint64_t seed) {
  return {top_k,
          std::bit_cast<int32_t>(1.0f / temperature),
          std::bit_cast<int32_t>(top_p),
          std::bit_cast<int32_t>(min_p),
          static_cast<int32_t>(static_cast<uint32_t>(seed)),
          static_cast<int32_t>(static_cast<uint32_t>(seed >> 32)),
          0,
          0};
}

inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

// The draw's u in [0, 1) for a seed and a step's position: 24 random bits.
inline float uniform01(uint64_t seed, uint32_t counter) {
  const auto lo = static_cast<uint32_t>(seed), hi = static_cast<uint32_t>(seed >> 32);
  const uint32_t h = mix32(lo ^ mix32(hi ^ mix32(counter + 0x9e3779b9u)));
  return static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
}

}  // namespace wgx::ops::sampling
