// wgx tokenize: text -> token ids (a JSON array) as Hugging Face's tokenizer(text).input_ids, or
// with --decode ids -> text, using a Hugging Face tokenizer.json (PATH is the file, a model folder
// holding it, or a .wgx from wgx convert).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "cli/commands.h"

namespace wgx::cli {

namespace {

constexpr const char* kUsage =
    "usage: wgx tokenize --model PATH [--no-add-special] [--no-special] TEXT   (TEXT '-' reads stdin)\n"
    "       wgx tokenize --model PATH --decode [--skip-special] IDS   (IDS: a JSON array or numbers)";

constexpr const char* kHelp =
    "\n"
    "Prints TEXT's token ids as Hugging Face's tokenizer(TEXT).input_ids: with what tokenizer.json's\n"
    "post-processor adds (Llama 3: <|begin_of_text|> first; Qwen3: nothing).\n"
    "  --no-add-special  leave that out: tokenizer(TEXT, add_special_tokens=False)\n"
    "  --no-special      encode the text of special tokens in TEXT as ordinary text\n"
    "  --decode          IDS back to text; --skip-special leaves special tokens out\n";

std::string read_stdin() {
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::string cleaned;
  for (char c : text) cleaned += (c == '[' || c == ']' || c == ',') ? ' ' : c;
  std::istringstream in(cleaned);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < 0 || v > INT32_MAX) {
      throw std::invalid_argument("tokenize --decode: '" + word + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

}  // namespace

int run_tokenize(const GlobalOptions&, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::printf("%s\n%s", kUsage, kHelp);
      return 0;
    }
  }
  std::string model, text;
  bool decode = false, skip_special = false, allow_special = true, add_special = true, have_text = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--model" && i + 1 < args.size()) {
      model = args[++i];
    } else if (a == "--decode") {
      decode = true;
    } else if (a == "--skip-special") {
      skip_special = true;
    } else if (a == "--no-special") {
      allow_special = false;
    } else if (a == "--no-add-special") {
      add_special = false;
    } else if (!have_text && (a == "-" || a.rfind("--", 0) != 0)) {
      text = a;
      have_text = true;
    } else {
      throw std::invalid_argument("tokenize: unexpected argument '" + a + "'\n" + kUsage);
    }
  }
  if (model.empty() || !have_text) throw std::invalid_argument(std::string("tokenize: ") + kUsage);
  if (text == "-") text = read_stdin();
  const Tokenizer tok = Tokenizer::load(model);  // a folder, a tokenizer.json or a .wgx
  if (decode) {
    const std::vector<int32_t> ids = parse_ids(text);
    for (int32_t id : ids) {
      if (id >= tok.vocab_size()) {
        throw std::invalid_argument("tokenize --decode: id " + std::to_string(id) + " is outside the vocabulary (" +
                                    std::to_string(tok.vocab_size()) + " ids)");
      }
    }
    std::fputs(tok.decode(ids, skip_special).c_str(), stdout);
    std::fputs("\n", stdout);
    return 0;
  }
  EncodeOptions o;
  o.add_special_tokens = add_special;
  o.parse_special = allow_special;
  const std::vector<int32_t> ids = tok.encode(text, o);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  std::puts((out + "]").c_str());
  return 0;
}

}  // namespace wgx::cli
