// Fuzzes tokenizer.json loading, tokenizer::Tokenizer::from_json, with and without a
// tokenizer_config.json, and then the encoder and decoder of whatever tokenizer loaded, so that
// they run on odd vocabularies, merges, added tokens, normalizers and pre-tokenizer patterns.
//
// The input is tokenizer.json's text, a NUL byte, tokenizer_config.json's text (empty: there is
// none), a NUL byte and a text to encode (which may hold anything, NUL bytes included); JSON text
// holds no NUL byte. A short fixed text is encoded too, so that a mutation that drops the text
// still reaches the encoder. The text's bytes, read as little-endian int32 ids (any value), are
// decoded as well.
//
// Loading must reject a malformed file with a TokenizerError, and so must encoding text that is
// not UTF-8. What loads must encode to ids it knows, decode to valid UTF-8, and stream-decode to
// the same text as decode().
#include <cstring>
#include <optional>

#include "fuzz_util.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace wgx;
using tokenizer::Tokenizer;

constexpr std::string_view kSample = "Hello, world! <|im_start|>user\nCaf\xc3\xa9 12345 \xe4\xb8\xad  <|x|>\t'll\n";

void check_decode(const Tokenizer& tok, std::span<const int32_t> ids) {
  for (const bool skip : {false, true}) {
    const std::string text = tok.decode(ids, skip);
    fuzz::check(!tokenizer::find_invalid_utf8(text), "decode() gives invalid UTF-8");
    tokenizer::StreamDecoder stream(tok, skip);
    std::string streamed;
    for (int32_t id : ids) streamed += stream.push(id);
    streamed += stream.finish();
    fuzz::check(!stream.pending(), "the stream decoder holds bytes after finish()");
    fuzz::check(streamed == text, "the stream decoder and decode() disagree");
  }
}

void check_encode(const Tokenizer& tok, std::string_view text) {
  for (const bool allow_special : {true, false}) {
    std::vector<int32_t> ids;
    try {
      ids = tok.encode(text, allow_special);
    } catch (const tokenizer::TokenizerError&) {
      continue;  // text that is not UTF-8, or a pattern that hit PCRE2's limits
    }
    for (int32_t id : ids) {
      fuzz::check(id >= 0 && id < tok.vocab_size(), "encode() gives an id outside the vocabulary");
      fuzz::check(tok.id_to_token(id).has_value(), "encode() gives an id without a token");
      if (!allow_special) fuzz::check(!tok.is_special(id), "encode() gives a special token it was not allowed");
    }
    check_decode(tok, ids);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string_view> parts = fuzz::split(fuzz::as_text({data, size}), '\0', 3);
  std::optional<std::string_view> config;
  if (parts.size() > 1 && !parts[1].empty()) config = parts[1];
  const std::string_view text = parts.size() > 2 ? parts[2] : std::string_view();

  std::optional<Tokenizer> tok;
  try {
    tok = Tokenizer::from_json(parts[0], config, "fuzz/tokenizer.json");
  } catch (const tokenizer::TokenizerError&) {
    return 0;
  }

  const int32_t vocab = tok->vocab_size();
  const tokenizer::SpecialTokens& special = tok->special_tokens();
  for (const std::optional<int32_t>& id : {special.bos, special.eos, special.pad, special.unk}) {
    fuzz::check(!id || (*id >= 0 && *id < vocab && tok->id_to_token(*id)), "a special token's id is unknown");
  }

  check_encode(*tok, kSample);
  check_encode(*tok, text);

  std::vector<int32_t> ids(text.size() / 4);
  if (!ids.empty()) std::memcpy(ids.data(), text.data(), ids.size() * 4);
  for (int32_t id : ids) {
    const std::optional<std::string_view> token = tok->id_to_token(id);
    fuzz::check(!token || (id >= 0 && id < vocab), "id_to_token knows an id outside the vocabulary");
    fuzz::check(token || tok->token_bytes(id).empty(), "token_bytes knows an id id_to_token does not");
    if (token) fuzz::check(tok->token_to_id(*token).has_value(), "a token's string is not found again");
  }
  check_decode(*tok, ids);
  return 0;
}
