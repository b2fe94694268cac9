// The pre-tokenizer: splits normalized text into the pieces BPE encodes one by one. Supports what
// byte-level BPE tokenizers use: Sequence, Split (a regex or a literal, every split behavior,
// invert) and ByteLevel, which must come last. The pieces stay raw bytes: mapping them to the
// byte-level alphabet is the BPE model's first step.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/regex.h"

namespace wgx::tokenizer {

// Storage one split() call needs; reusing it across calls saves allocations.
struct PreTokenizerScratch {
  std::vector<std::string_view> next;
  std::vector<Span> matches;
  std::deque<std::string> owned;  // pieces that are not views of the input (a prefix space added)
};

class PreTokenizer {
 public:
  // From the "pre_tokenizer" member. Fails, naming the field, on an unknown type, a missing
  // ByteLevel step or one that is not last, or a pattern PCRE2 rejects.
  static PreTokenizer parse(const std::optional<JsonField>& config);

  // Replaces `pieces` with the pieces of `text` (valid UTF-8), in order; no piece is empty.
  // They view `text` or `scratch.owned`.
  void split(std::string_view text, std::vector<std::string_view>& pieces,
             PreTokenizerScratch& scratch) const;

  enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  struct Step {
    enum class Kind { kSplit, kByteLevel } kind;
    std::optional<Regex> regex;  // Split, or ByteLevel with use_regex
    Behavior behavior = Behavior::kIsolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel
  };

 private:
  void apply(const Step& step, std::string_view piece, PreTokenizerScratch& scratch) const;

  std::vector<Step> steps_;
};

}  // namespace wgx::tokenizer
