// A hand-written byte-level BPE tokenizer.json, small enough to work out its encodings by hand:
// a few letters, a few merges whose ranks make the order matter, and added tokens with every
// flag; its post_processor is null. Tests change fields of it through nlohmann::json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wgx::tokenizer::test {

// Ids of the tiny vocabulary (see tiny_tokenizer.cpp).
namespace tiny {
constexpr int32_t a = 0, b = 1, c = 2, d = 3, e = 4, space = 5, newline = 6, dash = 7, one = 8,
                  two = 9;
constexpr int32_t cd = 20, ab = 21, bc = 22, abc = 23, space_a = 24, aa = 25, space_ab = 26,
                  e_acute = 27, twelve = 28, abcd = 29, unk = 30;
constexpr int32_t x_special = 100, x_prefix = 101, lstrip = 102, rstrip = 103, word = 104,
                  normalized = 105;
}  // namespace tiny

// The file as written (for truncation tests), and parsed.
std::string tiny_json_text();
nlohmann::json tiny_json();
Tokenizer tiny_tokenizer(const nlohmann::json& json = tiny_json());

// A TemplateProcessing post-processor as the tokenizers library writes it: `single` lists its
// pieces in order, "$A" for the text and otherwise the content of an added token of the tiny
// file ("<|x|>"), which "special_tokens" gives its id.
nlohmann::json tiny_template(const std::vector<std::string>& single);
// The tiny file with `post_processor` in place of its null one.
nlohmann::json tiny_json_with(const nlohmann::json& post_processor);

}  // namespace wgx::tokenizer::test
