// Malformed tokenizer.json and tokenizer_config.json files: each must be rejected with a
// TokenizerError naming the file and the field, never a crash or another exception type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "reference_data.h"
#include "tokenizer/json_field.h"
#include "tiny_tokenizer.h"

namespace wgx::tokenizer::test {
namespace {

namespace fs = std::filesystem;

// The message of the TokenizerError loading `text` throws; "" when it loads.
std::string load_error(std::string_view text,
                       std::optional<std::string_view> config = std::nullopt) {
  try {
    Tokenizer::from_json(text, config, "dir/tokenizer.json");
  } catch (const TokenizerError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a TokenizerError: " << e.what();
    return e.what();
  }
  return "";
}

std::string json_error(const nlohmann::json& json) { return load_error(json.dump()); }

// The message names the file, then the field, then says what is wrong.
void expect_error(const std::string& message, std::string_view field, std::string_view detail) {
  EXPECT_EQ(message.rfind("dir/tokenizer.json: ", 0), 0u) << message;
  EXPECT_NE(message.find(std::string(field) + ": "), std::string::npos)
      << "field " << field << " in: " << message;
  EXPECT_NE(message.find(detail), std::string::npos) << "'" << detail << "' in: " << message;
}

TEST(Malformed, NotJson) {
  const std::string text = tiny_json_text();
  expect_error(load_error(text.substr(0, text.size() / 2)), "", "not valid JSON");
  expect_error(load_error(""), "", "not valid JSON");
  expect_error(load_error("[1, 2]"), "", "expected an object, got array");
  expect_error(load_error(R"({"version": 1e400})"), "", "not valid JSON");
  EXPECT_NE(load_error(text.substr(0, text.size() - 2)).find("truncated"), std::string::npos);
}

// Every truncation of the file is rejected cleanly.
TEST(Malformed, EveryTruncationIsRejected) {
  const std::string text = tiny_json_text();
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    // Cutting only trailing whitespace after the last brace leaves a complete file.
    if (text.find_first_not_of(" \n", n) == std::string::npos) continue;
    const std::string message = load_error(text.substr(0, n));
    EXPECT_FALSE(message.empty()) << "loaded a file cut at byte " << n;
  }
}

// Each single-character change either still loads or fails with a TokenizerError.
TEST(Malformed, SingleCharacterMutationsNeverCrash) {
  const std::string text = tiny_json_text();
  for (size_t i = 0; i < text.size(); ++i) {
    for (const char c : {'"', '0', '[', '}', 'x'}) {
      std::string mutated = text;
      mutated[i] = c;
      load_error(mutated);  // fails the test itself on a non-TokenizerError
    }
  }
}

TEST(Malformed, DeepNestingIsRejected) {
  expect_error(load_error(std::string(100000, '[') + std::string(100000, ']')), "",
               "expected an object");
}

TEST(Malformed, ModelFields) {
  nlohmann::json j = tiny_json();
  j.erase("model");
  expect_error(json_error(j), "model", "missing");

  j = tiny_json();
  j["model"]["type"] = "WordPiece";
  expect_error(json_error(j), "model.type", "unsupported model \"WordPiece\"");

  j = tiny_json();
  j["model"].erase("merges");
  expect_error(json_error(j), "model.merges", "missing");

  j = tiny_json();
  j["model"]["merges"] = nlohmann::json::object();
  expect_error(json_error(j), "model.merges", "expected an array, got object");

  j = tiny_json();
  j["model"]["merges"][2] = 7;
  expect_error(json_error(j), "model.merges[2]",
               "expected a string \"left right\" or an array of two strings");

  j = tiny_json();
  j["model"]["merges"][1] = "a b c";
  expect_error(json_error(j), "model.merges[1]", "two tokens separated by one space");

  j = tiny_json();
  j["model"]["merges"][3] = {"ab", "zz"};
  expect_error(json_error(j), "model.merges[3]", "the token \"zz\" is not in model.vocab");

  j = tiny_json();
  j["model"]["merges"].push_back({"d", "d"});
  expect_error(json_error(j), "model.merges[10]", "the merged token \"dd\" is not in model.vocab");

  j = tiny_json();
  j["model"]["vocab"]["a"] = "zero";
  expect_error(json_error(j), "model.vocab[\"a\"]", "expected an integer, got string");

  j = tiny_json();
  j["model"]["vocab"]["a"] = -1;
  expect_error(json_error(j), "model.vocab[\"a\"]", "outside 0..");

  j = tiny_json();
  j["model"]["vocab"]["a"] = 2000000000;  // would size the id table to gigabytes
  expect_error(json_error(j), "model.vocab[\"a\"]", "is 2000000000, above 16777215");

  j = tiny_json();
  j["model"]["vocab"]["b"] = 0;
  expect_error(json_error(j), "model.vocab[\"b\"]", "id 0 is also given to \"a\"");

  j = tiny_json();
  j["model"]["vocab"] = nlohmann::json::array();
  expect_error(json_error(j), "model.vocab", "expected an object (token -> id), got array");

  j = tiny_json();
  j["model"]["dropout"] = 0.1;
  expect_error(json_error(j), "model.dropout", "not supported");

  j = tiny_json();
  j["model"]["byte_fallback"] = true;
  expect_error(json_error(j), "model.byte_fallback", "not supported");

  j = tiny_json();
  j["model"]["ignore_merges"] = "yes";
  expect_error(json_error(j), "model.ignore_merges", "expected true or false, got string");

  j = tiny_json();
  j["model"]["unk_token"] = "<nope>";
  expect_error(json_error(j), "model.unk_token", "\"<nope>\" is not in model.vocab");

  j = tiny_json();
  j["model"]["continuing_subword_prefix"] = "##";
  expect_error(json_error(j), "model.continuing_subword_prefix", "not supported");
}

TEST(Malformed, PipelineKinds) {
  nlohmann::json j = tiny_json();
  j["normalizer"] = {{"type", "Lowercase"}};
  expect_error(json_error(j), "normalizer.type", "unsupported normalizer \"Lowercase\"");

  j = tiny_json();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", {{{"type", "NFC"}}, {{"type", "Strip"}}}}};
  expect_error(json_error(j), "normalizer.normalizers[1].type", "unsupported normalizer \"Strip\"");

  j = tiny_json();
  j["pre_tokenizer"]["pretokenizers"][0]["type"] = "Metaspace";
  expect_error(json_error(j), "pre_tokenizer.pretokenizers[0].type",
               "unsupported pre-tokenizer \"Metaspace\"");

  j = tiny_json();
  j["pre_tokenizer"] = j["pre_tokenizer"]["pretokenizers"][0];
  expect_error(json_error(j), "pre_tokenizer", "has no ByteLevel step");

  j = tiny_json();
  j.erase("pre_tokenizer");
  expect_error(json_error(j), "pre_tokenizer", "missing");

  j = tiny_json();
  std::swap(j["pre_tokenizer"]["pretokenizers"][0], j["pre_tokenizer"]["pretokenizers"][1]);
  expect_error(json_error(j), "pre_tokenizer.pretokenizers[1]", "must be the last pre-tokenizer");

  j = tiny_json();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}";
  expect_error(json_error(j), "pre_tokenizer.pretokenizers[0].pattern.Regex",
               "the pattern does not compile");

