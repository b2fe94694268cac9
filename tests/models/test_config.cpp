// config.json parsing: Llama 3.x and Qwen3 fields, both rope layouts (rope_theta + rope_scaling,
// and transformers 5's rope_parameters), generation_config.json's eos ids, and clear errors for
// what is missing or unsupported.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "models/config.h"
#include "models/error.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {
namespace {

using nlohmann::json;

// A Llama 3.2 1B config.json as Meta publishes it.
const char* kLlama32 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 64,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
  "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "rope_theta": 500000.0,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 128256})";

// Qwen3-0.6B's.
const char* kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

void expect_error(const std::string& text, const std::vector<std::string>& parts) {
  try {
    (void)parse_config(text, "config.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const ModelError& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

std::string edited(const char* base, const std::function<void(json&)>& edit) {
  json j = json::parse(base);
  edit(j);
  return j.dump();
}

TEST(Config, Llama32) {
  const ModelConfig c = parse_config(kLlama32, "config.json");
  EXPECT_EQ(c.architecture, Architecture::Llama);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.intermediate_size, 8192);
  EXPECT_EQ(c.num_layers, 16);
  EXPECT_EQ(c.num_heads, 32);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(c.rope_theta, 500000);
  ASSERT_TRUE(c.rope_scaling);
  EXPECT_DOUBLE_EQ(c.rope_scaling->factor, 32);
  EXPECT_DOUBLE_EQ(c.rope_scaling->low_freq_factor, 1);
  EXPECT_DOUBLE_EQ(c.rope_scaling->high_freq_factor, 4);
  EXPECT_EQ(c.rope_scaling->original_max_position, 8192);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
}

TEST(Config, Qwen3) {
  const ModelConfig c = parse_config(kQwen3, "config.json");
  EXPECT_EQ(c.architecture, Architecture::Qwen3);
  EXPECT_EQ(c.head_dim, 128);  // not hidden / heads = 64
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e6);
  EXPECT_FALSE(c.rope_scaling);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645}));
}

TEST(Config, DefaultsHuggingFaceApplies) {
  const ModelConfig c = parse_config(edited(kLlama32, [](json& j) {
                                       j.erase("head_dim");
                                       j.erase("num_key_value_heads");
                                       j.erase("tie_word_embeddings");
                                       j["rope_scaling"] = nullptr;
                                     }),
                                     "config.json");
  EXPECT_EQ(c.head_dim, 64);  // 2048 / 32
  EXPECT_EQ(c.num_kv_heads, 32);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.rope_scaling);
}

TEST(Config, RopeParametersLayoutOfTransformers5) {
  ModelConfig want = make_tiny({.llama3_scaling = true, .rope_theta = 123456.0}).config;
  const ModelConfig classic = parse_config(config_json(want, false), "config.json");
  const ModelConfig v5 = parse_config(config_json(want, true), "config.json");
  for (const ModelConfig* c : {&classic, &v5}) {
    EXPECT_DOUBLE_EQ(c->rope_theta, 123456.0);
    ASSERT_TRUE(c->rope_scaling);
    EXPECT_EQ(c->rope_scaling->original_max_position, 256);
  }
  want.rope_scaling.reset();
  EXPECT_FALSE(parse_config(config_json(want, true), "config.json").rope_scaling);
  // The older "type" key.
  const ModelConfig typed = parse_config(edited(kLlama32, [](json& j) {
                                           j["rope_scaling"].erase("rope_type");
                                           j["rope_scaling"]["type"] = "llama3";
                                         }),
                                         "config.json");
  EXPECT_TRUE(typed.rope_scaling);
}

TEST(Config, GenerationConfigAddsEosIds) {
  ModelConfig c = parse_config(kQwen3, "config.json");
  apply_generation_config(c, R"({"bos_token_id": 151643, "eos_token_id": [151645, 151643], "do_sample": true})",
                          "generation_config.json");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(c.bos_token_id, 151643);
}

