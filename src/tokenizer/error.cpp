#include "tokenizer/error.h"

namespace wgx::tokenizer {

namespace {
std::string compose(const std::string& source, const std::string& field,
                    const std::string& detail) {
  std::string out = source;
  if (!field.empty()) out += (out.empty() ? "" : ": ") + field;
  return out + (out.empty() ? "" : ": ") + detail;
}
}  // namespace

TokenizerError::TokenizerError(std::string source, std::string field, std::string detail)
    : std::runtime_error(compose(source, field, detail)),
      source_(std::move(source)),
      field_(std::move(field)),
      detail_(std::move(detail)) {}

}  // namespace wgx::tokenizer