  j = tiny_json();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "a"}, {"String", "b"}};
  expect_error(json_error(j), "pre_tokenizer.pretokenizers[0].pattern", "exactly one of");

  j = tiny_json();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
  expect_error(json_error(j), "pre_tokenizer.pretokenizers[0].behavior",
               "unknown split behavior \"Sideways\"");

  j = tiny_json();
  j.erase("decoder");
  expect_error(json_error(j), "decoder", "missing");

  j = tiny_json();
  j["decoder"] = {{"type", "WordPiece"}};
  expect_error(json_error(j), "decoder.type", "unsupported decoder \"WordPiece\"");
}

TEST(Malformed, PostProcessor) {
  const auto with = [](const nlohmann::json& post_processor) {
    return json_error(tiny_json_with(post_processor));
  };
  const nlohmann::json good = tiny_template({"<|x|>", "$A", "<R>"});
  EXPECT_EQ(with(good), "");

  const std::string unknown = with({{"type", "TemplateProcessingV2"}});
  expect_error(unknown, "post_processor.type",
               "unsupported post-processor \"TemplateProcessingV2\"");
  expect_error(unknown, "post_processor.type",
               "(supported: ByteLevel, TemplateProcessing, BertProcessing, RobertaProcessing, "
               "Sequence, or null for none)");
  expect_error(
      with({{"type", "Sequence"}, {"processors", {{{"type", "ByteLevel"}}, {{"type", "Bert"}}}}}),
      "post_processor.processors[1].type", "unsupported post-processor \"Bert\"");
  expect_error(with({{"kind", "ByteLevel"}}), "post_processor.type", "missing");
  expect_error(with("ByteLevel"), "post_processor", "expected an object, got string");
  expect_error(with({{"type", 3}}), "post_processor.type", "expected a string, got number");

  // A template naming a special token that special_tokens lacks, at any depth.
  nlohmann::json pp = good;
  pp["special_tokens"].erase("<R>");
  expect_error(with(pp), "post_processor.single[2].SpecialToken.id",
               "\"<R>\" is not in post_processor.special_tokens");
  expect_error(with({{"type", "Sequence"}, {"processors", {{{"type", "ByteLevel"}}, pp}}}),
               "post_processor.processors[1].single[2].SpecialToken.id",
               "\"<R>\" is not in post_processor.processors[1].special_tokens");
  pp = good;
  pp.erase("special_tokens");
  expect_error(with(pp), "post_processor.single[0].SpecialToken.id", "is not in");

  // A special token without ids, or with ids that are not the tokenizer's.
  pp = good;
  pp["special_tokens"]["<|x|>"].erase("ids");
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids", "missing");
  pp["special_tokens"]["<|x|>"]["ids"] = nlohmann::json::array();
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids",
               "is empty: a special token adds at least one id");
  pp["special_tokens"]["<|x|>"]["ids"] = {5000};
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids[0]",
               "is 5000, not a token of this tokenizer");
  pp["special_tokens"]["<|x|>"]["ids"] = {-1};
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids[0]", "outside 0..");
  pp["special_tokens"]["<|x|>"]["ids"] = {"100"};
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids[0]",
               "expected an integer, got string");
  pp["special_tokens"]["<|x|>"]["ids"] = 100;
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.ids",
               "expected an array, got number");
  pp["special_tokens"]["<|x|>"]["ids"] = {100, 101};
  expect_error(with(pp), "post_processor.special_tokens.<|x|>.tokens", "has 1 tokens for 2 ids");
  pp = good;
  pp["special_tokens"]["<R>"] = "<R>";
  expect_error(with(pp), "post_processor.special_tokens.<R>", "expected an object, got string");
  pp = good;
  pp["special_tokens"] = nlohmann::json::array();
  expect_error(with(pp), "post_processor.special_tokens", "expected an object, got array");

  // The template's own shape.
  pp = good;
  pp.erase("single");
  expect_error(with(pp), "post_processor.single", "missing");
  pp["single"] = "<|x|> $A";
  expect_error(with(pp), "post_processor.single", "expected an array, got string");
  pp = good;
  pp["single"][1] = "$A";
  expect_error(with(pp), "post_processor.single[1]", "expected an object, got string");
  pp["single"][1] = {{"Sequence", {{"id", "A"}}}, {"SpecialToken", {{"id", "<R>"}}}};
  expect_error(with(pp), "post_processor.single[1]",
               "expected {\"SpecialToken\": {...}} or {\"Sequence\": {...}}");
  pp["single"][1] = {{"Text", {{"id", "A"}}}};
  expect_error(with(pp), "post_processor.single[1]", "expected {\"SpecialToken\"");
  pp["single"][1] = {{"Sequence", {{"id", "B"}, {"type_id", 1}}}};
  expect_error(with(pp), "post_processor.single[1].Sequence.id",
               "is B: a template for one sequence has only sequence A");
  pp["single"][1] = {{"Sequence", {{"id", "C"}}}};
  expect_error(with(pp), "post_processor.single[1].Sequence.id", "is \"C\", expected A or B");
  pp["single"][1] = {{"Sequence", {{"id", 0}}}};
  expect_error(with(pp), "post_processor.single[1].Sequence.id", "expected a string, got number");
  pp["single"][1] = {{"Sequence", "A"}};
  expect_error(with(pp), "post_processor.single[1].Sequence", "expected an object, got string");
  pp["single"][1] = {{"SpecialToken", {{"type_id", 0}}}};
  expect_error(with(pp), "post_processor.single[1].SpecialToken.id", "missing");

  // BertProcessing and RobertaProcessing: cls and sep are [token, id].
  const nlohmann::json bert = {
      {"type", "BertProcessing"}, {"sep", {"<R>", 103}}, {"cls", {"<|x|>", 100}}};
  EXPECT_EQ(with(bert), "");
  nlohmann::json b = bert;
  b["cls"] = 100;
  expect_error(with(b), "post_processor.cls", "expected an array, got number");
  b["cls"] = {"<|x|>"};
  expect_error(with(b), "post_processor.cls", "expected [token, id], got 1 elements");
  b["cls"] = {100, "<|x|>"};
  expect_error(with(b), "post_processor.cls[0]", "expected a string, got number");
  b["cls"] = {"<|x|>", 7777};
  expect_error(with(b), "post_processor.cls[1]", "is 7777, not a token of this tokenizer");
  b = bert;
  b["type"] = "RobertaProcessing";
  b.erase("sep");
  expect_error(with(b), "post_processor.sep", "missing");

  // Sequence: processors is an array; nesting has a bound.
  expect_error(with({{"type", "Sequence"}}), "post_processor.processors", "missing");
  expect_error(with({{"type", "Sequence"}, {"processors", {{"type", "ByteLevel"}}}}),
               "post_processor.processors", "expected an array, got object");
  expect_error(with({{"type", "Sequence"}, {"processors", nlohmann::json::array({"ByteLevel"})}}),
               "post_processor.processors[0]", "expected an object, got string");
  nlohmann::json deep = {{"type", "ByteLevel"}};
  for (int i = 0; i < 1000; ++i) deep = {{"type", "Sequence"}, {"processors", {deep}}};
  EXPECT_NE(with(deep).find("Sequences nest more than " + std::to_string(kMaxSequenceDepth) + " deep"),
            std::string::npos);
}

