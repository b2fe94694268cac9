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
  bool has(Pass pass) const { return !tries_[index(pass)].nodes.empty(); }
  // Replaces `out` with the segments of `text`, in order. Without allow_special, special tokens
  // are not matched (their text is encoded as ordinary text); the others still are.
  void split(std::string_view text, Pass pass, bool allow_special,
             std::vector<AddedSegment>& out) const;

 private:
  // A byte trie over token contents; the root's children are a table for a quick miss.
  struct Trie {
    struct Node {
      std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
      int32_t token = -1;                                 // index into tokens_
    };
    std::vector<Node> nodes;  // nodes[0] is the root
    std::array<int32_t, 256> first{};
    void insert(std::string_view key, int32_t token);
    int32_t child(int32_t node, uint8_t b) const;
  };
  static size_t index(Pass pass) { return pass == Pass::kRaw ? 0 : 1; }

  std::vector<AddedToken> tokens_;
  std::array<Trie, 2> tries_;
};

}  // namespace wgx::tokenizer
