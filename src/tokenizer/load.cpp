// Tokenizer::load and from_json: reading tokenizer.json (and tokenizer_config.json) into a
// Tokenizer::Impl, checking every field the tokenizer depends on.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_impl.h"

namespace wgx::tokenizer {

namespace {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw TokenizerError(path.string(), "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw TokenizerError(path.string(), "", "read error");
  return text.str();
}

// The decoder only turns byte-level tokens back into bytes; anything else would change decode().
void check_decoder(const std::optional<JsonField>& decoder) {
  if (!decoder)
    throw TokenizerError("", "decoder",
                         "missing: a byte-level BPE tokenizer needs a ByteLevel decoder");
  const JsonField type = decoder->at("type");
  if (type.string() == "ByteLevel") return;
  if (type.string() == "Sequence") {
    const JsonField list = decoder->at("decoders");
    if (list.size() == 0)
      list.fail("is empty: a byte-level BPE tokenizer needs a ByteLevel decoder");
    for (size_t i = 0; i < list.size(); ++i) {
      const JsonField step = list.element(i).at("type");
      if (step.string() != "ByteLevel")
        step.fail("unsupported decoder \"" + std::string(step.string()) +
                  "\" (supported: ByteLevel)");
    }
    return;
  }
  type.fail("unsupported decoder \"" + std::string(type.string()) +
            "\" (supported: ByteLevel, Sequence of ByteLevel)");
}

void build_entries(Tokenizer::Impl& impl) {
  int32_t size = 0;
  for (const auto& [text, id] : impl.bpe.vocab()) size = std::max(size, id + 1);
  for (const AddedToken& t : impl.added.tokens()) size = std::max(size, t.id + 1);
  impl.slot.assign(static_cast<size_t>(size), -1);
  const auto entry_for = [&](int32_t id) -> Tokenizer::Impl::Entry& {
    int32_t& slot = impl.slot[static_cast<size_t>(id)];
    if (slot < 0) {
      slot = static_cast<int32_t>(impl.entries.size());
      impl.entries.emplace_back();
    }
    return impl.entries[static_cast<size_t>(slot)];
  };
  impl.entries.reserve(impl.bpe.vocab().size() + impl.added.tokens().size());
  for (const auto& [text, id] : impl.bpe.vocab()) entry_for(id).text = text;
  for (const AddedToken& t : impl.added.tokens()) {
    Tokenizer::Impl::Entry& e = entry_for(t.id);
    e.text = t.content;
    e.special = t.special;
    impl.added_ids.emplace(t.content, t.id);
  }
  for (Tokenizer::Impl::Entry& e : impl.entries) e.bytes = byte_level_bytes(e.text);
}

// bos_token etc.: null, a string, or {"content": "...", "__type": "AddedToken", ...}.
std::optional<int32_t> config_token(const Tokenizer& tok, const JsonField& config,
                                    std::string_view key) {
  const auto field = config.find(key);
  if (!field) return std::nullopt;
  const JsonField content = field->json().is_object() ? field->at("content") : *field;
  const std::string_view token = content.string();
  const auto id = tok.token_to_id(token);
  if (!id) content.fail("\"" + std::string(token) + "\" is not a token of " + tok.source());
  return id;
}

SpecialTokens read_config(const Tokenizer& tok, std::string_view text, const std::string& source) {
  const nlohmann::json json = parse_json(text, source);
  const JsonField config(json, "", source);
  if (!json.is_object()) config.fail_type("an object");
  return {config_token(tok, config, "bos_token"), config_token(tok, config, "eos_token"),
          config_token(tok, config, "pad_token"), config_token(tok, config, "unk_token")};
}

// A few checks (a missing pre_tokenizer or decoder) throw before any JsonField knows the file;
// name it on the way out.
[[noreturn]] void rethrow_with_source(const TokenizerError& e, const std::string& source) {
  throw TokenizerError(e.source().empty() ? source : e.source(), e.field(), e.detail());
}
}  // namespace

Tokenizer Tokenizer::from_json(std::string_view tokenizer_json,
                               std::optional<std::string_view> config_json, std::string source) {
  auto impl = std::make_shared<Impl>();
  impl->source = source;
  try {
    const nlohmann::json json = parse_json(tokenizer_json, impl->source);
    const JsonField root(json, "", impl->source);
    if (!json.is_object()) root.fail_type("an object");
    impl->normalizer = Normalizer::parse(root.find("normalizer"));
    impl->pre_tokenizer = PreTokenizer::parse(root.find("pre_tokenizer"));
    check_decoder(root.find("decoder"));
    impl->bpe = Bpe::parse(root.at("model"));
    impl->added = AddedVocab::parse(root.find("added_tokens"), impl->normalizer);
    build_entries(*impl);
    impl->post_processor = PostProcessor::parse(
        root.find("post_processor"), [&](int32_t id) { return impl->entry(id) != nullptr; });
  } catch (const TokenizerError& e) {
    rethrow_with_source(e, impl->source);
  }
  const Tokenizer tok(impl);
  if (config_json) {
    const fs::path config_path = fs::path(source).parent_path() / "tokenizer_config.json";
    impl->special_tokens = read_config(tok, *config_json, config_path.string());
  }
  return tok;
}

Tokenizer Tokenizer::load(const fs::path& path) {
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(path, ec)) {
    file = path / "tokenizer.json";
    if (!fs::exists(file, ec))
      throw TokenizerError(path.string(), "", "this folder has no tokenizer.json");
  }
  const std::string text = read_file(file);
  const fs::path config = file.parent_path() / "tokenizer_config.json";
  std::optional<std::string> config_text;
  if (fs::exists(config, ec)) config_text = read_file(config);
  return from_json(text, config_text, file.string());
}

}  // namespace wgx::tokenizer
