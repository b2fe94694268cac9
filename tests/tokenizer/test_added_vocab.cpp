// Finding added tokens in text: the leftmost match, the longest at its position, special tokens
// only where allowed; against a direct search on random token sets over a small alphabet, and in
// time linear in the text for a long token that the text almost matches.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "tokenizer/added_vocab.h"

namespace wgx::tokenizer::test {
namespace {

struct Token {
  std::string content;
  bool special;
};

AddedVocab vocab_of(const std::vector<Token>& tokens) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    list.push_back({{"id", i}, {"content", tokens[i].content}, {"special", tokens[i].special}, {"normalized", false}});
  }
  static const std::string source = "added_tokens.json";
  return AddedVocab::parse(JsonField(list, "added_tokens", source), Normalizer());
}

// The segments by a direct search: at each position the longest allowed token starting there.
std::vector<AddedSegment> direct_split(std::string_view text, const std::vector<Token>& tokens, bool allow_special) {
  std::vector<AddedSegment> out;
  size_t done = 0, pos = 0;
  while (pos < text.size()) {
    int32_t best = -1;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if ((allow_special || !tokens[i].special) && text.substr(pos).starts_with(tokens[i].content) &&
          (best < 0 || tokens[i].content.size() > tokens[static_cast<size_t>(best)].content.size())) {
        best = static_cast<int32_t>(i);
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    if (pos > done) out.push_back({text.substr(done, pos - done), -1});
    const size_t end = pos + tokens[static_cast<size_t>(best)].content.size();
    out.push_back({text.substr(pos, end - pos), best});
    done = pos = end;
  }
  if (done < text.size()) out.push_back({text.substr(done), -1});
  return out;
}

std::string describe(const std::vector<AddedSegment>& segments) {
  std::string s;
  for (const AddedSegment& g : segments) s += "[" + std::string(g.text) + "|" + std::to_string(g.id) + "]";
  return s;
}

TEST(AddedVocab, MatchesADirectSearch) {
  std::mt19937 rng(7);
  auto random_text = [&](size_t max) {
    std::string s(std::uniform_int_distribution<size_t>(1, max)(rng), 'a');
    for (char& c : s) c = "abc"[std::uniform_int_distribution<int>(0, 2)(rng)];
    return s;
  };
  for (int round = 0; round < 300; ++round) {
    std::vector<Token> tokens;
    const int count = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int i = 0; i < count; ++i) {
      std::string content = random_text(5);
      bool repeated = false;
      for (const Token& t : tokens) repeated = repeated || t.content == content;
      if (!repeated) tokens.push_back({content, std::uniform_int_distribution<int>(0, 1)(rng) == 1});
    }
    const AddedVocab vocab = vocab_of(tokens);
    for (int text_round = 0; text_round < 10; ++text_round) {
      const std::string text = random_text(40);
      for (const bool allow_special : {true, false}) {
        std::vector<AddedSegment> got;
        vocab.split(text, AddedVocab::Pass::kRaw, allow_special, got);
        const std::vector<AddedSegment> want = direct_split(text, tokens, allow_special);
        ASSERT_EQ(describe(got), describe(want)) << "text " << text << ", round " << round;
      }
    }
  }
}

// A token the text matches all but its last byte of, at every position: a search that walks the
// token from each position takes its length there (minutes for these sizes).
TEST(AddedVocab, LongNearMatchIsLinear) {
  const std::string token = std::string(20000, 'a') + "b";
  const std::string text = std::string(200000, 'a') + token;
  const AddedVocab vocab = vocab_of({{token, true}});
  const auto start = std::chrono::steady_clock::now();
  std::vector<AddedSegment> got;
  vocab.split(text, AddedVocab::Pass::kRaw, true, got);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text.size(), 200000u);
  EXPECT_EQ(got[1].id, 0);
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace wgx::tokenizer::test
