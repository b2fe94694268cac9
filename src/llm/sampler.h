// Picking the next token from a step's logits, on the host. The processing follows Hugging Face
// transformers' order and semantics, so a seed-independent setting (greedy, or the distribution
// sampled from) matches what `generate()` would do there:
//
//   repetition penalty -> (greedy: argmax) -> temperature -> top-k -> top-p -> min-p -> draw
//
// Each step is also a free function, for tests and for callers that want only one of them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wgx::llm {

struct SamplingOptions {
  float temperature = 1.0f;         // <= 0: greedy (argmax, after the repetition penalty)
  int32_t top_k = 0;                // 0: off
  float top_p = 1.0f;               // >= 1: off
  float min_p = 0.0f;               // <= 0: off
  float repetition_penalty = 1.0f;  // 1: off; > 1 discourages tokens already in the context
  uint64_t seed = 0;
  // top-k found before the temperature is applied, then only the tokens near or above the k-th
  // largest scaled (the same candidates and draws); false scales every logit first (tests).
  bool fast_top_k = true;

  bool greedy() const { return temperature <= 0.0f; }
};

// Throws std::invalid_argument naming the option that is out of range.
void validate(const SamplingOptions& options);

// xoshiro256** seeded through splitmix64: small, fast, and the same numbers on every platform
// (std::mt19937 is too, but its distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next();
  double uniform();  // [0, 1) with 53 random bits

 private:
  uint64_t s_[4];
};

// The steps, in place on logits. Removed tokens become -infinity.
// HF RepetitionPenaltyLogitsProcessor: every distinct token of `context` has its logit divided by
// `penalty` when positive, multiplied when negative. Ids outside the logits are ignored.
void apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> context, float penalty);
void apply_temperature(std::span<float> logits, float temperature);
// Keeps the k largest; ties with the k-th largest are kept too (HF compares against its value).
void apply_top_k(std::span<float> logits, int32_t k);
// Keeps the most likely tokens until their probability reaches p: a token stays when the tokens
// more likely than it hold less than p. At least one token stays.
void apply_top_p(std::span<float> logits, float p);
// Keeps tokens whose probability is at least min_p times the most likely one's.
void apply_min_p(std::span<float> logits, float min_p);
// Index of the largest logit; the first on ties (as torch.argmax).
int32_t argmax(std::span<const float> logits);

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);

  // The next token. `context` is what the repetition penalty looks at: the prompt and the tokens
  // generated so far, as in HF.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> context);
  // The distribution sample() draws from (one probability per token, zero for removed ones); for
  // greedy, 1 at the argmax.
  std::vector<double> distribution(std::span<const float> logits, std::span<const int32_t> context) const;

  const SamplingOptions& options() const { return options_; }

 private:
  SamplingOptions options_;
  Rng rng_;
};

}  // namespace wgx::llm
