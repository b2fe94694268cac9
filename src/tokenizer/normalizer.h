// The tokenizer.json normalizers a byte-level BPE needs: none, the four Unicode normalization
// forms (Qwen2/3 use NFC; Llama 3 has none) and Sequence of them. Built on utf8proc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_field.h"

namespace wgx::tokenizer {

class Normalizer {
 public:
  enum class Form { kNfc, kNfd, kNfkc, kNfkd };

  // From the "normalizer" member (nullopt: none). Unknown types fail naming the field.
  static Normalizer parse(const std::optional<JsonField>& config);
  explicit Normalizer(std::vector<Form> steps = {}) : steps_(std::move(steps)) {}

  bool empty() const { return steps_.empty(); }
  // text must be valid UTF-8.
  std::string apply(std::string_view text) const;

 private:
  std::vector<Form> steps_;
};

}  // namespace wgx::tokenizer