// `depth` Sequences, each holding the next in its list `member`, around `leaf`; as text, since
// nlohmann's dump() would recurse as deep.
std::string nested_sequences(const std::string& member, const std::string& leaf, int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += R"({"type": "Sequence", ")" + member + R"(": [)";
  s += leaf;
  for (int i = 0; i < depth; ++i) s += "]}";
  return s;
}

// Sequences nest at most kMaxSequenceDepth deep. A file nesting them without end is refused at
// once: each level's recursion and longer field path made a 100,000-deep one need gigabytes.
TEST(Malformed, NestedSequences) {
  const std::string text = tiny_json_text();
  const std::string normalizer = R"("normalizer": {"type": "NFC"})";
  ASSERT_NE(text.find(normalizer), std::string::npos);
  const auto with_normalizer = [&](int depth) {
    std::string t = text;
    t.replace(t.find(normalizer), normalizer.size(),
              R"("normalizer": )" + nested_sequences("normalizers", R"({"type": "NFC"})", depth));
    return t;
  };
  const size_t pre_begin = text.find(R"("pre_tokenizer")");
  const size_t pre_end = text.find(R"("post_processor")");
  ASSERT_LT(pre_begin, pre_end);
  const auto with_pre_tokenizer = [&](int depth) {
    std::string t = text;
    t.replace(pre_begin, pre_end - pre_begin,
              R"("pre_tokenizer": )" +
                  nested_sequences("pretokenizers", R"({"type": "ByteLevel", "use_regex": false})", depth) + ", ");
    return t;
  };
  EXPECT_EQ(load_error(with_normalizer(kMaxSequenceDepth)), "");
  EXPECT_EQ(load_error(with_pre_tokenizer(kMaxSequenceDepth)), "");
  const std::string too_deep = "Sequences nest more than " + std::to_string(kMaxSequenceDepth) + " deep";
  for (const int depth : {kMaxSequenceDepth + 1, 100000}) {
    expect_error(load_error(with_normalizer(depth)), "normalizers[0]", too_deep);
    expect_error(load_error(with_pre_tokenizer(depth)), "pretokenizers[0]", too_deep);
  }
}

