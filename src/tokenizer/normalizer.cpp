#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <stdexcept>

namespace wgx::tokenizer {

namespace {
void parse_into(const JsonField& config, std::vector<Normalizer::Form>& steps, int depth = 0) {
  const std::string_view type = config.at("type").string();
  if (type == "NFC") {
    steps.push_back(Normalizer::Form::kNfc);
  } else if (type == "NFD") {
    steps.push_back(Normalizer::Form::kNfd);
  } else if (type == "NFKC") {
    steps.push_back(Normalizer::Form::kNfkc);
  } else if (type == "NFKD") {
    steps.push_back(Normalizer::Form::kNfkd);
  } else if (type == "Sequence") {
    if (depth == kMaxSequenceDepth) {
      config.fail("Sequences nest more than " + std::to_string(kMaxSequenceDepth) + " deep");
    }
    const JsonField list = config.at("normalizers");
    for (size_t i = 0; i < list.size(); ++i) parse_into(list.element(i), steps, depth + 1);
  } else {
    config.at("type").fail("unsupported normalizer \"" + std::string(type) +
                           "\" (supported: NFC, NFD, NFKC, NFKD, Sequence, or null for none)");
  }
}

utf8proc_option_t options_of(Normalizer::Form form) {
  switch (form) {
    case Normalizer::Form::kNfc:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case Normalizer::Form::kNfd:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case Normalizer::Form::kNfkc:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case Normalizer::Form::kNfkd:
      return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

bool is_ascii(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}
}  // namespace

Normalizer Normalizer::parse(const std::optional<JsonField>& config) {
  std::vector<Form> steps;
  if (config) parse_into(*config, steps);
  return Normalizer(std::move(steps));
}

std::string Normalizer::apply(std::string_view text) const {
  // ASCII is unchanged by every normalization form: most text skips the work.
  if (steps_.empty() || is_ascii(text)) return std::string(text);
  std::string current(text);
  for (const Form form : steps_) {
    utf8proc_uint8_t* out = nullptr;
    // An explicit length (no UTF8PROC_NULLTERM) keeps U+0000 characters as they are.
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(current.data()),
                     static_cast<utf8proc_ssize_t>(current.size()), &out, options_of(form));
    if (n < 0)
      throw std::runtime_error(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
    current.assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
    std::free(out);
  }
  return current;
}

}  // namespace wgx::tokenizer
