// Encoding speed on English text, against the >= 1 MB/s the runtime needs (it encodes prompts
// on the CPU before the first GPU step). Printed for PERFORMANCE.md; asserted only in optimized
// builds without sanitizers, where the number means something.
#include <gtest/gtest.h>

#include <chrono>

#include "reference_data.h"

namespace wgx::tokenizer::test {
namespace {

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
constexpr bool kAssertSpeed = true;
#else
constexpr bool kAssertSpeed = false;
#endif

// About 2 MB of English prose from the corpus, repeated.
std::string english_text() {
  std::string base;
  for (const ReferenceEntry& e : reference("qwen3").entries) {
    if (e.name == "english_prose" || e.name == "long_paragraph" || e.name == "apostrophes" ||
        e.name == "numbers_decimal" || e.name == "markdown") {
      base += e.text + "\n\n";
    }
  }
  std::string text;
  while (text.size() < (2u << 20)) text += base;
  return text;
}

class ThroughputTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ThroughputTest, EncodesEnglishAtLeastOneMegabytePerSecond) {
  const Tokenizer* tok = nullptr;
  try {
    tok = &reference_tokenizer(GetParam());
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  const std::string text = english_text();
  tok->encode(text.substr(0, 10000));  // warm up
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = tok->encode(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double mb_per_s = static_cast<double>(text.size()) / 1e6 / seconds;
  std::printf("[ %s ] encoded %.2f MB of English (%zu tokens) in %.3f s: %.1f MB/s\n",
              GetParam().c_str(), static_cast<double>(text.size()) / 1e6, ids.size(), seconds,
              mb_per_s);
  if (kAssertSpeed) {
    EXPECT_GE(mb_per_s, 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ThroughputTest, ::testing::Values("qwen3", "llama3_1"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace wgx::tokenizer::test
