// GPT-2's byte-level alphabet: every byte gets a printable code point, so a byte-level BPE
// vocabulary spells arbitrary bytes as ordinary text ("Ġ" is the space byte 0x20). Printable
// Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 bytes, in
// order, take U+0100 onwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wgx::tokenizer {

// The UTF-8 spelling of the code point that stands for byte b.
std::string_view byte_level_char(uint8_t b);

// Appends the byte-level spelling of raw bytes.
void append_byte_level(std::string_view bytes, std::string& out);

// The bytes a token stands for, as Hugging Face's ByteLevel decoder reads it: each character
// mapped back to its byte; a token with any character outside the alphabet (an added token such
// as "<|im_start|>" is inside it; one in Chinese would not be) keeps its own UTF-8 bytes.
std::string byte_level_bytes(std::string_view token);

}  // namespace wgx::tokenizer
