#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace wgx::tokenizer {

namespace {
constexpr bool stands_for_itself(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Alphabet {
  std::array<char32_t, 256> code_point{};
  std::array<std::string, 256> utf8;
  std::array<int16_t, 512> byte_of{};  // code point -> byte, -1 outside; all are below 512

  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 256;
    for (unsigned b = 0; b < 256; ++b) {
      const char32_t c = stands_for_itself(b) ? b : next++;
      code_point[b] = c;
      byte_of[c] = static_cast<int16_t>(b);
      // Every code point here is below U+0800: one or two UTF-8 bytes.
      utf8[b] = c < 0x80 ? std::string(1, static_cast<char>(c))
                         : std::string{static_cast<char>(0xC0 | (c >> 6)),
                                       static_cast<char>(0x80 | (c & 0x3F))};
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}
}  // namespace

std::string_view byte_level_char(uint8_t b) { return alphabet().utf8[b]; }

void append_byte_level(std::string_view bytes, std::string& out) {
  const Alphabet& a = alphabet();
  for (const char c : bytes) out += a.utf8[static_cast<uint8_t>(c)];
}

std::string byte_level_bytes(std::string_view token) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(token.size());
  // A token that is not valid UTF-8 cannot come from JSON; keep it as it is all the same.
  if (find_invalid_utf8(token)) return std::string(token);
  for (size_t i = 0; i < token.size();) {
    const CodePoint cp = code_point_at(token, i);
    if (cp.value >= a.byte_of.size() || a.byte_of[cp.value] < 0) return std::string(token);
    out += static_cast<char>(a.byte_of[cp.value]);
    i += cp.length;
  }
  return out;
}

}  // namespace wgx::tokenizer
