// Converted models (models/wgx_model_file.h): a tiny checkpoint loaded from its folder, written
// to a .wgx and loaded back gives the same config and, on the GPU, bit-identical logits over a
// prefill and decode steps (same weights, same graph); a file whose metadata lacks a key or has
// a bad value is refused with an error naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "format/wgx_file.h"
#include "model_test_util.h"
#include "models/error.h"
#include "models/wgx_model_file.h"
#include "runtime_test_util.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {
namespace {

using runtime::testing::shared_context;

const TokenizerTexts kTokenizer{R"({"model": {"type": "BPE"}})", std::string(R"({"eos_token": "<e>"})")};

struct Case {
  const char* name;
  TinySpec spec;
  WeightFormat weights;
  bool half_kv;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

TinySpec llama_scaled() {
  TinySpec s;
  s.llama3_scaling = true;
  s.rope_theta = 500000;
  s.store = StoreAs::BF16;
  s.seed = 21;
  return s;
}

TinySpec qwen3_tied() {
  TinySpec s;
  s.arch = Architecture::Qwen3;
  s.head_dim = 32;
  s.tied = true;
  s.rms_norm_eps = 1e-6;
  s.seed = 22;
  return s;
}

LoadOptions options_of(const Case& c) {
  LoadOptions o;
  o.weights = c.weights;
  o.half_kv_cache = c.half_kv;
  o.max_seq = 1000;  // clamped to max_position_embeddings (64): the file must say 64
  o.max_prefill = 8;
  return o;
}

void expect_same_config(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);  // exact: reals are written in round-trip form
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  ASSERT_EQ(a.rope_scaling.has_value(), b.rope_scaling.has_value());
  if (a.rope_scaling) {
    EXPECT_EQ(a.rope_scaling->factor, b.rope_scaling->factor);
    EXPECT_EQ(a.rope_scaling->low_freq_factor, b.rope_scaling->low_freq_factor);
    EXPECT_EQ(a.rope_scaling->high_freq_factor, b.rope_scaling->high_freq_factor);
    EXPECT_EQ(a.rope_scaling->original_max_position, b.rope_scaling->original_max_position);
  }
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.eos_token_ids, b.eos_token_ids);
}

class WgxModelFile : public ::testing::TestWithParam<Case> {};