TEST(Malformed, AddedTokens) {
  nlohmann::json j = tiny_json();
  j["added_tokens"][0].erase("id");
  expect_error(json_error(j), "added_tokens[0].id", "missing");

  j = tiny_json();
  j["added_tokens"][0]["id"] = 1.5;
  expect_error(json_error(j), "added_tokens[0].id", "expected an integer, got number");

  j = tiny_json();
  j["added_tokens"][1]["content"] = 5;
  expect_error(json_error(j), "added_tokens[1].content", "expected a string, got number");

  j = tiny_json();
  j["added_tokens"][2]["content"] = "";
  expect_error(json_error(j), "added_tokens[2].content", "is empty");

  j = tiny_json();
  j["added_tokens"][0]["special"] = "true";
  expect_error(json_error(j), "added_tokens[0].special", "expected true or false");

  j = tiny_json();
  j["added_tokens"][3]["id"] = 100;
  expect_error(json_error(j), "added_tokens[3].id", "id 100 is also added_tokens[0]");

  j = tiny_json();
  j["added_tokens"][3]["content"] = "<|x|>";
  expect_error(json_error(j), "added_tokens[3].content", "\"<|x|>\" is also added_tokens[0]");

  j = tiny_json();
  j["added_tokens"] = {{"id", 1}};
  expect_error(json_error(j), "added_tokens", "expected an array, got object");
}

