#include "tokenizer/post_processor.h"

#include <limits>
#include <map>
#include <string>

namespace wgx::tokenizer {

namespace {

constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();

using KnownId = std::function<bool(int32_t)>;
using Template = PostProcessor::Template;

int32_t token_id(const JsonField& field, const KnownId& known) {
  const auto id = static_cast<int32_t>(field.integer(0, kMaxId));
  if (!known(id)) field.fail("is " + std::to_string(id) + ", not a token of this tokenizer");
  return id;
}

// BertProcessing's and RobertaProcessing's "cls" and "sep": ["[CLS]", 101].
int32_t token_pair_id(const JsonField& pair, const KnownId& known) {
  if (pair.size() != 2)
    pair.fail("expected [token, id], got " + std::to_string(pair.size()) + " elements");
  pair.element(0).string();
  return token_id(pair.element(1), known);
}

// TemplateProcessing's "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}.
std::map<std::string, std::vector<int32_t>, std::less<>> special_tokens(const JsonField& config,
                                                                        const KnownId& known) {
  std::map<std::string, std::vector<int32_t>, std::less<>> out;
  const auto specials = config.find("special_tokens");
  if (!specials) return out;
  if (!specials->json().is_object()) specials->fail_type("an object");
  for (const auto& [key, value] : specials->json().items()) {
    const JsonField entry(value, specials->child_path(key), specials->source());
    const JsonField ids = entry.at("ids");
    if (ids.size() == 0) ids.fail("is empty: a special token adds at least one id");
    std::vector<int32_t>& list = out[key];
    for (size_t i = 0; i < ids.size(); ++i) list.push_back(token_id(ids.element(i), known));
    if (const auto tokens = entry.find("tokens")) {
      if (tokens->size() != ids.size()) {
        tokens->fail("has " + std::to_string(tokens->size()) + " tokens for " +
                     std::to_string(ids.size()) + " ids");
      }
      for (size_t i = 0; i < tokens->size(); ++i) tokens->element(i).string();
    }
  }
  return out;
}

struct Parser {
  const KnownId& known;

  void parse(const JsonField& config, std::vector<Template>& steps, int depth) const {
    const JsonField type = config.at("type");
    const std::string_view name = type.string();
    if (name == "ByteLevel") return;  // changes offsets only
    if (name == "TemplateProcessing") {
      steps.push_back(parse_template(config));
    } else if (name == "BertProcessing" || name == "RobertaProcessing") {
      const int32_t cls = token_pair_id(config.at("cls"), known);
      const int32_t sep = token_pair_id(config.at("sep"), known);
      steps.push_back({{false, {cls}}, {true, {}}, {false, {sep}}});
    } else if (name == "Sequence") {
      const JsonField list = config.at("processors");
      if (depth >= kMaxSequenceDepth)
        list.fail("Sequences nest more than " + std::to_string(kMaxSequenceDepth) + " deep");
      for (size_t i = 0; i < list.size(); ++i) parse(list.element(i), steps, depth + 1);
    } else {
      type.fail("unsupported post-processor \"" + std::string(name) +
                "\" (supported: ByteLevel, TemplateProcessing, BertProcessing, "
                "RobertaProcessing, Sequence, or null for none)");
    }
  }

  // The "single" template: [{"SpecialToken": {"id": "<s>", ...}}, {"Sequence": {"id": "A", ...}}].
  Template parse_template(const JsonField& config) const {
    const auto specials = special_tokens(config, known);
    const std::string specials_path = config.child_path("special_tokens");
    const JsonField single = config.at("single");
    Template out;
    for (size_t i = 0; i < single.size(); ++i) {
      const JsonField item = single.element(i);
      if (!item.json().is_object()) item.fail_type("an object");
      const auto special = item.find("SpecialToken");
      const auto sequence = item.find("Sequence");
      if (item.json().size() != 1 || (!special && !sequence))
        item.fail("expected {\"SpecialToken\": {...}} or {\"Sequence\": {...}}");
      if (special) {
        const JsonField id = special->at("id");
        const auto it = specials.find(id.string());
        if (it == specials.end())
          id.fail("\"" + std::string(id.string()) + "\" is not in " + specials_path);
        out.push_back({false, it->second});
      } else {
        const JsonField id = sequence->at("id");
        if (id.string() == "B") id.fail("is B: a template for one sequence has only sequence A");
        if (id.string() != "A") id.fail("is \"" + std::string(id.string()) + "\", expected A or B");
        out.push_back({true, {}});
      }
    }
    return out;
  }
};

}  // namespace

PostProcessor PostProcessor::parse(const std::optional<JsonField>& config, const KnownId& known) {
  PostProcessor out;
  if (config) Parser{known}.parse(*config, out.steps_, 0);
  return out;
}

std::vector<int32_t> PostProcessor::apply(std::span<const int32_t> ids) const {
  std::vector<int32_t> current(ids.begin(), ids.end());
  for (const Template& step : steps_) {
    std::vector<int32_t> next;
    for (const Piece& piece : step) {
      const std::vector<int32_t>& part = piece.sequence ? current : piece.ids;
      next.insert(next.end(), part.begin(), part.end());
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace wgx::tokenizer
