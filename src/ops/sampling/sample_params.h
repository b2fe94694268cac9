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

// Words 6 and 7: a repetition penalty p (> 0) and 1 / p as f32 bits (both 0 where p is 1: off),
// which sample_token_penalized applies to the logits of the tokens its seen set holds before
// anything else: a logit below 0 times p, others times 1 / p (Hugging Face divides by p: the
// same to an ulp). sample_token leaves them unused.
inline std::array<int32_t, 2> penalty_words(float penalty) {
  if (penalty == 1.0f) return {0, 0};
  return {std::bit_cast<int32_t>(penalty), std::bit_cast<int32_t>(1.0f / penalty)};
}

// Greedy: the largest logit, the lowest index on ties.
inline Words greedy_words(float penalty = 1.0f) {
  const auto p = penalty_words(penalty);
  return {0, 0, 0, 0, 0, 0, p[0], p[1]};
}

// Sampling from the top_k (1 .. kMaxTopK) largest of logits / temperature (> 0), then top_p
// (>= 1: off) and min_p (<= 0: off); a repetition penalty before them (1: off).
inline Words sampling_words(int32_t top_k, float temperature, float top_p, float min_p, uint64_t seed,
                            float penalty = 1.0f) {
  const auto p = penalty_words(penalty);
  return {top_k,
          std::bit_cast<int32_t>(1.0f / temperature),
          std::bit_cast<int32_t>(top_p),
          std::bit_cast<int32_t>(min_p),
          static_cast<int32_t>(static_cast<uint32_t>(seed)),
          static_cast<int32_t>(static_cast<uint32_t>(seed >> 32)),
          p[0],
          p[1]};
}

// sample_token_penalized's seen set: a bit per token (token t: bit t % 32 of word t / 32), in
// i32 words.
inline int64_t seen_words(int64_t vocab) { return (vocab + 31) / 32; }

// A seen token's logit as the penalty words leave it (the host's copy of sample_token.wgsl's).
inline float penalized(float x, const Words& w) {
  return x < 0.0f ? x * std::bit_cast<float>(w[6]) : x * std::bit_cast<float>(w[7]);
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
