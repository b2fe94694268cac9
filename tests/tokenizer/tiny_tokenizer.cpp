#include "tiny_tokenizer.h"

namespace wgx::tokenizer::test {

namespace {
// Byte-level spellings: "Ġ" is the space byte, "Ċ" the newline, "Ã©" the two bytes of "é".
// Ranks (merge order): c+d, a+b, b+c, ab+c, Ġ+a, a+a, Ġa+b, Ã+©, 1+2, abc+d. So "abcd" is
// ab|cd (c+d goes first), "abc" is abc, " ab" is Ġ|ab (a+b beats Ġ+a).
constexpr const char* kTinyJson = R"json({
  "version": "1.0",
  "truncation": null,
  "padding": null,
  "added_tokens": [
    {"id": 100, "content": "<|x|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 101, "content": "<|x", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 102, "content": "<L>", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true},
    {"id": 103, "content": "<R>", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": true},
    {"id": 104, "content": "<W>", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 105, "content": "<é>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false}
  ],
  "normalizer": {"type": "NFC"},
  "pre_tokenizer": {
    "type": "Sequence",
    "pretokenizers": [
      {"type": "Split",
       "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
       "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
    ]
  },
  "post_processor": null,
  "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
  "model": {
    "type": "BPE",
    "dropout": null,
    "unk_token": null,
    "continuing_subword_prefix": "",
    "end_of_word_suffix": "",
    "fuse_unk": false,
    "byte_fallback": false,
    "ignore_merges": false,
    "vocab": {
      "a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "Ġ": 5, "Ċ": 6, "-": 7, "1": 8, "2": 9,
      "Ã": 10, "©": 11,
      "cd": 20, "ab": 21, "bc": 22, "abc": 23, "Ġa": 24, "aa": 25, "Ġab": 26, "Ã©": 27, "12": 28,
      "abcd": 29, "<unk>": 30
    },
    "merges": [
      ["c", "d"], ["a", "b"], ["b", "c"], ["ab", "c"], ["Ġ", "a"], ["a", "a"], ["Ġa", "b"], ["Ã", "©"],
      ["1", "2"], ["abc", "d"]
    ]
  }
})json";
}  // namespace

std::string tiny_json_text() { return kTinyJson; }

nlohmann::json tiny_json() { return nlohmann::json::parse(kTinyJson); }

Tokenizer tiny_tokenizer(const nlohmann::json& json) {
  return Tokenizer::from_json(json.dump(), std::nullopt, "tiny.json");
}

nlohmann::json tiny_template(const std::vector<std::string>& single) {
  const nlohmann::json added = tiny_json()["added_tokens"];
  nlohmann::json pieces = nlohmann::json::array();
  nlohmann::json specials = nlohmann::json::object();
  for (const std::string& piece : single) {
    if (piece == "$A") {
      pieces.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
      continue;
    }
    pieces.push_back({{"SpecialToken", {{"id", piece}, {"type_id", 0}}}});
    for (const nlohmann::json& token : added) {
      if (token["content"] == piece) {
        specials[piece] = {{"id", piece},
                           {"ids", nlohmann::json::array({token["id"]})},
                           {"tokens", nlohmann::json::array({piece})}};
      }
    }
  }
  // The pair template (unused for one sequence): the single one, then the second text.
  nlohmann::json pair = pieces;
  pair.push_back({{"Sequence", {{"id", "B"}, {"type_id", 1}}}});
  return {{"type", "TemplateProcessing"},
          {"single", pieces},
          {"pair", pair},
          {"special_tokens", specials}};
}

nlohmann::json tiny_json_with(const nlohmann::json& post_processor) {
  nlohmann::json json = tiny_json();
  json["post_processor"] = post_processor;
  return json;
}

}  // namespace wgx::tokenizer::test
