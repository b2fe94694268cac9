// Reading Hugging Face JSON files (config.json, generation_config.json, preprocessor_config.json)
// field by field: each check names the file and the field it rejects (ModelError).
#pragma once

#include <filesystem>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "models/error.h"
#include "models/json_excerpt.h"
#include <string>
#include <string_view>
#include <vector>

namespace wgx::models {

// A JSON object of config fields that knows its file, so each check can name what it rejects.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string source, std::string prefix = {})
      : obj_(object), source_(std::move(source)), prefix_(std::move(prefix)) {
    if (!obj_.is_object()) {
      const std::string item = prefix_.empty() ? prefix_ : prefix_.substr(0, prefix_.size() - 1);
      throw ModelError(source_, item, "is not a JSON object");
    }
  }

  [[noreturn]] void fail(std::string_view key, const std::string& detail) const {
    throw ModelError(source_, prefix_ + std::string(key), detail);
  }

  // Absent and null alike count as missing: Hugging Face writes null for "use the default".
  const nlohmann::json* find(std::string_view key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  int64_t integer(std::string_view key, int64_t min, int64_t max) const {
    const nlohmann::json* v = find(key);
    if (!v) fail(key, "is missing");
    return checked_integer(key, *v, min, max);
  }
  int64_t integer_or(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
    return has(key) ? integer(key, min, max) : fallback;
  }
  double number(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (!v) fail(key, "is missing");
    if (!v->is_number()) fail(key, "is " + json_excerpt(*v) + ", not a number");
    const double d = v->get<double>();
    if (!std::isfinite(d)) fail(key, "is not finite");
    return d;
  }
  double number_or(std::string_view key, double fallback) const { return has(key) ? number(key) : fallback; }
  bool boolean_or(std::string_view key, bool fallback) const {
    const nlohmann::json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, "is " + json_excerpt(*v) + ", not true or false");
    return v->get<bool>();
  }
  std::string string(std::string_view key) const {
    const nlohmann::json* v = find(key);
    if (!v) fail(key, "is missing");
    if (!v->is_string()) fail(key, "is " + json_excerpt(*v) + ", not a string");
    return v->get<std::string>();
  }
  // Token ids: one integer or a list of them.
  std::vector<int32_t> token_ids(std::string_view key) const {
    const nlohmann::json* v = find(key);
    std::vector<int32_t> ids;
    if (!v) return ids;
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    if (v->is_array()) {
      for (const nlohmann::json& e : *v) ids.push_back(static_cast<int32_t>(checked_integer(key, e, 0, kMax)));
    } else {
      ids.push_back(static_cast<int32_t>(checked_integer(key, *v, 0, kMax)));
    }
    return ids;
  }
  Fields object(std::string_view key) const { return Fields(*find(key), source_, prefix_ + std::string(key) + "."); }

 private:
  int64_t checked_integer(std::string_view key, const nlohmann::json& v, int64_t min, int64_t max) const {
    // Some writers store sizes as 2048.0; a whole float is accepted, a fraction is not.
    double d = 0;
    if (v.is_number_integer()) {
      d = static_cast<double>(v.get<int64_t>());
    } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
      d = v.get<double>();
    } else {
      fail(key, "is " + json_excerpt(v) + ", not an integer");
    }
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(key, "is " + json_excerpt(v) + ", outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return static_cast<int64_t>(d);
  }

  const nlohmann::json& obj_;
  std::string source_;
  std::string prefix_;
};

// The parsed text; a ModelError naming `source` when it is not JSON.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);
// A file's whole text; a ModelError when it cannot be opened.
std::string read_text(const std::filesystem::path& path);

}  // namespace wgx::models
