#include "tokenizer/json_field.h"

#include "tokenizer/error.h"

namespace wgx::tokenizer {

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message repeats its own prefix; keep the useful part and the offset.
    std::string what = e.what();
    const size_t cut = what.find("parse error");
    if (cut != std::string::npos) what = what.substr(cut);
    const bool at_end = e.byte >= text.size();
    throw TokenizerError(source, "",
                         "not valid JSON (" + what + ")" +
                             (at_end ? ": the file ends early, it may be truncated" : ""));
  } catch (const nlohmann::json::exception& e) {
    // Not a parse_error: out_of_range, for a number too large for a double (1e400).
    throw TokenizerError(source, "", std::string("not valid JSON (") + e.what() + ")");
  }
}

void JsonField::require_object() const {
  if (!value_->is_object()) fail_type("an object");
}

std::string JsonField::child_path(std::string_view key) const {
  std::string out = path_;
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string JsonField::child_path(size_t index) const {
  return path_ + "[" + std::to_string(index) + "]";
}

JsonField JsonField::at(std::string_view key) const {
  require_object();
  const auto it = value_->find(key);
  if (it == value_->end()) throw TokenizerError(*source_, child_path(key), "missing");
  if (it->is_null()) throw TokenizerError(*source_, child_path(key), "is null");
  return JsonField(*it, child_path(key), *source_);
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  require_object();
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, child_path(key), *source_);
}

size_t JsonField::size() const {
  if (!value_->is_array()) fail_type("an array");
  return value_->size();
}

JsonField JsonField::element(size_t index) const {
  if (index >= size()) fail("has no element " + std::to_string(index));
  return JsonField((*value_)[index], child_path(index), *source_);
}

std::string_view JsonField::string() const {
  if (!value_->is_string()) fail_type("a string");
  return value_->get_ref<const std::string&>();
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail_type("true or false");
  return value_->get<bool>();
}

int64_t JsonField::integer(int64_t min, int64_t max) const {
  int64_t v = 0;
  if (value_->is_number_unsigned()) {
    const uint64_t u = value_->get<uint64_t>();
    if (u > static_cast<uint64_t>(max))
      fail("is " + std::to_string(u) + ", above " + std::to_string(max));
    v = static_cast<int64_t>(u);
  } else if (value_->is_number_integer()) {
    v = value_->get<int64_t>();
  } else {
    fail_type("an integer");
  }
  if (v < min || v > max) {
    fail("is " + std::to_string(v) + ", outside " + std::to_string(min) + ".." +
         std::to_string(max));
  }
  return v;
}

bool JsonField::boolean_or(std::string_view key, bool fallback) const {
  const auto member = find(key);
  return member ? member->boolean() : fallback;
}

void JsonField::fail(const std::string& detail) const {
  throw TokenizerError(*source_, path_, detail);
}

void JsonField::fail_type(std::string_view expected) const {
  fail("expected " + std::string(expected) + ", got " + value_->type_name());
}

}  // namespace wgx::tokenizer
