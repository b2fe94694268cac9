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

void AddedVocab::Matcher::insert(std::string_view key, int32_t token) {
  if (nodes.empty()) {
    nodes.emplace_back();
    first.fill(-1);
  }
  int32_t node = 0;
  for (size_t i = key.size(); i-- > 0;) {
    const auto b = static_cast<uint8_t>(key[i]);
    int32_t next = child(node, b);
    if (next < 0) {
      next = static_cast<int32_t>(nodes.size());
      nodes.emplace_back();
      nodes.back().depth = nodes[node].depth + 1;
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

void AddedVocab::Matcher::finish(const std::vector<AddedToken>& tokens) {
  if (nodes.empty()) return;
  // Breadth first, so that a node's fail target (shallower) is done before the node.
  std::vector<int32_t> queue = {0};
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t node = queue[q];
    Node& n = nodes[node];
    if (node != 0) {
      const std::array<int32_t, 2>& inherited = nodes[n.fail].longest;
      const bool whole = n.token >= 0;
      n.longest[0] = whole ? node : inherited[0];
      n.longest[1] = whole && !tokens[n.token].special ? node : inherited[1];
    }
    for (const auto& [b, next] : nodes[node].children) {
      int32_t f = nodes[node].fail;
      if (node != 0) {
        while (f != 0 && child(f, b) < 0) f = nodes[f].fail;
        const int32_t c = child(f, b);
        f = c >= 0 ? c : 0;
      }
      nodes[next].fail = f;
      queue.push_back(next);
    }
  }
}

int32_t AddedVocab::Matcher::child(int32_t node, uint8_t b) const {
  if (node == 0) return first[b];
  const auto& children = nodes[node].children;
  const auto it =
      std::lower_bound(children.begin(), children.end(), std::make_pair(b, int32_t{-1}));
  return it != children.end() && it->first == b ? it->second : -1;
}

int32_t AddedVocab::Matcher::step(int32_t node, uint8_t b) const {
  for (;;) {
    const int32_t next = child(node, b);
    if (next >= 0) return next;
    if (node == 0) return 0;
    node = nodes[node].fail;
  }
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
      vocab.matchers_[1].insert(normalizer.apply(t.content), index);
    } else {
      vocab.matchers_[0].insert(t.content, index);
    }
    vocab.tokens_.push_back(std::move(t));
  }
  for (Matcher& m : vocab.matchers_) m.finish(vocab.tokens_);
  return vocab;
}

void AddedVocab::split(std::string_view text, Pass pass, bool allow_special,
                       std::vector<AddedSegment>& out) const {
  out.clear();
  const Matcher& matcher = matchers_[index(pass)];
  if (matcher.nodes.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return;
  }
  // longest[i]: the matcher's node of the longest allowed token starting at text[i], or -1.
  const size_t allowed = allow_special ? 0 : 1;
  std::vector<int32_t> longest(text.size());
  int32_t state = 0;
  for (size_t i = text.size(); i-- > 0;) {
    state = matcher.step(state, static_cast<uint8_t>(text[i]));
    longest[i] = matcher.nodes[state].longest[allowed];
  }
  size_t done = 0;  // text before this is already in `out`
  size_t pos = 0;
  while (pos < text.size()) {
    const int32_t match = longest[pos];
    if (match < 0) {
      ++pos;
      continue;
    }
    const int32_t best = matcher.nodes[match].token;
    const size_t best_end = pos + static_cast<size_t>(matcher.nodes[match].depth);
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