TEST_P(WgxModelFile, LoadsTheSameModelAndLogitsAreIdentical) {
  const Case& c = GetParam();
  TempDir dir;
  TinyModel tiny = make_tiny(c.spec);
  tiny.config.eos_token_ids = {2, 7};  // a list, to round-trip the comma form
  write_checkpoint(tiny, dir.path());
  const LoadOptions o = options_of(c);
  const BuiltModel folder = load_hf(dir.path(), o);
  const auto path = dir.path() / "model.wgx";
  write_model_wgx(path, folder, o, kTokenizer);

  const WgxModel file = load_wgx(path);
  expect_same_config(file.model.config, folder.config);
  expect_same_config(file.model.config, tiny.config);
  EXPECT_EQ(file.options.weights, c.weights);
  EXPECT_EQ(file.options.half_kv_cache, c.half_kv);
  EXPECT_EQ(file.options.max_seq, 64);
  EXPECT_EQ(file.options.max_prefill, 8);
  EXPECT_EQ(file.tokenizer_json(), kTokenizer.tokenizer_json);
  ASSERT_NE(file.tokenizer_config_json(), nullptr);
  EXPECT_EQ(*file.tokenizer_config_json(), *kTokenizer.tokenizer_config_json);
  EXPECT_EQ(file.model.graph.nodes, folder.graph.nodes);

  runtime::Program a(shared_context(), folder.graph, folder.weights);
  runtime::Program b(shared_context(), file.model.graph, file.model.weights);
  std::vector<int32_t> tokens = {5, 17, 42, 3, 88, 61, 29};
  int64_t pos = 0;
  for (int step = 0; step < 4; ++step) {
    const std::vector<float> want = gpu_step(a, tokens, pos);
    const std::vector<float> got = gpu_step(b, tokens, pos);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "step " << step << " logit " << i;
    pos += static_cast<int64_t>(tokens.size());
    tokens = {static_cast<int32_t>(std::max_element(got.begin(), got.end()) - got.begin())};
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, WgxModelFile,
                         ::testing::Values(Case{"llama_llama3_q4_f16kv", llama_scaled(), WeightFormat::Q4, true},
                                           Case{"qwen3_tied_q4_f16kv", qwen3_tied(), WeightFormat::Q4, true},
                                           Case{"llama_f16_f32kv", TinySpec{}, WeightFormat::F16, false}),
                         [](const auto& p) { return std::string(p.param.name); });

// One converted file, and copies of it with the metadata changed.
class WgxModelMetadata : public ::testing::Test {
 protected:
  void SetUp() override {
    write_checkpoint(make_tiny(llama_scaled()), dir_.path());
    LoadOptions o;
    o.max_seq = 32;
    write_model_wgx(good(), load_hf(dir_.path(), o), o, kTokenizer);
  }
  std::filesystem::path good() const { return dir_.path() / "good.wgx"; }

  // load_wgx of good() with `change` applied to its metadata; the ModelError's message.
  template <typename Change>
  std::string load_changed(Change change) {
    const format::WgxFile f = format::open_wgx(good().string());
    format::Metadata md = f.metadata();
    change(md);
    const auto path = dir_.path() / "changed.wgx";
    format::write_wgx(path.string(), f.graph(), f.weights(), md);
    try {
      load_wgx(path);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(loaded)";
  }

  TempDir dir_;
};

TEST_F(WgxModelMetadata, MissingKeysAreNamed) {
  for (const char* key : {"wgx.model_metadata", "wgx.arch", "wgx.vocab_size", "wgx.head_dim", "wgx.rope_theta",
                          "wgx.rope_scaling.factor", "wgx.bos_token_id", "wgx.eos_token_ids", "wgx.weights", "wgx.kv",
                          "wgx.max_seq", "wgx.max_prefill", "wgx.tokenizer.json"}) {
    const std::string msg = load_changed([&](format::Metadata& md) { md.erase(key); });
    EXPECT_NE(msg.find(std::string("metadata key ") + key + ": is missing"), std::string::npos) << key << ": " << msg;
    EXPECT_NE(msg.find("changed.wgx"), std::string::npos) << msg;
  }
}

TEST_F(WgxModelMetadata, OptionalTokenizerConfigMayBeAbsent) {
  EXPECT_EQ(load_changed([](format::Metadata& md) { md.erase("wgx.tokenizer_config.json"); }), "(loaded)");
}

TEST_F(WgxModelMetadata, BadValuesAreNamed) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"wgx.model_metadata", "2"},  {"wgx.arch", "gpt2"},         {"wgx.vocab_size", "96x"},
      {"wgx.vocab_size", "0"},      {"wgx.num_kv_heads", "3"},    {"wgx.head_dim", "15"},
      {"wgx.rms_norm_eps", "nan"},  {"wgx.rope_theta", "-1"},     {"wgx.rope_scaling", "yarn"},
      {"wgx.tie_word_embeddings", "yes"}, {"wgx.eos_token_ids", "2,,3"}, {"wgx.bos_token_id", "-1"},
      {"wgx.weights", "q8"},        {"wgx.kv", "bf16"},           {"wgx.max_seq", "48"},
      {"wgx.max_prefill", "7"}};
  for (const auto& [key, value] : bad) {
    const std::string msg = load_changed([&](format::Metadata& md) { md[key] = value; });
    EXPECT_NE(msg.find("metadata key " + key + ":"), std::string::npos) << key << "=" << value << ": " << msg;
  }
}

}  // namespace
}  // namespace wgx::models::testing
