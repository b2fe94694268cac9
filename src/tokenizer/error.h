// The tokenizer's one error type. Loading errors name the file and the JSON field
// ("model.merges[12]") so a malformed tokenizer.json can be fixed from the message alone.
#pragma once

#include <stdexcept>
#include <string>

namespace wgx::tokenizer {

class TokenizerError : public std::runtime_error {
 public:
  // what() is "<source>: <field>: <detail>", leaving out the parts that are empty.
  TokenizerError(std::string source, std::string field, std::string detail);

  const std::string& source() const { return source_; }  // a file path, or "encode" etc.
  const std::string& field() const { return field_; }    // JSON path; may be empty
  const std::string& detail() const { return detail_; }

 private:
  std::string source_;
  std::string field_;
  std::string detail_;
};

}  // namespace wgx::tokenizer
