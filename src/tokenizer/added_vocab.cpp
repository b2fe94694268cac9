#include "tokenizer/added_vocab.h"

#include <utf8proc.h>

#include <algorithm>
#include <unordered_map>

#include "tokenizer/bpe.h"
#include "tokenizer/utf8.h"

namespace wgx::tokenizer {

namespace {
// Rust regex's \w, which Hugging Face's single_word check uses: letters, marks, decimal and
// letter numbers, connector punctuation and the joiners.
bool is_word_char(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return c == 0x200C || c == 0x200D;
  }
}

AddedToken parse_token(const JsonField& entry) {
  AddedToken t;
  t.id = static_cast<int32_t>(entry.at("id").integer(0, kMaxTokenId));
  t.content = std::string(entry.at("content").string());
  if (t.content.empty()) entry.at("content").fail("is empty");
  if (find_invalid_utf8(t.content)) entry.at("content").fail("is not valid UTF-8");
  t.special = entry.at("special").boolean();
  // Hugging Face's defaults for the flags a hand-written file may leave out.
  t.lstrip = entry.boolean_or("lstrip", false);
  t.rstrip = entry.boolean_or("rstrip", false);
  t.single_word = entry.boolean_or("single_word", false);
  t.normalized = entry.boolean_or("normalized", !t.special);
  return t;
}
}  // namespace

void AddedVocab::Trie::insert(std::string_view key, int32_t token) {
  if (nodes.empty()) {
    nodes.emplace_back();
    first.fill(-1);
  }
  int32_t node = 0;
  for (size_t i = 0; i < key.size(); ++i) {
    const auto b = static_cast<uint8_t>(key[i]);
    int32_t next = child(node, b);
    if (next < 0) {
      next = static_cast<int32_t>(nodes.size());
      nodes.emplace_back();
      auto& children = nodes[node].children;
      children.insert(
          std::upper_bound(children.begin(), children.end(), std::make_pair(b, int32_t{-1})),
          {b, next});
      if (node == 0) first[b] = next;
    }
    node = next;
  }
  nodes[node].token = token;
}

int32_t AddedVocab::Trie::child(int32_t node, uint8_t b) const {
  if (node == 0) return first[b];
  const auto& children = nodes[node].children;
  const auto it =
      std::lower_bound(children.begin(), children.end(), std::make_pair(b, int32_t{-1}));
  return it != children.end() && it->first == b ? it->second : -1;
}

AddedVocab AddedVocab::parse(const std::optional<JsonField>& list, const Normalizer& normalizer) {
  AddedVocab vocab;
  if (!list) return vocab;
  std::unordered_map<int32_t, size_t> by_id;
  std::unordered_map<std::string, size_t> by_content;
  for (size_t i = 0; i < list->size(); ++i) {
    const JsonField entry = list->element(i);
    AddedToken t = parse_token(entry);
    if (const auto [it, fresh] = by_id.emplace(t.id, i); !fresh) {
      entry.at("id").fail("id " + std::to_string(t.id) + " is also added_tokens[" +
                          std::to_string(it->second) + "]");
    }
    if (const auto [it, fresh] = by_content.emplace(t.content, i); !fresh) {
      entry.at("content").fail("\"" + t.content + "\" is also added_tokens[" +
                               std::to_string(it->second) + "]");
    }
    const auto index = static_cast<int32_t>(vocab.tokens_.size());
    if (t.normalized) {
      vocab.tries_[1].insert(normalizer.apply(t.content), index);
    } else {
      vocab.tries_[0].insert(t.content, index);
    }
    vocab.tokens_.push_back(std::move(t));
  }
  return vocab;
}

void AddedVocab::split(std::string_view text, Pass pass, bool allow_special,
                       std::vector<AddedSegment>& out) const {
  out.clear();
  const Trie& trie = tries_[index(pass)];
  if (trie.nodes.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return;
  }
  size_t done = 0;  // text before this is already in `out`
  size_t pos = 0;
  while (pos < text.size()) {
    // The longest allowed token starting at pos.
    int32_t best = -1;
    size_t best_end = 0;
    int32_t node = trie.first[static_cast<uint8_t>(text[pos])];
    for (size_t j = pos + 1; node >= 0; ++j) {
      const int32_t t = trie.nodes[node].token;
      if (t >= 0 && (allow_special || !tokens_[t].special)) {
        best = t;
        best_end = j;
      }
      if (j == text.size()) break;
      node = trie.child(node, static_cast<uint8_t>(text[j]));
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[best];
    size_t start = pos, end = best_end;
    if (token.single_word) {
      const bool word_before = start > 0 && is_word_char(code_point_before(text, start).value);
      const bool word_after = end < text.size() && is_word_char(code_point_at(text, end).value);
      if (word_before || word_after) {
        pos = end;  // as Hugging Face's match iterator: the search resumes after the rejected match
        continue;
      }
    }
    if (token.lstrip) {
      while (start > done) {
        const CodePoint c = code_point_before(text, start);
        if (!is_white_space(c.value)) break;
        start -= c.length;
      }
    }
    if (token.rstrip) {
      while (end < text.size()) {
        const CodePoint c = code_point_at(text, end);
        if (!is_white_space(c.value)) break;
        end += c.length;
      }
    }
    if (start > done) out.push_back({text.substr(done, start - done), -1});
    out.push_back({text.substr(start, end - start), token.id});
    done = pos = end;
  }
  if (done < text.size()) out.push_back({text.substr(done), -1});
}

}  // namespace wgx::tokenizer