TEST(Malformed, TokenizerConfig) {
  const std::string text = tiny_json_text();
  EXPECT_EQ(load_error(text, "{\"eos_token\": \"<|x|>\", \"bos_token\": null}"), "");
  const Tokenizer tok = Tokenizer::from_json(
      text, "{\"eos_token\": {\"content\": \"<|x|>\"}, \"pad_token\": \"ab\"}");
  EXPECT_EQ(tok.special_tokens().eos, tiny::x_special);
  EXPECT_EQ(tok.special_tokens().pad, tiny::ab);
  EXPECT_FALSE(tok.special_tokens().bos.has_value());

  const std::string bad_json = load_error(text, "{\"eos_token\": ");
  EXPECT_NE(bad_json.find("dir/tokenizer_config.json: not valid JSON"), std::string::npos)
      << bad_json;
  const std::string unknown = load_error(text, "{\"eos_token\": \"<|nope|>\"}");
  EXPECT_NE(unknown.find("dir/tokenizer_config.json: eos_token: \"<|nope|>\" is not a token"),
            std::string::npos)
      << unknown;
  const std::string wrong_type = load_error(text, "{\"bos_token\": 3}");
  EXPECT_NE(wrong_type.find("bos_token: expected a string, got number"), std::string::npos)
      << wrong_type;
}

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("wgx_tok_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
               "_" + std::to_string(reinterpret_cast<uintptr_t>(this)))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, std::string_view text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }

 private:
  fs::path path_;
};

TEST(Malformed, Files) {
  const TempDir dir;
  try {
    Tokenizer::load(dir.path());
    FAIL() << "loaded a folder without tokenizer.json";
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("this folder has no tokenizer.json"), std::string::npos)
        << e.what();
  }
  try {
    Tokenizer::load(dir.path() / "missing.json");
    FAIL() << "loaded a missing file";
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  // A folder with both files loads, from the folder or the file.
  dir.write("tokenizer.json", tiny_json_text());
  dir.write("tokenizer_config.json", "{\"eos_token\": \"<|x|>\"}");
  EXPECT_EQ(Tokenizer::load(dir.path()).special_tokens().eos, tiny::x_special);
  EXPECT_EQ(Tokenizer::load(dir.path() / "tokenizer.json").encode("abc"),
            std::vector<int32_t>{tiny::abc});
  // A broken config beside it is an error, naming that file.
  dir.write("tokenizer_config.json", "{");
  try {
    Tokenizer::load(dir.path());
    FAIL() << "loaded with a broken tokenizer_config.json";
  } catch (const TokenizerError& e) {
    EXPECT_EQ(e.source(), (dir.path() / "tokenizer_config.json").string());
  }
}

// The real Qwen3 file, cut short, is rejected too.
TEST(Malformed, TruncatedRealFile) {
  const Reference& ref = reference("qwen3");
  const fs::path file = tokenizer_folder(ref) / "tokenizer.json";
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << file << " is missing: run scripts/setup.sh to fetch the reference tokenizers";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const size_t cut : {text.size() / 3, text.size() - 1}) {
    expect_error(load_error(std::string_view(text).substr(0, cut)), "", "not valid JSON");
  }
}

}  // namespace
}  // namespace wgx::tokenizer::test
