// UTF-8 repair (the U+FFFD rules decode and the stream decoder share), input validation and
// the byte-level alphabet.
#include <gtest/gtest.h>

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace wgx::tokenizer {
namespace {

const std::string kR = "\xEF\xBF\xBD";  // U+FFFD

std::string repair(std::string_view bytes) {
  Utf8Repair r;
  std::string out;
  r.feed(bytes, out);
  r.finish(out);
  return out;
}

// Expected outputs follow the WHATWG decoder (and Rust's from_utf8_lossy): one U+FFFD per
// maximal subpart of an ill-formed sequence.
TEST(Utf8Repair, ReplacesMaximalSubparts) {
  EXPECT_EQ(repair("plain ascii"), "plain ascii");
  EXPECT_EQ(repair("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(repair("\xC3"), kR);  // unfinished at the end
  EXPECT_EQ(repair("\xE2\x82"
                   "A"),
            kR + "A");  // a valid prefix, then not a continuation
  EXPECT_EQ(repair("\xF0\x9F\x98"
                   "x"),
            kR + "x");                                       // three bytes of four: one replacement
  EXPECT_EQ(repair("\x80"), kR);                             // a lone continuation byte
  EXPECT_EQ(repair("\xC0\xAF"), kR + kR);                    // overlong lead: each byte alone
  EXPECT_EQ(repair("\xE0\x80\x80"), kR + kR + kR);           // E0 needs A0..BF next
  EXPECT_EQ(repair("\xED\xA0\x80"), kR + kR + kR);           // a surrogate
  EXPECT_EQ(repair("\xF4\x90\x80\x80"), kR + kR + kR + kR);  // above U+10FFFF
  EXPECT_EQ(repair("\xFF"
                   "a\xFE"),
            kR + "a" + kR);
  EXPECT_EQ(repair("\xE4\xB8"
                   "\xE4\xB8\x96"),
            kR + "\xE4\xB8\x96");  // 世 after a broken 世
}

// Feeding in pieces gives what feeding at once gives, for every split point.
TEST(Utf8Repair, PiecewiseEqualsWhole) {
  const std::vector<std::string> samples = {
      "\xF0\x9F\x98\x80\xE4\xB8\x96\xC3\xA9",
      "a\xF0\x9F\x98"
      "b\xC3",
      "\xED\xA0\x80\xE0\xA0\x80\xF4\x8F\xBF\xBF\xF4\x90",
      "\xC2\xC2\xA9\x80\xE2\x82\xAC\xE2",
  };
  for (const std::string& s : samples) {
    const std::string whole = repair(s);
    for (size_t cut = 0; cut <= s.size(); ++cut) {
      for (size_t cut2 = cut; cut2 <= s.size(); ++cut2) {
        Utf8Repair r;
        std::string out;
        r.feed(s.substr(0, cut), out);
        r.feed(s.substr(cut, cut2 - cut), out);
        r.feed(s.substr(cut2), out);
        r.finish(out);
        EXPECT_EQ(out, whole) << "cut at " << cut << " and " << cut2;
      }
    }
  }
}

TEST(Utf8Repair, HoldsOnlyUnfinishedCharacters) {
  Utf8Repair r;
  std::string out;
  r.feed("ab\xE4", out);
  EXPECT_EQ(out, "ab");
  EXPECT_TRUE(r.pending());
  r.feed("\xB8", out);
  EXPECT_EQ(out, "ab");
  r.feed("\x96", out);
  EXPECT_EQ(out, "ab\xE4\xB8\x96");
  EXPECT_FALSE(r.pending());
}

TEST(Utf8Validation, FindsTheFirstBadByte) {
  EXPECT_EQ(find_invalid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::nullopt);
  EXPECT_EQ(find_invalid_utf8(std::string("a\0b", 3)), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("ab\xC3"), 2u);
  EXPECT_EQ(find_invalid_utf8("ab\xC3"
                              "c"),
            2u);
  EXPECT_EQ(find_invalid_utf8("\xED\xA0\x80"), 0u);
  EXPECT_EQ(find_invalid_utf8("x\xF0\x9F\x98"), 1u);
  EXPECT_EQ(find_invalid_utf8("\xC1\x81"), 0u);
}

TEST(ByteLevel, Gpt2Alphabet) {
  EXPECT_EQ(byte_level_char(' '), "\xC4\xA0");   // Ġ U+0120
  EXPECT_EQ(byte_level_char('\n'), "\xC4\x8A");  // Ċ U+010A
  EXPECT_EQ(byte_level_char('\t'), "\xC4\x89");  // ĉ U+0109
  EXPECT_EQ(byte_level_char(0x00), "\xC4\x80");  // Ā U+0100
  EXPECT_EQ(byte_level_char(0x7F), "\xC4\xA1");  // ġ U+0121, after the 33 bytes 0x00..0x20
  EXPECT_EQ(byte_level_char(0xAD), "\xC5\x83");  // Ń U+0143, the last one
  EXPECT_EQ(byte_level_char('a'), "a");
  EXPECT_EQ(byte_level_char(0xE9), "\xC3\xA9");  // é stands for itself
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_EQ(byte_level_bytes(byte_level_char(static_cast<uint8_t>(b))), one) << b;
  }
  EXPECT_EQ(byte_level_bytes("\xC4\xA0the"), " the");
  EXPECT_EQ(byte_level_bytes("<|im_start|>"), "<|im_start|>");
  EXPECT_EQ(byte_level_bytes("\xE4\xB8\x96"), "\xE4\xB8\x96");  // outside the alphabet: as it is
}

}  // namespace
}  // namespace wgx::tokenizer
