// Encoding and decoding with a loaded tokenizer; lookups; the streaming decoder.
#include <stdexcept>

#include "tokenizer/tokenizer_impl.h"

namespace wgx::tokenizer {

namespace {
// Everything one encode() call reuses; local to the call so a Tokenizer is thread-safe.
struct EncodeScratch {
  std::vector<AddedSegment> raw_segments, normalized_segments;
  std::vector<std::string_view> pieces;
  PreTokenizerScratch pre_tokenizer;
  BpeScratch bpe;
};

void encode_plain(const Tokenizer::Impl& impl, std::string_view text, std::vector<int32_t>& out,
                  EncodeScratch& scratch) {
  impl.pre_tokenizer.split(text, scratch.pieces, scratch.pre_tokenizer);
  for (const std::string_view piece : scratch.pieces) impl.bpe.encode(piece, out, scratch.bpe);
}
}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool allow_special) const {
  const Impl& impl = *impl_;
  if (const auto bad = find_invalid_utf8(text)) {
    throw TokenizerError("encode", "",
                         "the text is not valid UTF-8 (at byte " + std::to_string(*bad) + ")");
  }
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  EncodeScratch scratch;
  try {
    // As Hugging Face: added tokens on the raw text first, then each piece between them is
    // normalized, searched for normalized added tokens, pre-tokenized and encoded.
    impl.added.split(text, AddedVocab::Pass::kRaw, allow_special, scratch.raw_segments);
    for (const AddedSegment& segment : scratch.raw_segments) {
      if (segment.id >= 0) {
        out.push_back(segment.id);
        continue;
      }
      const std::string normalized =
          impl.normalizer.empty() ? std::string() : impl.normalizer.apply(segment.text);
      const std::string_view plain =
          impl.normalizer.empty() ? segment.text : std::string_view(normalized);
      if (!impl.added.has(AddedVocab::Pass::kNormalized)) {
        encode_plain(impl, plain, out, scratch);
        continue;
      }
      impl.added.split(plain, AddedVocab::Pass::kNormalized, allow_special,
                       scratch.normalized_segments);
      for (const AddedSegment& s : scratch.normalized_segments) {
        if (s.id >= 0) {
          out.push_back(s.id);
        } else {
          encode_plain(impl, s.text, out, scratch);
        }
      }
    }
  } catch (const TokenizerError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw TokenizerError("encode", "", e.what());  // PCRE2 match limits, normalization failure
  }
  return out;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<int32_t> ids = encode(text, options.allow_special);
  if (!options.add_special_tokens) return ids;
  return post_process(ids);
}

std::vector<int32_t> Tokenizer::post_process(std::span<const int32_t> ids) const {
  return impl_->post_processor.apply(ids);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  Utf8Repair repair;
  for (const int32_t id : ids) {
    if (skip_special && is_special(id)) continue;
    repair.feed(token_bytes(id), out);
  }
  repair.finish(out);
  return out;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(token); it != impl_->added_ids.end()) return it->second;
  if (const auto it = impl_->bpe.vocab().find(token); it != impl_->bpe.vocab().end())
    return it->second;
  return std::nullopt;
}

std::optional<std::string_view> Tokenizer::id_to_token(int32_t id) const {
  const Impl::Entry* e = impl_->entry(id);
  if (!e) return std::nullopt;
  return e->text;
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  const Impl::Entry* e = impl_->entry(id);
  return e ? std::string_view(e->bytes) : std::string_view();
}

bool Tokenizer::is_special(int32_t id) const {
  const Impl::Entry* e = impl_->entry(id);
  return e && e->special;
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->slot.size()); }
const SpecialTokens& Tokenizer::special_tokens() const { return impl_->special_tokens; }
const std::string& Tokenizer::source() const { return impl_->source; }

StreamDecoder::StreamDecoder(Tokenizer tokenizer, bool skip_special)
    : tokenizer_(std::move(tokenizer)), skip_special_(skip_special) {}

std::string StreamDecoder::push(int32_t id) {
  std::string out;
  if (!(skip_special_ && tokenizer_.is_special(id))) repair_.feed(tokenizer_.token_bytes(id), out);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out;
  repair_.finish(out);
  return out;
}

bool StreamDecoder::pending() const { return repair_.pending(); }

}  // namespace wgx::tokenizer
