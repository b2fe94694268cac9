// UTF-8 helpers: validation of input text, and the repair that turns decoded bytes into valid
// UTF-8 the way Hugging Face does (Rust's from_utf8_lossy, the WHATWG TextDecoder): each maximal
// ill-formed subsequence becomes one U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wgx::tokenizer {

// The offset of the first byte that is not part of well-formed UTF-8, or nullopt when all is.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// The code point starting at text[pos] (text must be valid UTF-8) and its length in bytes.
struct CodePoint {
  char32_t value;
  size_t length;
};
CodePoint code_point_at(std::string_view text, size_t pos);
// The code point ending just before text[end] (end > 0).
CodePoint code_point_before(std::string_view text, size_t end);

// Unicode White_Space, the set Hugging Face's `\s` (Rust regex) strips for lstrip/rstrip.
bool is_white_space(char32_t c);

// Incremental repair of a byte stream into valid UTF-8. Complete characters are appended to the
// output as soon as their last byte arrives; the bytes of an unfinished character are held until
// it completes, or until a byte that cannot continue it arrives (then U+FFFD replaces them).
// Feeding everything at once and feeding it in pieces give the same text.
class Utf8Repair {
 public:
  void feed(std::string_view bytes, std::string& out);
  // Ends the stream: a held, unfinished character becomes U+FFFD.
  void finish(std::string& out);
  // True while bytes of an unfinished character are held.
  bool pending() const { return held_ > 0; }

 private:
  void feed_byte(uint8_t b, std::string& out);

  uint8_t bytes_[4] = {};
  uint8_t held_ = 0;               // bytes held in bytes_
  uint8_t need_ = 0;               // continuation bytes still to come
  uint8_t lo_ = 0x80, hi_ = 0xBF;  // the range the next continuation byte must be in
};

}  // namespace wgx::tokenizer
