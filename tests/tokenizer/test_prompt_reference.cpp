// The demo, Llama 3.1 and Qwen3 tokenizers against transformers' tokenizer(text).input_ids, with
// and without special tokens, for every text of the corpus; and controls showing that the same
// comparison fails the encodings wgx had before the post-processor ran.
#include <gtest/gtest.h>

#include <functional>

#include "reference_data.h"

namespace wgx::tokenizer::test {
namespace {

using Ids = std::vector<int32_t>;
using Encoder = std::function<Ids(const PromptEntry&)>;

// The entries whose ids (or ids_no_special) `encode` gives exactly; each other one is reported
// through `mismatch`.
size_t count_matching(const PromptReference& ref, bool add_special_tokens, const Encoder& encode,
                      const std::function<void(const PromptEntry&, const Ids&)>& mismatch) {
  size_t matched = 0;
  for (const PromptEntry& e : ref.entries) {
    const Ids ids = encode(e);
    if (ids == (add_special_tokens ? e.ids : e.ids_no_special)) {
      ++matched;
    } else {
      mismatch(e, ids);
    }
  }
  return matched;
}

class PromptReferenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      ref_ = &prompt_reference(GetParam());
      tokenizer_ = &prompt_tokenizer(GetParam());
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }
  const PromptReference& ref() const { return *ref_; }
  const Tokenizer& tok() const { return *tokenizer_; }

  // Every entry matches; a mismatch is a failure naming the entry.
  void expect_all_match(bool add_special_tokens, const Encoder& encode) const {
    const size_t matched = count_matching(
        ref(), add_special_tokens, encode, [&](const PromptEntry& e, const Ids& ids) {
          ADD_FAILURE() << GetParam() << " entry \"" << e.name << "\": got "
                        << ::testing::PrintToString(ids) << ", transformers "
                        << ::testing::PrintToString(add_special_tokens ? e.ids : e.ids_no_special);
        });
    std::printf("[ %s ] %zu of %zu corpus texts give exactly transformers %s's ids (%s)\n",
                GetParam().c_str(), matched, ref().entries.size(), ref().transformers.c_str(),
                add_special_tokens ? "tokenizer(text)" : "add_special_tokens=False");
    EXPECT_GE(ref().entries.size(), 79u);
  }

 private:
  const PromptReference* ref_ = nullptr;
  const Tokenizer* tokenizer_ = nullptr;
};

TEST_P(PromptReferenceTest, TokenizerCallMatchesExactly) {
  expect_all_match(true,
                   [&](const PromptEntry& e) { return tok().encode(e.text, EncodeOptions{}); });
}

TEST_P(PromptReferenceTest, WithoutSpecialTokensMatchesExactly) {
  expect_all_match(false, [&](const PromptEntry& e) {
    return tok().encode(e.text, EncodeOptions{.add_special_tokens = false});
  });
  // That is encode(text) as it always was.
  expect_all_match(false, [&](const PromptEntry& e) { return tok().encode(e.text); });
}

TEST_P(PromptReferenceTest, PostProcessAddsWhatTransformersAdds) {
  expect_all_match(true,
                   [&](const PromptEntry& e) { return tok().post_process(e.ids_no_special); });
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, PromptReferenceTest,
                         ::testing::Values("demo", "llama3_1", "qwen3"),
                         [](const auto& param_info) { return param_info.param; });

// The demo's tokenizer_config.json names <|endoftext|> as bos, but its post-processor (ByteLevel)
// adds nothing. wgx run used to put that bos first (unless the text began with it): no entry of
// the reference matches that, the empty text included, so the comparison above can fail.
TEST(PromptReferenceControl, DemoWithConfigBosFirstMatchesNothing) {
  const PromptReference& ref = prompt_reference("demo");
  const Tokenizer& tok = prompt_tokenizer("demo");
  ASSERT_TRUE(tok.special_tokens().bos.has_value());
  const int32_t bos = *tok.special_tokens().bos;
  const auto bos_first = [&](const PromptEntry& e) {
    Ids ids{bos};
    const Ids text = tok.encode(e.text);
    if (!text.empty() && text.front() == bos) ids.clear();
    ids.insert(ids.end(), text.begin(), text.end());
    return ids;
  };
  size_t mismatched = 0;
  EXPECT_EQ(
      count_matching(ref, true, bos_first, [&](const PromptEntry&, const Ids&) { ++mismatched; }),
      0u);
  EXPECT_EQ(mismatched, ref.entries.size());
}

// Llama 3.1's post-processor puts <|begin_of_text|> first: encode(text) alone matches none of
// tokenizer(text), while it matches every add_special_tokens=False entry.
TEST(PromptReferenceControl, Llama3WithoutPostProcessorMatchesNothing) {
  const Tokenizer* tok = nullptr;
  try {
    tok = &prompt_tokenizer("llama3_1");
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  const PromptReference& ref = prompt_reference("llama3_1");
  const Encoder plain = [&](const PromptEntry& e) { return tok->encode(e.text); };
  const auto ignore = [](const PromptEntry&, const Ids&) {};
  EXPECT_EQ(count_matching(ref, true, plain, ignore), 0u);
  EXPECT_EQ(count_matching(ref, false, plain, ignore), ref.entries.size());
}

}  // namespace
}  // namespace wgx::tokenizer::test
