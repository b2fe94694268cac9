// tokenizer.json's "post_processor" for one sequence: what Hugging Face's tokenizer(text) adds to
// the encoded text (add_special_tokens=True). Supports null (nothing), ByteLevel (adds no ids; its
// offsets are not kept here), TemplateProcessing (the "single" template: SpecialToken and
// Sequence "A" items, each special token's ids from "special_tokens"), BertProcessing and
// RobertaProcessing (cls, the text, sep) and Sequence of them, applied in order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "tokenizer/json_field.h"

namespace wgx::tokenizer {

class PostProcessor {
 public:
  // From the "post_processor" member (nullopt: none). `known` says whether an id is a token of
  // the tokenizer; every id the post-processor adds must be. Fails, naming the field, on an
  // unsupported type or a malformed template.
  static PostProcessor parse(const std::optional<JsonField>& config,
                             const std::function<bool(int32_t)>& known);

  // The ids with what the post-processor adds around them.
  std::vector<int32_t> apply(std::span<const int32_t> ids) const;

  // One template: pieces in order, each the sequence itself or fixed ids (a special token's).
  struct Piece {
    bool sequence = false;
    std::vector<int32_t> ids;
  };
  using Template = std::vector<Piece>;

 private:
  // Applied in order, each to the previous one's output (a Sequence of processors).
  std::vector<Template> steps_;
};

}  // namespace wgx::tokenizer
