// Read-only access to a parsed JSON value that knows its own path ("model.merges[3]"), so every
// check of a tokenizer.json field can fail with a TokenizerError naming the file and the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace wgx::tokenizer {

// Parses JSON text; a syntax error (a truncated file, say) becomes a TokenizerError with the byte
// offset nlohmann reports.
nlohmann::json parse_json(std::string_view text, const std::string& source);

// How deep Sequences (of normalizers, of pre-tokenizers) may nest. Real files nest one or two
// levels; without a limit a file could nest them as deep as its size allows, and each level is a
// recursion with a field path longer than the last (memory quadratic in the depth).
inline constexpr int kMaxSequenceDepth = 8;

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string path, const std::string& source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& source() const { return *source_; }
  bool is_null() const { return value_->is_null(); }

  // A member of this object: `at` requires it present and not null, `find` gives nullopt for an
  // absent or null member. Both fail when this is not an object.
  JsonField at(std::string_view key) const;
  std::optional<JsonField> find(std::string_view key) const;
  // An element of this array (which `size` requires).
  size_t size() const;
  JsonField element(size_t index) const;

  std::string_view string() const;
  bool boolean() const;
  int64_t integer(int64_t min, int64_t max) const;
  // For optional members: the value when present and not null, else the fallback.
  bool boolean_or(std::string_view key, bool fallback) const;

  // The child path for a key or index, for messages about members checked without a JsonField.
  std::string child_path(std::string_view key) const;
  std::string child_path(size_t index) const;

  [[noreturn]] void fail(const std::string& detail) const;
  [[noreturn]] void fail_type(std::string_view expected) const;

 private:
  void require_object() const;

  const nlohmann::json* value_;
  std::string path_;
  const std::string* source_;
};

}  // namespace wgx::tokenizer
