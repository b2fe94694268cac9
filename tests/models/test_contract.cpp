// The graph load_hf emits follows model.h's contract (no GPU needed): input "tokens" i32 [1, seq],
// syms "seq" and "input_pos", output "logits" f32 [1, vocab] (or [1, seq, vocab]), KV caches
// "layers.<i>.k_cache" / "v_cache" [1, kv_heads, max_seq, head_dim] in f16 or f32, weights in the
// requested format with norms in the activations' dtype, and a tied lm_head sharing the table.
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "models/model.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {
namespace {

using graph::DType;

const graph::TensorType& named_type(const graph::Graph& g, const std::vector<graph::NamedValue>& list,
                                    const std::string& name) {
  for (const auto& nv : list) {
    if (nv.name == name) return g.type(nv.value);
  }
  throw std::runtime_error("no " + name);
}

const graph::TensorType* constant_type(const graph::Graph& g, const std::string& name) {
  for (const auto& c : g.constants) {
    if (c.name == name) return &g.type(c.value);
  }
  return nullptr;
}

const graph::TensorType* buffer_type(const graph::Graph& g, const std::string& name) {
  for (const auto& b : g.buffers) {
    if (b.name == name) return &g.type(b.value);
  }
  return nullptr;
}

BuiltModel load(const TinySpec& spec, LoadOptions o) {
  TempDir dir;
  write_checkpoint(make_tiny(spec), dir.path());
  return load_hf(dir.path(), o);
}

TEST(Contract, InputsOutputsCachesAndWeights) {
  TinySpec spec;  // max_position 64
  LoadOptions o;
  o.max_seq = 1000;  // clamped to max_position_embeddings
  o.max_prefill = 9;
  const BuiltModel m = load(spec, o);
  const graph::Graph& g = m.graph;
  const auto seq = graph::find_sym(g, "seq");
  const auto pos = graph::find_sym(g, "input_pos");
  ASSERT_TRUE(seq && pos);
  EXPECT_EQ(g.syms[seq->index].min, 1);
  EXPECT_EQ(g.syms[seq->index].max, 9);
  EXPECT_EQ(g.syms[pos->index].max, 63);
  EXPECT_EQ(named_type(g, g.inputs, "tokens"), (graph::TensorType{DType::i32, {1, *seq}, {}}));
  EXPECT_EQ(named_type(g, g.outputs, "logits"), (graph::TensorType{DType::f32, {1, 96}, {}}));
  for (int i = 0; i < 2; ++i) {
    for (const char* kv : {"k_cache", "v_cache"}) {
      const auto* t = buffer_type(g, "layers." + std::to_string(i) + "." + kv);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(*t, (graph::TensorType{DType::f16, {1, 2, 64, 16}, {}}));
    }
  }
  // The seen set of the device's repetition penalty: a bit per token of the 96.
  const auto* seen = buffer_type(g, "seen_tokens");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(*seen, (graph::TensorType{DType::i32, {3}, {}}));
  EXPECT_EQ(g.mutations.size(), 5u);
  // Q4 by default, with f16 scales in groups of 32; q, k and v stacked into one weight.
  const auto* qkv = constant_type(g, "model.layers.0.self_attn.qkv_proj.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(*qkv, (graph::TensorType{DType::q4gsw, {64 + 32 + 32, 64}, {32, DType::f16}}));
  EXPECT_EQ(constant_type(g, "model.embed_tokens.weight")->dtype, DType::q4gsw);
  EXPECT_EQ(constant_type(g, "lm_head.weight")->dtype, DType::q4gsw);
  EXPECT_EQ(*constant_type(g, "model.norm.weight"), (graph::TensorType{DType::f32, {64}, {}}));
  EXPECT_EQ(constant_type(g, "model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_EQ(m.config.num_layers, 2);
}

TEST(Contract, AllLogitsTiedF32AndQwen3Norms) {
  TinySpec spec;
  spec.arch = Architecture::Qwen3;
  spec.head_dim = 128;
  spec.tied = true;
  spec.store = StoreAs::BF16;
  LoadOptions o;
  o.weights = WeightFormat::F32;
  o.half_kv_cache = false;
  o.all_logits = true;
  o.max_prefill = 4;
  const BuiltModel m = load(spec, o);
  const graph::Graph& g = m.graph;
  const auto seq = graph::find_sym(g, "seq");
  EXPECT_EQ(named_type(g, g.outputs, "logits"), (graph::TensorType{DType::f32, {1, *seq, 96}, {}}));
  EXPECT_EQ(*buffer_type(g, "layers.1.v_cache"), (graph::TensorType{DType::f32, {1, 2, 64, 128}, {}}));
  EXPECT_EQ(constant_type(g, "lm_head.weight"), nullptr);  // tied: the table serves as lm_head
  EXPECT_EQ(*constant_type(g, "model.layers.1.self_attn.k_norm.weight"), (graph::TensorType{DType::f32, {128}, {}}));
  EXPECT_EQ(*constant_type(g, "model.layers.0.self_attn.o_proj.weight"),
            (graph::TensorType{DType::f32, {64, 4 * 128}, {}}));
}

TEST(Contract, F16WeightsRunF16Activations) {
  LoadOptions o;
  o.weights = WeightFormat::F16;
  const BuiltModel m = load({}, o);
  const graph::Graph& g = m.graph;
  EXPECT_EQ(constant_type(g, "model.embed_tokens.weight")->dtype, DType::f16);
  EXPECT_EQ(constant_type(g, "model.norm.weight")->dtype, DType::f16);
  EXPECT_EQ(named_type(g, g.outputs, "logits").dtype, DType::f32);  // cast once, at the end
}

}  // namespace
}  // namespace wgx::models::testing
