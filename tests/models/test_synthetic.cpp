// Synthetic models (models/synthetic.h) need no GPU to check: the named geometries, a graph that
// validates, weights that depend on the seed only and have the intended spread, and the row-
// parallel q4 encoding that loading them relies on giving the bytes of the serial quantizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph/validate.h"
#include "models/encode.h"
#include "models/synthetic.h"
#include "ops/quant/quantize.h"

namespace wgx::models::testing {
namespace {

LoadOptions quiet() {
  LoadOptions o;
  o.max_seq = 64;
  return o;
}

std::vector<std::vector<uint8_t>> constant_bytes(const BuiltModel& m) {
  std::vector<std::vector<uint8_t>> out;
  for (const graph::Constant& c : m.graph.constants) {
    const auto bytes = m.weights.bytes(c.data);
    out.emplace_back(bytes.begin(), bytes.end());
  }
  return out;
}

TEST(Synthetic, NamedGeometries) {
  const auto llama = synthetic_config("llama-3.2-1b");
  ASSERT_TRUE(llama);
  EXPECT_EQ(llama->vocab_size, 128256);
  EXPECT_EQ(llama->hidden_size, 2048);
  EXPECT_EQ(llama->num_layers, 16);
  EXPECT_EQ(llama->num_heads, 32);
  EXPECT_EQ(llama->num_kv_heads, 8);
  EXPECT_EQ(llama->head_dim, 64);
  EXPECT_EQ(llama->intermediate_size, 8192);
  EXPECT_TRUE(llama->rope_scaling && llama->tie_word_embeddings);
  const auto qwen = synthetic_config("qwen3-0.6b");
  ASSERT_TRUE(qwen);
  EXPECT_EQ(qwen->architecture, Architecture::Qwen3);
  EXPECT_EQ(qwen->vocab_size, 151936);
  EXPECT_EQ(qwen->num_layers, 28);
  EXPECT_EQ(qwen->head_dim, 128);
  EXPECT_FALSE(qwen->rope_scaling);
  // The 8B geometries (their config.json files): untied output projections.
  const auto llama8 = synthetic_config("llama-3.1-8b");
  ASSERT_TRUE(llama8);
  EXPECT_EQ(llama8->hidden_size, 4096);
  EXPECT_EQ(llama8->intermediate_size, 14336);
  EXPECT_EQ(llama8->num_layers, 32);
  EXPECT_EQ(llama8->num_heads, 32);
  EXPECT_EQ(llama8->num_kv_heads, 8);
  EXPECT_EQ(llama8->head_dim, 128);
  EXPECT_EQ(llama8->vocab_size, 128256);
  ASSERT_TRUE(llama8->rope_scaling);
  EXPECT_EQ(llama8->rope_scaling->factor, 8.0);
  EXPECT_FALSE(llama8->tie_word_embeddings);
  const auto qwen8 = synthetic_config("qwen3-8b");
  ASSERT_TRUE(qwen8);
  EXPECT_EQ(qwen8->architecture, Architecture::Qwen3);
  EXPECT_EQ(qwen8->hidden_size, 4096);
  EXPECT_EQ(qwen8->intermediate_size, 12288);
  EXPECT_EQ(qwen8->num_layers, 36);
  EXPECT_EQ(qwen8->num_heads, 32);
  EXPECT_EQ(qwen8->num_kv_heads, 8);
  EXPECT_EQ(qwen8->head_dim, 128);
  EXPECT_FALSE(qwen8->tie_word_embeddings);
  EXPECT_FALSE(synthetic_config("llama-9000"));
  EXPECT_EQ(synthetic_names().size(), 5u);
}

TEST(Synthetic, DemoTinyGraphValidates) {
  ModelConfig config = *synthetic_config("demo-tiny");
  const BuiltModel llama = build_decoder(config, synthetic_weights(1), quiet());
  EXPECT_NO_THROW(graph::validate(llama.graph));
  // The Qwen3 path asks the source for q_norm / k_norm as well.
  config.architecture = Architecture::Qwen3;
  const BuiltModel qwen = build_decoder(config, synthetic_weights(1), quiet());
  EXPECT_NO_THROW(graph::validate(qwen.graph));
  EXPECT_GT(qwen.graph.constants.size(), llama.graph.constants.size());
}

// LoadOptions::share_layer_weights (bench --shared-layers): the layers' products read layer 0's
// weights: four matrices fewer per layer after the first (qkv, o_proj, gate/up and down),
// and the graph still validates; without it every layer has its own.
TEST(Synthetic, SharedLayerWeights) {
  const ModelConfig config = *synthetic_config("demo-tiny");
  LoadOptions shared = quiet();
  shared.share_layer_weights = true;
  const BuiltModel own = build_decoder(config, synthetic_weights(1), quiet());
  const BuiltModel one = build_decoder(config, synthetic_weights(1), shared);
  EXPECT_NO_THROW(graph::validate(one.graph));
  ASSERT_EQ(config.num_layers, 2);
  EXPECT_EQ(own.graph.constants.size() - one.graph.constants.size(), 4u);
  // Each layer's MLP node: its weight inputs (the last two) are the same values in `one` only.
  auto mlp_weights = [](const BuiltModel& m) {
    std::vector<std::vector<graph::ValueId>> out;
    for (const graph::Node& n : m.graph.nodes) {
      if (n.op == "add_rms_norm_linear_swiglu_linear") out.push_back({n.inputs.end() - 2, n.inputs.end()});
    }
    return out;
  };
  const auto shared_mlps = mlp_weights(one), own_mlps = mlp_weights(own);
  ASSERT_EQ(shared_mlps.size(), 2u);
  ASSERT_EQ(own_mlps.size(), 2u);
  EXPECT_EQ(shared_mlps[0], shared_mlps[1]);
  EXPECT_NE(own_mlps[0], own_mlps[1]);
}

TEST(Synthetic, SameSeedSameWeights) {
  const ModelConfig config = *synthetic_config("demo-tiny");
  const auto a = constant_bytes(build_decoder(config, synthetic_weights(7), quiet()));
  const auto b = constant_bytes(build_decoder(config, synthetic_weights(7), quiet()));
  const auto c = constant_bytes(build_decoder(config, synthetic_weights(8), quiet()));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Synthetic, WeightSpread) {
  const WeightSource source = synthetic_weights(3);
  const std::vector<float> norm = source.tensor("model.norm.weight", {512}, "").values();
  ASSERT_EQ(norm.size(), 512u);
  EXPECT_GE(*std::min_element(norm.begin(), norm.end()), 0.7f);
  EXPECT_LE(*std::max_element(norm.begin(), norm.end()), 1.3f);

  const int64_t rows = 256, fan_in = 1024;
  const std::vector<float> w = source.tensor("model.layers.0.mlp.up_proj.weight", {rows, fan_in}, "").values();
  ASSERT_EQ(w.size(), static_cast<size_t>(rows * fan_in));
  double sum = 0, squares = 0, largest = 0;
  for (float v : w) {
    sum += v;
    squares += double{v} * v;
    largest = std::max(largest, std::abs(double{v}));
  }
  const double mean = sum / static_cast<double>(w.size());
  const double sd = std::sqrt(squares / static_cast<double>(w.size()) - mean * mean);
  EXPECT_NEAR(sd * std::sqrt(static_cast<double>(fan_in)), 1.0, 0.01);
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_LE(largest, std::sqrt(3.0 / static_cast<double>(fan_in)) * (1 + 1e-6));  // f32 rounding
  // Rows are streams of their own: no two alike.
  EXPECT_FALSE(std::equal(w.begin(), w.begin() + fan_in, w.begin() + fan_in));
}

TEST(Synthetic, ParallelQ4MatchesSerial) {
  // 3 MiB elements: more than one thread's share wherever there are several cores.
  const int64_t rows = 3 * 1024 + 7, cols = 1024;
  const SourceTensor t = synthetic_weights(5).tensor("model.layers.0.mlp.gate_proj.weight", {rows, cols}, "");
  const std::vector<float> w = t.values();
  LoadOptions o;
  const Encoded e = encode_matrix(t, o, graph::DType::f32, {"w", ""});
  EXPECT_EQ(e.bytes, ops::quantize_q4gsw(w.data(), rows, cols, o.q4_group_size, o.q4_scale_dtype));
}

}  // namespace
}  // namespace wgx::models::testing
