// Added tokens ("added_tokens" in tokenizer.json: <|im_start|>, <|eot_id|>, <think>...): found in
// the text before pre-tokenization, leftmost first and longest at a position, and each encoded as
// its one id. Like Hugging Face: tokens with normalized=false match the raw text, the others
// match the normalized text; lstrip/rstrip take the whitespace beside a match into it; a
// single_word token only matches where no word character touches it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/normalizer.h"

namespace wgx::tokenizer {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool single_word = false;
};

// A piece of text between added tokens (id -1), or one added token.
struct AddedSegment {
  std::string_view text;
  int32_t id;
};

class AddedVocab {
 public:
  // From "added_tokens" (nullopt: none). Normalized tokens are matched in their normalized form.
  static AddedVocab parse(const std::optional<JsonField>& list, const Normalizer& normalizer);

  const std::vector<AddedToken>& tokens() const { return tokens_; }

  enum class Pass { kRaw, kNormalized };
  bool has(Pass pass) const { return !matchers_[index(pass)].nodes.empty(); }
  // Replaces `out` with the segments of `text`, in order. Without allow_special, special tokens
  // are not matched (their text is encoded as ordinary text); the others still are.
  void split(std::string_view text, Pass pass, bool allow_special,
             std::vector<AddedSegment>& out) const;

 private:
  // An Aho-Corasick automaton over the token contents reversed. Run over a text from its end, it
  // gives for every position the longest token starting there, in time linear in the text (a
  // trie walked forward from each position would take up to the longest token's length at each:
  // quadratic for a long token that the text almost matches). The root's transitions are a table.
  struct Matcher {
    struct Node {
      std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
      int32_t token = -1;                                 // index into tokens_
      int32_t depth = 0;                                  // the key's length so far
      int32_t fail = 0;  // the node of the longest proper suffix that is also a key's prefix
      // The node of the longest whole key among this node's and its fail chain's: [0] any
      // token, [1] no special token; -1 when there is none.
      std::array<int32_t, 2> longest = {-1, -1};
    };
    std::vector<Node> nodes;  // nodes[0] is the root
    std::array<int32_t, 256> first{};
    void insert(std::string_view key, int32_t token);  // key as it is; stored reversed
    // Links the automaton once every key is in.
    void finish(const std::vector<AddedToken>& tokens);
    int32_t child(int32_t node, uint8_t b) const;
    int32_t step(int32_t node, uint8_t b) const;  // the automaton's transition
  };
  static size_t index(Pass pass) { return pass == Pass::kRaw ? 0 : 1; }

  std::vector<AddedToken> tokens_;
  std::array<Matcher, 2> matchers_;
};

}  // namespace wgx::tokenizer
