#include "tokenizer/utf8.h"

namespace wgx::tokenizer {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// What a lead byte promises (Unicode Table 3-7, well-formed byte sequences): how many
// continuation bytes follow and the range of the first one. need 0xFF: not a lead byte.
struct Lead {
  uint8_t need, lo, hi;
};
constexpr Lead lead_of(uint8_t b) {
  if (b < 0x80) return {0, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {1, 0x80, 0xBF};
  if (b == 0xE0) return {2, 0xA0, 0xBF};  // no overlong forms
  if (b == 0xED) return {2, 0x80, 0x9F};  // no surrogates
  if (b >= 0xE1 && b <= 0xEF) return {2, 0x80, 0xBF};
  if (b == 0xF0) return {3, 0x90, 0xBF};  // no overlong forms
  if (b == 0xF4) return {3, 0x80, 0x8F};  // nothing above U+10FFFF
  if (b >= 0xF1 && b <= 0xF3) return {3, 0x80, 0xBF};
  return {0xFF, 0, 0};  // 80..C1 (continuation or overlong lead), F5..FF
}
}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    const Lead lead = lead_of(b);
    if (lead.need == 0xFF || i + lead.need >= n) return i;
    const auto b1 = static_cast<uint8_t>(text[i + 1]);
    if (b1 < lead.lo || b1 > lead.hi) return i;
    for (size_t k = 2; k <= lead.need; ++k) {
      const auto c = static_cast<uint8_t>(text[i + k]);
      if (c < 0x80 || c > 0xBF) return i;
    }
    i += 1 + lead.need;
  }
  return std::nullopt;
}

CodePoint code_point_at(std::string_view text, size_t pos) {
  const auto b = static_cast<uint8_t>(text[pos]);
  if (b < 0x80) return {b, 1};
  const size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
  char32_t c = b & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<uint8_t>(text[pos + k]) & 0x3F);
  return {c, len};
}

CodePoint code_point_before(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
  return code_point_at(text, start);
}

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

void Utf8Repair::feed_byte(uint8_t b, std::string& out) {
  if (held_ > 0) {
    if (b >= lo_ && b <= hi_) {
      bytes_[held_++] = b;
      lo_ = 0x80;
      hi_ = 0xBF;
      if (--need_ == 0) {
        out.append(reinterpret_cast<const char*>(bytes_), held_);
        held_ = 0;
      }
      return;
    }
    // The held bytes are a maximal ill-formed subsequence: one U+FFFD, then b starts afresh.
    out += kReplacement;
    held_ = 0;
  }
  const Lead lead = lead_of(b);
  if (lead.need == 0) {
    out += static_cast<char>(b);
  } else if (lead.need == 0xFF) {
    out += kReplacement;
  } else {
    bytes_[0] = b;
    held_ = 1;
    need_ = lead.need;
    lo_ = lead.lo;
    hi_ = lead.hi;
  }
}

void Utf8Repair::feed(std::string_view bytes, std::string& out) {
  for (const char c : bytes) feed_byte(static_cast<uint8_t>(c), out);
}

void Utf8Repair::finish(std::string& out) {
  if (held_ > 0) out += kReplacement;
  held_ = 0;
}

}  // namespace wgx::tokenizer
