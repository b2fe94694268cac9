// The parts of a loaded Tokenizer (internal to the library).
#pragma once

#include <string>
#include <vector>

#include "tokenizer/added_vocab.h"
#include "tokenizer/bpe.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace wgx::tokenizer {

struct Tokenizer::Impl {
  std::string source;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  Bpe bpe;
  AddedVocab added;
  PostProcessor post_processor;
  SpecialTokens special_tokens;

  // Every token: its string (an added token's content wins over the vocab's), the bytes decode()
  // produces, and whether it is special; `slot` maps an id to its entry (-1: no such id).
  struct Entry {
    std::string text;
    std::string bytes;
    bool special = false;
  };
  std::vector<Entry> entries;
  std::vector<int32_t> slot;
  const Entry* entry(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= slot.size() || slot[id] < 0) return nullptr;
    return &entries[static_cast<size_t>(slot[id])];
  }
  TokenMap added_ids;  // added token content -> id
};

}  // namespace wgx::tokenizer
