#include "tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <stdexcept>

#include "tokenizer/error.h"

namespace wgx::tokenizer {

namespace {
// The GPT-2 pattern ByteLevel splits with when use_regex is true.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

PreTokenizer::Behavior parse_behavior(const JsonField& field) {
  const std::string_view name = field.string();
  using B = PreTokenizer::Behavior;
  if (name == "Removed") return B::kRemoved;
  if (name == "Isolated") return B::kIsolated;
  if (name == "MergedWithPrevious") return B::kMergedWithPrevious;
  if (name == "MergedWithNext") return B::kMergedWithNext;
  if (name == "Contiguous") return B::kContiguous;
  field.fail("unknown split behavior \"" + std::string(name) +
             "\" (known: Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

Regex compile(const JsonField& field, std::string_view pattern, bool literal) {
  try {
    return Regex(pattern, literal);
  } catch (const std::invalid_argument& e) {
    field.fail(e.what());
  }
}

PreTokenizer::Step parse_split(const JsonField& config) {
  PreTokenizer::Step step{PreTokenizer::Step::Kind::kSplit, std::nullopt};
  const JsonField pattern = config.at("pattern");
  const auto regex = pattern.find("Regex");
  const auto literal = pattern.find("String");
  if (regex.has_value() == literal.has_value())
    pattern.fail("expected exactly one of \"Regex\" and \"String\"");
  step.regex =
      regex ? compile(*regex, regex->string(), false) : compile(*literal, literal->string(), true);
  step.behavior = parse_behavior(config.at("behavior"));
  step.invert = config.boolean_or("invert", false);
  return step;
}

PreTokenizer::Step parse_byte_level(const JsonField& config) {
  PreTokenizer::Step step{PreTokenizer::Step::Kind::kByteLevel, std::nullopt};
  step.add_prefix_space = config.boolean_or("add_prefix_space", true);
  if (config.boolean_or("use_regex", true)) step.regex = Regex(kGpt2Pattern, false);
  config.boolean_or("trim_offsets", true);  // offsets only; checked for its type
  return step;
}

void parse_into(const JsonField& config, std::vector<PreTokenizer::Step>& steps, int depth = 0) {
  const JsonField type_field = config.at("type");
  const std::string_view type = type_field.string();
  if (type == "Sequence") {
    if (depth == kMaxSequenceDepth) {
      config.fail("Sequences nest more than " + std::to_string(kMaxSequenceDepth) + " deep");
    }
    const JsonField list = config.at("pretokenizers");
    for (size_t i = 0; i < list.size(); ++i) parse_into(list.element(i), steps, depth + 1);
    return;
  }
  if (!steps.empty() && steps.back().kind == PreTokenizer::Step::Kind::kByteLevel) {
    config.fail(
        "comes after ByteLevel, which must be the last pre-tokenizer (the BPE model works on its "
        "bytes)");
  }
  if (type == "Split") {
    steps.push_back(parse_split(config));
  } else if (type == "ByteLevel") {
    steps.push_back(parse_byte_level(config));
  } else {
    type_field.fail("unsupported pre-tokenizer \"" + std::string(type) +
                    "\" (supported for byte-level BPE: Sequence, Split, ByteLevel)");
  }
}
}  // namespace

PreTokenizer PreTokenizer::parse(const std::optional<JsonField>& config) {
  PreTokenizer out;
  if (!config) {
    throw TokenizerError("", "pre_tokenizer",
                         "missing: a byte-level BPE tokenizer needs a ByteLevel pre-tokenizer");
  }
  parse_into(*config, out.steps_);
  if (out.steps_.empty() || out.steps_.back().kind != Step::Kind::kByteLevel) {
    config->fail("has no ByteLevel step: only byte-level BPE tokenizers are supported");
  }
  return out;
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces,
                         PreTokenizerScratch& scratch) const {
  pieces.clear();
  scratch.owned.clear();
  if (!text.empty()) pieces.push_back(text);
  for (const Step& step : steps_) {
    scratch.next.clear();
    for (const std::string_view piece : pieces) apply(step, piece, scratch);
    pieces.swap(scratch.next);
  }
}

void PreTokenizer::apply(const Step& step, std::string_view piece,
                         PreTokenizerScratch& scratch) const {
  std::vector<std::string_view>& out = scratch.next;
  if (step.kind == Step::Kind::kByteLevel) {
    if (step.add_prefix_space && piece.front() != ' ') {
      scratch.owned.push_back(" " + std::string(piece));
      piece = scratch.owned.back();
    }
    if (!step.regex) {
      out.push_back(piece);
      return;
    }
  }
  step.regex->find_all(piece, scratch.matches);

  // Cover the piece with segments, each a match or the text between matches (as Hugging Face's
  // NormalizedString::split does), then group them per the behavior.
  struct Segment {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Segment> segments;
  size_t prev = 0;
  for (const Span& m : scratch.matches) {
    if (m.begin > prev) segments.push_back({prev, m.begin, false});
    segments.push_back({m.begin, m.end, true});
    prev = m.end;
  }
  if (prev < piece.size()) segments.push_back({prev, piece.size(), false});
  if (step.invert) {
    for (Segment& s : segments) s.is_match = !s.is_match;
  }

  const Behavior behavior =
      step.kind == Step::Kind::kByteLevel ? Behavior::kIsolated : step.behavior;
  std::vector<Span> groups;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      for (const Segment& s : segments) groups.push_back({s.begin, s.end});
      break;
    case Behavior::kRemoved:
      for (const Segment& s : segments) {
        if (!s.is_match) groups.push_back({s.begin, s.end});
      }
      break;
    case Behavior::kContiguous:
      for (const Segment& s : segments) {
        if (s.is_match == previous_match && !groups.empty()) {
          groups.back().end = s.end;
        } else {
          groups.push_back({s.begin, s.end});
        }
        previous_match = s.is_match;
      }
      break;
    case Behavior::kMergedWithPrevious:
      for (const Segment& s : segments) {
        if (s.is_match && !previous_match && !groups.empty()) {
          groups.back().end = s.end;
        } else {
          groups.push_back({s.begin, s.end});
        }
        previous_match = s.is_match;
      }
      break;
    case Behavior::kMergedWithNext:
      // The mirror image: walk backwards, a match joins the group that follows it.
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->is_match && !previous_match && !groups.empty()) {
          groups.back().begin = it->begin;
        } else {
          groups.push_back({it->begin, it->end});
        }
        previous_match = it->is_match;
      }
      std::reverse(groups.begin(), groups.end());
      break;
  }
  for (const Span& g : groups) {
    if (g.end > g.begin) out.push_back(piece.substr(g.begin, g.end - g.begin));
  }
}

}  // namespace wgx::tokenizer
