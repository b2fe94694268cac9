// The BPE core, added tokens and pre-tokenizer on the tiny hand-written tokenizer, where each
// expected id list is worked out by hand from the merge ranks.
#include <gtest/gtest.h>

#include "tiny_tokenizer.h"
#include "tokenizer/pre_tokenizer.h"

namespace wgx::tokenizer::test {
namespace {

using Ids = std::vector<int32_t>;
using namespace tiny;

TEST(TinyBpe, MergesApplyInRankOrder) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("abcd"), (Ids{ab, cd}));  // c+d (rank 0) before a+b: abc+d never applies
  EXPECT_EQ(tok.encode("abc"), (Ids{abc}));
  EXPECT_EQ(tok.encode("bcd"), (Ids{b, cd}));      // c+d beats b+c
  EXPECT_EQ(tok.encode(" ab"), (Ids{space, ab}));  // a+b beats Ġ+a, and Ġ+ab is no merge
  EXPECT_EQ(tok.encode(" a"), (Ids{space_a}));
  EXPECT_EQ(tok.encode(" aa"), (Ids{space_a, a}));  // Ġ+a (rank 4) before a+a (rank 5)
  EXPECT_EQ(tok.encode("12"), (Ids{twelve}));
  EXPECT_EQ(tok.encode(""), Ids{});
}

TEST(TinyBpe, EqualRanksMergeLeftmostFirst) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("aaa"), (Ids{aa, a}));
  EXPECT_EQ(tok.encode("aaaa"), (Ids{aa, aa}));
  EXPECT_EQ(tok.encode("aaaaa"), (Ids{aa, aa, a}));
}

TEST(TinyBpe, LongPiecesUseTheSameOrder) {
  const Tokenizer tok = tiny_tokenizer();
  std::string text;
  Ids expected;
  for (int i = 0; i < 3000; ++i) {
    text += "ab";
    expected.push_back(ab);
  }
  EXPECT_EQ(tok.encode(text), expected);
  const Ids as = tok.encode(std::string(5001, 'a'));
  ASSERT_EQ(as.size(), 2501u);
  EXPECT_EQ(as.back(), a);
  EXPECT_EQ(std::count(as.begin(), as.end(), aa), 2500);
}

TEST(TinyBpe, IgnoreMergesTakesWholeVocabularyPieces) {
  nlohmann::json json = tiny_json();
  json["model"]["ignore_merges"] = true;
  const Tokenizer tok = tiny_tokenizer(json);
  EXPECT_EQ(tok.encode("abcd"), (Ids{abcd}));  // a vocabulary token, though the merges say ab|cd
  EXPECT_EQ(tok.encode("bcd"), (Ids{b, cd}));  // not in the vocabulary: merges as usual
}

TEST(TinyBpe, MergesInTheOlderStringForm) {
  nlohmann::json json = tiny_json();
  nlohmann::json merges = nlohmann::json::array({"#version: 0.2"});  // a merges.txt header: no rank
  for (const auto& m : json["model"]["merges"])
    merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
  json["model"]["merges"] = merges;
  const Tokenizer tok = tiny_tokenizer(json);
  EXPECT_EQ(tok.encode("abcd"), (Ids{ab, cd}));
  EXPECT_EQ(tok.encode(" aa"), (Ids{space_a, a}));
}

TEST(TinyBpe, BytesMissingFromTheVocabulary) {
  // Without an unknown token they are dropped (as in Hugging Face); the rest still merges.
  EXPECT_EQ(tiny_tokenizer().encode("aZb"), (Ids{ab}));
  nlohmann::json json = tiny_json();
  json["model"]["unk_token"] = "<unk>";
  EXPECT_EQ(tiny_tokenizer(json).encode("aZZb"), (Ids{a, unk, unk, b}));
  json["model"]["fuse_unk"] = true;
  EXPECT_EQ(tiny_tokenizer(json).encode("aZZb"), (Ids{a, unk, b}));
}

TEST(TinyBpe, DecodeMapsByteLevelBack) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.decode(Ids{ab, cd, space_ab, newline}), "abcd ab\n");
  EXPECT_EQ(tok.decode(Ids{e_acute}), "\xC3\xA9");
  EXPECT_EQ(tok.decode(Ids{10}), "\xEF\xBF\xBD");  // a lone lead byte
  EXPECT_EQ(tok.decode(Ids{a, x_special, b}), "a<|x|>b");
  EXPECT_EQ(tok.decode(Ids{a, x_special, b}, /*skip_special=*/true), "ab");
  EXPECT_EQ(tok.decode(Ids{a, 999, -3, b}), "ab");  // unknown ids are skipped
  EXPECT_EQ(tok.vocab_size(), 106);
  EXPECT_EQ(tok.id_to_token(ab), "ab");
  EXPECT_EQ(tok.id_to_token(12), std::nullopt);  // a hole in the ids
  EXPECT_EQ(tok.token_to_id("<|x"), x_prefix);
  EXPECT_EQ(tok.token_to_id("nope"), std::nullopt);
}

