// A compiled PCRE2 pattern (UTF + UCP: \p{L}, \s and friends are Unicode-aware, as in the Onig
// patterns Hugging Face writes into tokenizer.json), JIT-compiled when the platform allows.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace wgx::tokenizer {

struct Span {
  size_t begin, end;
};

class Regex {
 public:
  // literal: match the pattern text as it is (Split's {"String": ...} form). Throws
  // std::invalid_argument with PCRE2's message and the offset in the pattern.
  Regex(std::string_view pattern, bool literal);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Replaces `out` with every match in `subject` (valid UTF-8), left to right, not overlapping.
  // Empty matches are reported too (they split text like any match); after one, the search
  // moves on by one character. Throws std::runtime_error when PCRE2 gives up (match limits).
  void find_all(std::string_view subject, std::vector<Span>& out) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace wgx::tokenizer