// Long eos lists in both files take time linear in their length (a search of the list for each
// id took minutes at this size).
TEST(Config, ManyEosIdsAreMergedQuickly) {
  constexpr int32_t kCount = 200000;
  json config = json::parse(kQwen3);
  json generation = json::object();
  config["eos_token_id"] = json::array();
  generation["eos_token_id"] = json::array();
  for (int32_t i = 0; i < kCount; ++i) {
    config["eos_token_id"].push_back(i);
    generation["eos_token_id"].push_back(kCount / 2 + i);  // the first half repeats config.json's
  }
  const auto start = std::chrono::steady_clock::now();
  ModelConfig c = parse_config(config.dump(), "config.json");
  apply_generation_config(c, generation.dump(), "generation_config.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(c.eos_token_ids.size(), static_cast<size_t>(kCount + kCount / 2));
  EXPECT_EQ(c.eos_token_ids[kCount], kCount);
  EXPECT_EQ(c.eos_token_ids.back(), kCount + kCount / 2 - 1);
  EXPECT_LT(seconds, 10.0);
}

TEST(Config, LoadsFromFolder) {
  TempDir dir;
  write_text(dir.path() / "config.json", kQwen3);
  write_text(dir.path() / "generation_config.json", R"({"eos_token_id": [151645, 151643]})");
  EXPECT_EQ(load_config(dir.path()).eos_token_ids.size(), 2u);
  std::filesystem::remove(dir.path() / "config.json");
  try {
    (void)load_config(dir.path());
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("has no config.json"), std::string::npos) << e.what();
  }
}

TEST(Config, ClearErrors) {
  expect_error("{", {"config.json", "not valid JSON"});
  // A number past a double's range is nlohmann's out_of_range, not a parse_error.
  expect_error(R"({"head_dim": 641e308})", {"config.json", "not valid JSON", "number overflow"});
  expect_error(edited(kLlama32, [](json& j) { j["architectures"] = {"MistralForCausalLM"}; }),
               {"config.json", "architectures", "MistralForCausalLM", "LlamaForCausalLM and Qwen3ForCausalLM"});
  expect_error(edited(kLlama32, [](json& j) { j.erase("architectures"); }), {"architectures", "missing"});
  for (const char* field : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                            "num_attention_heads", "rms_norm_eps", "rope_theta", "max_position_embeddings"}) {
    expect_error(edited(kQwen3, [&](json& j) { j.erase(field); }), {"config.json", field, "missing"});
  }
  expect_error(edited(kLlama32, [](json& j) { j["hidden_size"] = "2048"; }), {"hidden_size", "not an integer"});
  expect_error(edited(kLlama32, [](json& j) { j["num_key_value_heads"] = 7; }),
               {"num_key_value_heads", "does not divide"});
  expect_error(edited(kLlama32, [](json& j) { j["rope_scaling"]["rope_type"] = "yarn"; }),
               {"rope_scaling.rope_type", "yarn"});
  expect_error(edited(kLlama32, [](json& j) { j["rope_scaling"].erase("original_max_position_embeddings"); }),
               {"rope_scaling.original_max_position_embeddings", "missing"});
  expect_error(edited(kLlama32, [](json& j) { j["attention_bias"] = true; }), {"attention_bias"});
  expect_error(edited(kQwen3, [](json& j) { j["use_sliding_window"] = true; }), {"use_sliding_window"});
  expect_error(edited(kQwen3, [](json& j) { j["hidden_act"] = "gelu"; }), {"hidden_act", "gelu"});
  expect_error(edited(kQwen3, [](json& j) { j["head_dim"] = 63; }), {"head_dim", "odd"});
  // A value too deep to print whole (nlohmann's dump() recursed until the stack overflowed) is
  // shown cut short, as is a long one.
  std::string deep = kLlama32;
  const std::string vocab = R"("vocab_size": 128256)";
  deep.replace(deep.find(vocab), vocab.size(),
               R"("vocab_size": )" + std::string(100000, '[') + std::string(100000, ']'));
  expect_error(deep, {"vocab_size", "is [[[...]]], not an integer"});
  expect_error(edited(kLlama32, [](json& j) { j["hidden_act"] = std::vector<int>(100000, 7); }),
               {"hidden_act", "is [7,7,7", "...", "not a string"});
  try {
    (void)parse_config(edited(kLlama32, [](json& j) { j["hidden_act"] = std::string(100000, 'x'); }), "config.json");
    ADD_FAILURE() << "a hidden_act of 100,000 x's was accepted";
  } catch (const ModelError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
}

}  // namespace
}  // namespace wgx::models::testing
