// A Hugging Face tokenizer.json byte-level BPE tokenizer (Llama 3, Qwen2/Qwen3): text to token
// ids and back, with the same ids as Hugging Face `tokenizers`.
//
//   auto tok = wgx::tokenizer::Tokenizer::load("models/Qwen3-0.6B");   // or .../tokenizer.json
//   std::vector<int32_t> ids = tok.encode("<|im_start|>user\nHi<|im_end|>");
//   std::vector<int32_t> prompt = tok.encode("Once upon a time", EncodeOptions{});
//   std::string text = tok.decode(ids);
//
// encode(text) runs the added tokens, normalizer, pre-tokenizer and BPE model of the file; it does
// not run the post-processor (Llama 3's adds <|begin_of_text|>): like HF's
// encode(text, add_special_tokens=False), the text is encoded as it is, which is what a chat
// template's text wants (it holds its special tokens). encode(text, EncodeOptions{}) is HF's
// tokenizer(text).input_ids: the post-processor's tokens added, for a plain prompt. A Tokenizer is
// immutable, cheap to copy (the tables are shared) and safe to use from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/error.h"
#include "tokenizer/utf8.h"

namespace wgx::tokenizer {

// Tokens tokenizer_config.json names (bos_token, eos_token, ...), when it is present and does.
// Naming a bos does not make a prompt start with it: tokenizer.json's post-processor says what
// tokenizer(text) adds (the demo model names <|endoftext|> as bos and adds nothing).
struct SpecialTokens {
  std::optional<int32_t> bos, eos, pad, unk;
};

// How encode(text, options) encodes; the defaults give Hugging Face's tokenizer(text).input_ids.
// Name the fields when changing one: encode(text, {.add_special_tokens = false}) (a bare {false}
// would call encode(text, bool allow_special)).
struct EncodeOptions {
  // Add what tokenizer.json's post_processor adds to one sequence (Llama 3: <|begin_of_text|>
  // first; Qwen3: nothing), as HF's add_special_tokens. false: tokenizer(text,
  // add_special_tokens=False), the text's own ids only.
  bool add_special_tokens = true;
  // false encodes the text of special tokens as ordinary text, as encode(text, false) does.
  bool allow_special = true;
};

class Tokenizer {
 public:
  // `path` is a tokenizer.json file or a folder holding one. A tokenizer_config.json beside it is
  // read for the special tokens. Throws TokenizerError naming the file and field on any problem.
  static Tokenizer load(const std::filesystem::path& path);
  // The same from JSON text; `source` names it in error messages.
  static Tokenizer from_json(std::string_view tokenizer_json,
                             std::optional<std::string_view> config_json = {},
                             std::string source = "tokenizer.json");

  // allow_special=false encodes the text of special tokens as ordinary text (for untrusted
  // input: a user cannot forge <|im_end|>); non-special added tokens are still matched. Throws
  // TokenizerError when the text is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, bool allow_special = true) const;
  // The text's ids, then with add_special_tokens what the post-processor adds: HF's
  // tokenizer(text, add_special_tokens=...).input_ids. tokenizer_config.json's add_bos_token and
  // add_eos_token change nothing, as in transformers, which ignores them when a tokenizer.json
  // is there. Throws as encode(text, allow_special) does.
  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options) const;
  // What the post-processor makes of one sequence of ids: the ids with its special tokens added
  // around them (unchanged for a null or ByteLevel post-processor).
  std::vector<int32_t> post_process(std::span<const int32_t> ids) const;
  // Ids to UTF-8 text; bytes that do not form valid UTF-8 become U+FFFD as in Hugging Face. Ids
  // the tokenizer does not know (padding rows of a model's embedding) are skipped, as HF does.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // The token's string in the file's spelling ("Ġthe" for " the"), and back.
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string_view> id_to_token(int32_t id) const;
  // The bytes decode() produces for one id; empty for an unknown id.
  std::string_view token_bytes(int32_t id) const;
  bool is_special(int32_t id) const;

  // One past the largest id the tokenizer knows (a model's embedding may have more rows).
  int32_t vocab_size() const;
  const SpecialTokens& special_tokens() const;
  // Where it was loaded from, for messages.
  const std::string& source() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Turns ids into text as they arrive (a model generating), emitting only whole UTF-8 characters:
// a character split across tokens comes out once its last byte is in. The concatenated output
// equals decode() of all the ids pushed, with the same U+FFFD for invalid bytes.
class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer, bool skip_special = false);

  // The text this id completes; may be empty.
  std::string push(int32_t id);
  // Ends the stream: an unfinished character still held becomes U+FFFD. The decoder can be
  // used again afterwards.
  std::string finish();
  // True while bytes of an unfinished character are held back.
  bool pending() const;

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  Utf8Repair repair_;
};

}  // namespace wgx::tokenizer
