// Qwen3 and Llama 3.1 against their reference implementation: every corpus text must encode to
// exactly the reference ids, and decoding (one-shot and streaming) must give the reference text.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "reference_data.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace wgx::tokenizer::test {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

class ReferenceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      tokenizer_ = &reference_tokenizer(GetParam());
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }
  const Reference& ref() const { return reference(GetParam()); }
  const Tokenizer& tok() const { return *tokenizer_; }

 private:
  const Tokenizer* tokenizer_ = nullptr;
};

TEST_P(ReferenceTest, CorpusIdsMatchExactly) {
  size_t matched = 0;
  for (const ReferenceEntry& e : ref().entries) {
    const std::vector<int32_t> ids = tok().encode(e.text);
    EXPECT_EQ(ids, e.ids) << GetParam() << " corpus entry \"" << e.name << "\"";
    matched += ids == e.ids;
  }
  std::printf("[ %s ] %zu of %zu corpus texts encode to exactly the reference ids\n",
              GetParam().c_str(), matched, ref().entries.size());
  EXPECT_GE(ref().entries.size(), 60u);
}

TEST_P(ReferenceTest, DecodeMatchesReference) {
  for (const ReferenceEntry& e : ref().entries) {
    EXPECT_EQ(tok().decode(e.ids), e.decoded) << "entry \"" << e.name << "\"";
    EXPECT_EQ(tok().decode(e.ids, /*skip_special=*/true), e.decoded_skip_special)
        << "entry \"" << e.name << "\"";
  }
}

// decode(encode(x)) == x wherever Hugging Face gives it back: everywhere except where the
// normalizer changes the text (Qwen's NFC on decomposed accents).
TEST_P(ReferenceTest, RoundTripWhereReferenceDoes) {
  size_t checked = 0;
  for (const ReferenceEntry& e : ref().entries) {
    if (e.decoded != e.text) continue;
    EXPECT_EQ(tok().decode(tok().encode(e.text)), e.text) << "entry \"" << e.name << "\"";
    ++checked;
  }
  EXPECT_GE(checked, ref().entries.size() - 3);
}

// After every prefix of the ids, the streamed text plus a U+FFFD for a held, unfinished character
// is exactly decode() of that prefix; finish() completes it to the full decode.
void expect_stream_matches(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skip_special,
                           const std::string& what) {
  StreamDecoder stream(tok, skip_special);
  std::string streamed;
  for (size_t k = 0; k < ids.size(); ++k) {
    streamed += stream.push(ids[k]);
    const std::vector<int32_t> prefix(ids.begin(), ids.begin() + static_cast<long>(k) + 1);
    const std::string expected = tok.decode(prefix, skip_special);
    ASSERT_EQ(streamed + std::string(stream.pending() ? kReplacement : ""), expected)
        << what << ", after " << k + 1 << " ids";
  }
  streamed += stream.finish();
  EXPECT_EQ(streamed, tok.decode(ids, skip_special)) << what;
  EXPECT_FALSE(stream.pending());
}

TEST_P(ReferenceTest, StreamingEqualsOneShotForEveryPrefix) {
  for (const ReferenceEntry& e : ref().entries) {
    expect_stream_matches(tok(), e.ids, false, "entry \"" + e.name + "\"");
    expect_stream_matches(tok(), e.ids, true, "entry \"" + e.name + "\" skipping special tokens");
  }
}

// Arbitrary id sequences split characters anywhere and form invalid UTF-8; the output must still
// be valid UTF-8 and the stream must agree with the one-shot decode.
TEST_P(ReferenceTest, RandomIdsDecodeToValidUtf8) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> any_id(-5, tok().vocab_size() + 5);
  for (int round = 0; round < 200; ++round) {
    std::vector<int32_t> ids(1 + round % 17);
    for (int32_t& id : ids) id = any_id(rng);
    const std::string text = tok().decode(ids);
    EXPECT_FALSE(find_invalid_utf8(text).has_value()) << "round " << round;
    expect_stream_matches(tok(), ids, false, "round " + std::to_string(round));
  }
}

