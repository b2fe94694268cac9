// tokenizer.json's post_processor on the tiny tokenizer: what encode(text, EncodeOptions) and
// post_process add for each supported kind, worked out by hand. Malformed ones: test_malformed.cpp.
#include <gtest/gtest.h>

#include "tiny_tokenizer.h"

namespace wgx::tokenizer::test {
namespace {

using Ids = std::vector<int32_t>;
using namespace tiny;

constexpr EncodeOptions kNoSpecialTokens{.add_special_tokens = false};

TEST(PostProcessor, NullAddsNothing) {
  const Tokenizer tok = tiny_tokenizer();
  EXPECT_EQ(tok.encode("abc", EncodeOptions{}), Ids{abc});
  EXPECT_EQ(tok.encode("abc", kNoSpecialTokens), Ids{abc});
  EXPECT_EQ(tok.encode("", EncodeOptions{}), Ids{});
  EXPECT_EQ(tok.post_process(Ids{a, b}), (Ids{a, b}));
}

TEST(PostProcessor, ByteLevelAddsNothing) {
  const Tokenizer tok = tiny_tokenizer(tiny_json_with({{"type", "ByteLevel"},
                                                       {"add_prefix_space", true},
                                                       {"trim_offsets", false},
                                                       {"use_regex", true}}));
  EXPECT_EQ(tok.encode("abc d", EncodeOptions{}), (Ids{abc, space, d}));
  EXPECT_EQ(tok.post_process(Ids{}), Ids{});
}

TEST(PostProcessor, TemplateAddsSpecialsBeforeAndAfter) {
  const Tokenizer tok = tiny_tokenizer(tiny_json_with(tiny_template({"<|x|>", "$A", "<R>"})));
  EXPECT_EQ(tok.encode("abc", EncodeOptions{}), (Ids{x_special, abc, rstrip}));
  EXPECT_EQ(tok.encode("abc", kNoSpecialTokens), Ids{abc});
  EXPECT_EQ(tok.encode("abc"), Ids{abc});  // encode(text) never runs it
  EXPECT_EQ(tok.encode("", EncodeOptions{}), (Ids{x_special, rstrip}));
  EXPECT_EQ(tok.post_process(Ids{a, b}), (Ids{x_special, a, b, rstrip}));
  // The text's own special tokens are matched, or not, before the template adds its own.
  EXPECT_EQ(tok.encode("<|x|>", EncodeOptions{}), (Ids{x_special, x_special, rstrip}));
  // Unmatched, "<|x|>" is the non-special "<|x" and "|>", which the vocabulary lacks.
  EXPECT_EQ(tok.encode("<|x|>", EncodeOptions{.allow_special = false}),
            (Ids{x_special, x_prefix, rstrip}));
}

TEST(PostProcessor, TemplateSpecialsOnOneSide) {
  EXPECT_EQ(tiny_tokenizer(tiny_json_with(tiny_template({"<|x|>", "$A"}))).post_process(Ids{d}),
            (Ids{x_special, d}));
  EXPECT_EQ(
      tiny_tokenizer(tiny_json_with(tiny_template({"$A", "<R>", "<L>"}))).post_process(Ids{d}),
      (Ids{d, rstrip, lstrip}));
  EXPECT_EQ(tiny_tokenizer(tiny_json_with(tiny_template({"$A"}))).post_process(Ids{d}), Ids{d});
}

// A special token of the template may stand for several ids; they go in in order.
TEST(PostProcessor, SpecialTokenWithSeveralIds) {
  nlohmann::json pp = tiny_template({"<|x|>", "$A"});
  pp["special_tokens"]["<|x|>"]["ids"] = {x_special, lstrip, x_prefix};
  pp["special_tokens"]["<|x|>"]["tokens"] = {"<|x|>", "<L>", "<|x"};
  EXPECT_EQ(tiny_tokenizer(tiny_json_with(pp)).post_process(Ids{e}),
            (Ids{x_special, lstrip, x_prefix, e}));
}

// Each processor of a Sequence takes the previous one's output: the second template's <L> ends
// up outside the first's <|x|>.
TEST(PostProcessor, SequenceAppliesInOrder) {
  const nlohmann::json byte_level = {{"type", "ByteLevel"},
                                     {"add_prefix_space", false},
                                     {"trim_offsets", false},
                                     {"use_regex", false}};
  const nlohmann::json first = tiny_template({"<|x|>", "$A"});
  const nlohmann::json second = tiny_template({"<L>", "$A", "<R>"});
  const Tokenizer tok = tiny_tokenizer(
      tiny_json_with({{"type", "Sequence"}, {"processors", {byte_level, first, second}}}));
  EXPECT_EQ(tok.encode("ab", EncodeOptions{}), (Ids{lstrip, x_special, ab, rstrip}));
  EXPECT_EQ(tok.encode("ab", kNoSpecialTokens), Ids{ab});
  const Tokenizer reversed = tiny_tokenizer(
      tiny_json_with({{"type", "Sequence"}, {"processors", {second, byte_level, first}}}));
  EXPECT_EQ(reversed.encode("ab", EncodeOptions{}), (Ids{x_special, lstrip, ab, rstrip}));
  // Sequences inside a Sequence, and an empty one.
  const Tokenizer nested = tiny_tokenizer(
      tiny_json_with({{"type", "Sequence"},
                      {"processors",
                       {{{"type", "Sequence"}, {"processors", {first}}},
                        {{"type", "Sequence"}, {"processors", nlohmann::json::array()}}}}}));
  EXPECT_EQ(nested.post_process(Ids{c}), (Ids{x_special, c}));
}

TEST(PostProcessor, BertAndRoberta) {
  const Tokenizer bert = tiny_tokenizer(tiny_json_with(
      {{"type", "BertProcessing"}, {"sep", {"<R>", rstrip}}, {"cls", {"<|x|>", x_special}}}));
  EXPECT_EQ(bert.encode("abc", EncodeOptions{}), (Ids{x_special, abc, rstrip}));
  EXPECT_EQ(bert.encode("abc", kNoSpecialTokens), Ids{abc});
  EXPECT_EQ(bert.post_process(Ids{}), (Ids{x_special, rstrip}));

  const Tokenizer roberta = tiny_tokenizer(tiny_json_with({{"type", "RobertaProcessing"},
                                                           {"sep", {"<L>", lstrip}},
                                                           {"cls", {"<R>", rstrip}},
                                                           {"trim_offsets", true},
                                                           {"add_prefix_space", true}}));
  EXPECT_EQ(roberta.encode("cd", EncodeOptions{}), (Ids{rstrip, cd, lstrip}));
  EXPECT_EQ(roberta.encode("cd", kNoSpecialTokens), Ids{cd});
}

// tokenizer_config.json's add_bos_token / add_eos_token do not change tokenizer(text): with a
// tokenizer.json, transformers drops them and follows the file's post-processor.
TEST(PostProcessor, ConfigAddBosTokenChangesNothing) {
  const std::string config =
      R"({"bos_token": "<|x|>", "eos_token": "<R>", "add_bos_token": true, "add_eos_token": true})";
  const Tokenizer plain = Tokenizer::from_json(tiny_json().dump(), config, "tiny.json");
  EXPECT_EQ(plain.special_tokens().bos, x_special);
  EXPECT_EQ(plain.encode("abc", EncodeOptions{}), Ids{abc});
  const std::string no_bos = R"({"bos_token": "<|x|>", "add_bos_token": false})";
  const Tokenizer templated = Tokenizer::from_json(
      tiny_json_with(tiny_template({"<|x|>", "$A"})).dump(), no_bos, "tiny.json");
  EXPECT_EQ(templated.encode("abc", EncodeOptions{}), (Ids{x_special, abc}));
}

}  // namespace
}  // namespace wgx::tokenizer::test