TEST(TinyNormalizer, NfcBeforeBpe) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("e\xCC\x81"), (Ids{e_acute}));  // e + U+0301 composes to é
  EXPECT_EQ(tok.encode("\xC3\xA9"), (Ids{e_acute}));
  nlohmann::json json = tiny_json();
  json["normalizer"] = nullptr;
  EXPECT_EQ(tiny_tokenizer(json).encode("e\xCC\x81").front(), e);
}

TEST(TinyAddedTokens, LongestMatchFirst) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("a<|x|>b"), (Ids{a, x_special, b}));
  EXPECT_EQ(tok.encode("a<|xb"), (Ids{a, x_prefix, b}));
  EXPECT_EQ(tok.encode("<|x|><|x|>"), (Ids{x_special, x_special}));
}

TEST(TinyAddedTokens, AllowSpecialFalseSkipsOnlySpecialTokens) {
  const Tokenizer tok = tiny_tokenizer();
  // <|x|> is special: not matched; the non-special <|x is, and the rest is ordinary text
  // ("|>" has no symbols in the tiny vocabulary, so it vanishes).
  EXPECT_EQ(tok.encode("a<|x|>b", /*allow_special=*/false), (Ids{a, x_prefix, b}));
}

TEST(TinyAddedTokens, LstripAndRstripTakeTheWhitespace) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("a \t <L> b"), (Ids{a, lstrip, space, b}));
  EXPECT_EQ(tok.encode("a <R> \n b"), (Ids{a, space, rstrip, b}));
  // lstrip stops at the previous added token.
  EXPECT_EQ(tok.encode("<R> <L>"), (Ids{rstrip, lstrip}));
  EXPECT_EQ(tok.encode("<|x|> <L>"), (Ids{x_special, lstrip}));
}

TEST(TinyAddedTokens, SingleWordNeedsNoWordCharacterBeside) {
  const Tokenizer tok = tiny_tokenizer();
  const auto has_word = [&](std::string_view text) {
    const Ids ids = tok.encode(text);
    return std::find(ids.begin(), ids.end(), word) != ids.end();
  };
  EXPECT_TRUE(has_word("<W>"));
  EXPECT_TRUE(has_word("a <W> b"));
  EXPECT_TRUE(has_word("-<W>-"));
  EXPECT_FALSE(has_word("a<W> b"));
  EXPECT_FALSE(has_word("a <W>b"));
  EXPECT_FALSE(has_word("\xC3\xA9<W>"));  // é is a letter too
}

TEST(TinyAddedTokens, NormalizedTokensMatchNormalizedText) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("a<e\xCC\x81>b"), (Ids{a, normalized, b}));  // NFC makes it <é>
  EXPECT_EQ(tok.encode("a<\xC3\xA9>b"), (Ids{a, normalized, b}));
}

// The pre-tokenizer on its own, with each split behavior (examples from Hugging Face's docs).
std::vector<std::string> split_with(const nlohmann::json& split, std::string_view text) {
  const nlohmann::json config = {
      {"type", "Sequence"},
      {"pretokenizers",
       {split, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  const std::string source = "test";
  const PreTokenizer pre = PreTokenizer::parse(JsonField(config, "pre_tokenizer", source));
  std::vector<std::string_view> pieces;
  PreTokenizerScratch scratch;
  pre.split(text, pieces, scratch);
  return {pieces.begin(), pieces.end()};
}

TEST(TinyPreTokenizer, SplitBehaviors) {
  using V = std::vector<std::string>;
  const auto split = [](const char* behavior) {
    return split_with({{"type", "Split"},
                       {"pattern", {{"String", "-"}}},
                       {"behavior", behavior},
                       {"invert", false}},
                      "the-final--countdown");
  };
  EXPECT_EQ(split("Isolated"), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split("Removed"), (V{"the", "final", "countdown"}));
  EXPECT_EQ(split("MergedWithPrevious"), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithNext"), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split("Contiguous"), (V{"the", "-", "final", "--", "countdown"}));
}

TEST(TinyPreTokenizer, InvertKeepsTheMatches) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_with({{"type", "Split"},
                        {"pattern", {{"Regex", "\\p{L}+"}}},
                        {"behavior", "Removed"},
                        {"invert", true}},
                       "ab, cd!"),
            (V{"ab", "cd"}));
}

TEST(TinyPreTokenizer, ByteLevelWithGpt2RegexAndPrefixSpace) {
  using V = std::vector<std::string>;
  const nlohmann::json config = {
      {"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  const std::string source = "test";
  const PreTokenizer pre = PreTokenizer::parse(JsonField(config, "pre_tokenizer", source));
  std::vector<std::string_view> pieces;
  PreTokenizerScratch scratch;
  pre.split("hello world's  42!", pieces, scratch);
  EXPECT_EQ(V(pieces.begin(), pieces.end()), (V{" hello", " world", "'s", " ", " 42", "!"}));
}

}  // namespace
}  // namespace wgx::tokenizer::test
