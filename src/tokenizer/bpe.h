// The BPE model of a byte-level tokenizer: its vocabulary, the ranked merges, and the encoding of
// one pre-tokenized piece. A piece's bytes start as byte-level symbols; the adjacent pair with the
// lowest merge rank (leftmost on ties) merges until no ranked pair is left, as in Hugging Face
// tokenizers. A min-heap of candidate merges keeps long pieces O(n log n).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_field.h"

namespace wgx::tokenizer {

// The largest token id accepted. Real vocabularies have under 300k tokens; the bound keeps a
// corrupt id from sizing the id-indexed table (4 bytes per id) to gigabytes.
constexpr int32_t kMaxTokenId = (1 << 24) - 1;

// Hashing that lets string-keyed maps be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// Reused by encode() calls to avoid allocating per piece.
struct BpeScratch {
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // neighbours in the current segmentation, -1 at the ends
  };
  struct Candidate {
    int32_t rank, pos, result;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string spelled;  // a piece in the byte-level alphabet, for ignore_merges
};

class Bpe {
 public:
  // From the "model" member. Fails, naming the field, on anything but a byte-level BPE model
  // with a consistent vocab and merges.
  static Bpe parse(const JsonField& model);

  // Appends the ids of one piece (raw bytes, not empty).
  void encode(std::string_view piece, std::vector<int32_t>& out, BpeScratch& scratch) const;

  const TokenMap& vocab() const { return vocab_; }
  size_t merge_count() const { return merges_.size(); }

 private:
  struct Merge {
    int32_t rank, result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  const Merge* find_merge(int32_t left, int32_t right) const {
    const auto it = merges_.find(pair_key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }
  void push_candidate(int32_t pos, int32_t left, int32_t right, BpeScratch& scratch) const;

  TokenMap vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::array<int32_t, 256> byte_ids_{};  // the id of each byte's symbol, -1 when not in vocab
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
};

}  // namespace wgx::tokenizer