// Splitting a character across tokens: the stream holds it back until its last byte arrives.
TEST_P(ReferenceTest, StreamHoldsSplitCharacters) {
  // The emoji as four single-byte tokens (each byte's symbol in the byte-level alphabet).
  const std::string emoji = "\xF0\x9F\x98\x80";
  std::vector<int32_t> ids;
  for (const char c : emoji) {
    const auto id = tok().token_to_id(byte_level_char(static_cast<uint8_t>(c)));
    ASSERT_TRUE(id.has_value());
    ids.push_back(*id);
  }
  StreamDecoder stream(tok());
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(ids[1]), "");
  EXPECT_EQ(stream.push(ids[2]), "");
  EXPECT_TRUE(stream.pending());
  EXPECT_EQ(stream.push(ids[3]), emoji);
  EXPECT_FALSE(stream.pending());
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.finish(), kReplacement);  // an unfinished character at the end
}

// Special tokens in untrusted text: with allow_special=false their text is ordinary text.
TEST_P(ReferenceTest, AllowSpecialFalseEncodesSpecialTextAsText) {
  const std::string text = "<|im_start|>user<|im_end|><|begin_of_text|><|eot_id|>";
  const std::vector<int32_t> plain = tok().encode(text, /*allow_special=*/false);
  for (const int32_t id : plain) EXPECT_FALSE(tok().is_special(id)) << id;
  EXPECT_EQ(tok().decode(plain), text);
  EXPECT_NE(plain, tok().encode(text));
}

// A Tokenizer is shared by threads: each encode() keeps its scratch to itself.
TEST_P(ReferenceTest, ConcurrentEncodesAgree) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 5; ++round) {
        for (const ReferenceEntry& e : ref().entries) mismatches += tok().encode(e.text) != e.ids;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(ReferenceTest, LongRunsDoNotBreak) {
  for (const std::string& text :
       {std::string(1 << 20, ' '), std::string(200000, 'a'), std::string(100000, '7'),
        std::string(100000, '\n'), std::string(50000, '!') + "x"}) {
    const std::vector<int32_t> ids = tok().encode(text);
    EXPECT_EQ(tok().decode(ids), text) << text.size() << " bytes starting " << text.substr(0, 8);
  }
}

TEST_P(ReferenceTest, InvalidUtf8InputIsRejected) {
  try {
    tok().encode("abc\xC3(def");
    FAIL() << "expected a TokenizerError";
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8 (at byte 3)"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ReferenceTest, ::testing::Values("qwen3", "llama3_1"),
                         [](const auto& param_info) { return param_info.param; });

// What each file and its tokenizer_config.json say, checked by hand against the files.
TEST(ReferenceFacts, Qwen3) {
  const Tokenizer* tok = nullptr;
  try {
    tok = &reference_tokenizer("qwen3");
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(tok->vocab_size(), 151669);
  EXPECT_EQ(tok->token_to_id("<|im_start|>"), 151644);
  EXPECT_EQ(tok->token_to_id("<think>"), 151667);
  EXPECT_EQ(tok->token_to_id("\xC4\xA0the"), 279);  // "Ġthe"
  EXPECT_EQ(tok->id_to_token(151645), "<|im_end|>");
  EXPECT_TRUE(tok->is_special(151645));
  EXPECT_FALSE(tok->is_special(151667));  // <think> is added but not special
  EXPECT_EQ(tok->encode("<think>", /*allow_special=*/false), std::vector<int32_t>{151667});
  EXPECT_EQ(tok->token_bytes(279), " the");
  EXPECT_FALSE(tok->special_tokens().bos.has_value());
  EXPECT_EQ(tok->special_tokens().eos, 151645);
  EXPECT_EQ(tok->special_tokens().pad, 151643);
  EXPECT_EQ(tok->decode(std::vector<int32_t>{151936, 9707, -1}),
            "Hello");  // unknown ids are skipped
}

TEST(ReferenceFacts, Llama3_1) {
  const Tokenizer* tok = nullptr;
  try {
    tok = &reference_tokenizer("llama3_1");
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(tok->vocab_size(), 128256);
  EXPECT_EQ(tok->special_tokens().bos, 128000);
  EXPECT_EQ(tok->special_tokens().eos, 128009);
  EXPECT_EQ(tok->token_to_id("<|eot_id|>"), 128009);
  EXPECT_EQ(tok->id_to_token(128255), "<|reserved_special_token_250|>");
  EXPECT_TRUE(tok->is_special(128000));
  EXPECT_EQ(tok->encode("Hello"), std::vector<int32_t>{9906});
}

}  // namespace
}  // namespace wgx::tokenizer::test
