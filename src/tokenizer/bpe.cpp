#include "tokenizer/bpe.h"

#include <algorithm>

#include "tokenizer/byte_level.h"
#include "tokenizer/error.h"

namespace wgx::tokenizer {

namespace {
// Heap order: the lowest rank first, and on equal ranks the leftmost pair (as Hugging Face).
bool later(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Options of Hugging Face's BPE that byte-level tokenizers leave off; refuse rather than ignore.
void check_unsupported(const JsonField& model) {
  if (const auto dropout = model.find("dropout")) {
    if (!dropout->json().is_number()) dropout->fail_type("a number or null");
    if (dropout->json().get<double>() != 0.0)
      dropout->fail("BPE dropout is not supported (it is for training)");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (const auto field = model.find(key); field && !field->string().empty()) {
      field->fail("is " + in_quotes(field->string()) +
                  ": subword prefixes and suffixes are not supported by byte-level BPE");
    }
  }
  if (model.boolean_or("byte_fallback", false)) {
    model.at("byte_fallback")
        .fail("byte_fallback is not supported (byte-level BPE never needs it)");
  }
}

TokenMap parse_vocab(const JsonField& field) {
  if (!field.json().is_object()) field.fail_type("an object (token -> id)");
  TokenMap vocab;
  vocab.reserve(field.json().size());
  std::unordered_map<int32_t, std::string_view> owner;
  owner.reserve(field.json().size());
  for (const auto& [token, value] : field.json().items()) {
    const JsonField entry(value, field.path() + "[" + in_quotes(token) + "]", field.source());
    const auto id = static_cast<int32_t>(entry.integer(0, kMaxTokenId));
    const auto [it, fresh] = owner.emplace(id, token);
    if (!fresh)
      entry.fail("id " + std::to_string(id) + " is also given to " + in_quotes(it->second));
    vocab.emplace(token, id);
  }
  return vocab;
}

// One merge: "left right" (tokenizers < 0.20) or ["left", "right"].
std::pair<std::string_view, std::string_view> merge_parts(const JsonField& entry) {
  if (entry.json().is_string()) {
    const std::string_view line = entry.string();
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      entry.fail("expected two tokens separated by one space, got " + in_quotes(line));
    }
    return {line.substr(0, space), line.substr(space + 1)};
  }
  if (!entry.json().is_array() || entry.json().size() != 2) {
    entry.fail_type("a string \"left right\" or an array of two strings");
  }
  return {entry.element(0).string(), entry.element(1).string()};
}
}  // namespace

Bpe Bpe::parse(const JsonField& model) {
  const JsonField type = model.at("type");
  if (type.string() != "BPE")
    type.fail("unsupported model " + in_quotes(type.string()) + " (supported: BPE)");
  check_unsupported(model);

  Bpe bpe;
  bpe.vocab_ = parse_vocab(model.at("vocab"));
  bpe.ignore_merges_ = model.boolean_or("ignore_merges", false);
  bpe.fuse_unk_ = model.boolean_or("fuse_unk", false);
  if (const auto unk = model.find("unk_token")) {
    const auto it = bpe.vocab_.find(unk->string());
    if (it == bpe.vocab_.end()) unk->fail(in_quotes(unk->string()) + " is not in model.vocab");
    bpe.unk_id_ = it->second;
  }

  const JsonField merges = model.at("merges");
  const size_t count = merges.size();
  bpe.merges_.reserve(count);
  int32_t rank = 0;
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    const JsonField entry(merges.json()[i], merges.child_path(i), merges.source());
    const auto [left, right] = merge_parts(entry);
    // Old merges.txt headers survived into some tokenizer.json files; they take no rank.
    if (entry.json().is_string() && left.starts_with("#version")) continue;
    const auto l = bpe.vocab_.find(left);
    const auto r = bpe.vocab_.find(right);
    if (l == bpe.vocab_.end())
      entry.fail("the token " + in_quotes(left) + " is not in model.vocab");
    if (r == bpe.vocab_.end())
      entry.fail("the token " + in_quotes(right) + " is not in model.vocab");
    joined.assign(left).append(right);
    const auto result = bpe.vocab_.find(joined);
    if (result == bpe.vocab_.end())
      entry.fail("the merged token " + in_quotes(joined) + " is not in model.vocab");
    // A repeated pair keeps its last rank, as Hugging Face's map insertion does.
    bpe.merges_[pair_key(l->second, r->second)] = Merge{rank++, result->second};
  }

  for (int b = 0; b < 256; ++b) {
    const auto it = bpe.vocab_.find(byte_level_char(static_cast<uint8_t>(b)));
    bpe.byte_ids_[b] = it == bpe.vocab_.end() ? -1 : it->second;
  }
  return bpe;
}

void Bpe::push_candidate(int32_t pos, int32_t left, int32_t right, BpeScratch& scratch) const {
  const Merge* m = find_merge(left, right);
  if (!m) return;
  scratch.heap.push_back({m->rank, pos, m->result});
  std::push_heap(scratch.heap.begin(), scratch.heap.end(), later);
}

void Bpe::encode(std::string_view piece, std::vector<int32_t>& out, BpeScratch& scratch) const {
  if (ignore_merges_) {
    // Llama 3: a piece that is a whole vocabulary token is taken as it is, merges or not.
    scratch.spelled.clear();
    append_byte_level(piece, scratch.spelled);
    if (const auto it = vocab_.find(scratch.spelled); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }

  auto& symbols = scratch.symbols;
  symbols.clear();
  for (const char c : piece) {
    int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) {
      // A byte whose symbol the vocabulary lacks: the unknown token, or nothing (as in HF).
      if (unk_id_ < 0) continue;
      if (fuse_unk_ && !symbols.empty() && symbols.back().id == unk_id_) continue;
      id = unk_id_;
    }
    const auto n = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, n - 1, -1});
    if (n > 0) symbols[n - 1].next = n;
  }
  if (symbols.size() <= 1) {
    if (!symbols.empty()) out.push_back(symbols[0].id);
    return;
  }

  auto& heap = scratch.heap;
  heap.clear();
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    push_candidate(static_cast<int32_t>(i), symbols[i].id, symbols[i + 1].id, scratch);
  }
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const BpeScratch::Candidate c = heap.back();
    heap.pop_back();
    BpeScratch::Symbol& left = symbols[c.pos];
    if (left.id < 0 || left.next < 0) continue;  // merged away, or now last
    BpeScratch::Symbol& right = symbols[left.next];
    // A stale candidate: one side has merged since it was pushed. The pair's current merge (if
    // any) has its own candidate; a different pair can never merge into the same token here.
    const Merge* m = find_merge(left.id, right.id);
    if (!m || m->result != c.result) continue;

    left.id = c.result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.pos;
    right.id = -1;
    if (left.prev >= 0) push_candidate(left.prev, symbols[left.prev].id, left.id, scratch);
    if (left.next >= 0) push_candidate(c.pos, left.id, symbols[left.next].id, scratch);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace wgx::tokenizer
