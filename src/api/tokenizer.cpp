// wgx::Tokenizer over tokenizer::Tokenizer; a .wgx file carries its tokenizer's files as text.
#include <filesystem>

#include "api/internal.h"
#include "models/wgx_model_file.h"

namespace wgx {

namespace {

tokenizer::Tokenizer load_tokenizer(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw Error(ErrorKind::InvalidModel, path + ": no such file or folder");
  }
  if (std::filesystem::is_directory(path) || std::filesystem::path(path).extension() == ".json") {
    return tokenizer::Tokenizer::load(path);
  }
  const models::WgxModel m = models::load_wgx(path);
  const std::string* config = m.tokenizer_config_json();
  return tokenizer::Tokenizer::from_json(m.tokenizer_json(),
                                         config ? std::optional<std::string_view>(*config) : std::nullopt, path);
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  return translated(ErrorKind::InvalidModel,
                    [&] { return Tokenizer(std::make_shared<const Impl>(Impl{load_tokenizer(path)})); });
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  return translated(ErrorKind::BadArgument, [&] {
    tokenizer::EncodeOptions o;
    o.add_special_tokens = options.add_special_tokens;
    o.allow_special = options.parse_special;
    return impl_->tok.encode(text, o);
  });
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  return translated(ErrorKind::BadArgument, [&] { return impl_->tok.decode(ids, skip_special); });
}

std::optional<int32_t> Tokenizer::token_id(std::string_view token) const { return impl_->tok.token_to_id(token); }

std::optional<std::string> Tokenizer::token(int32_t id) const {
  const std::optional<std::string_view> t = impl_->tok.id_to_token(id);
  if (!t) return std::nullopt;
  return std::string(*t);
}

bool Tokenizer::is_special(int32_t id) const { return impl_->tok.is_special(id); }
int32_t Tokenizer::vocab_size() const { return impl_->tok.vocab_size(); }
std::optional<int32_t> Tokenizer::bos_id() const { return impl_->tok.special_tokens().bos; }
std::optional<int32_t> Tokenizer::eos_id() const { return impl_->tok.special_tokens().eos; }

}  // namespace wgx
