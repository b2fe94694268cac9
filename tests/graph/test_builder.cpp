// GraphBuilder: building a small model, and the errors a builder call reports at once.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/error.h"
#include "graph_test_util.h"
#include "tiny_model.h"

namespace wgx::graph::testing {
namespace {

// The message of the GraphError that `fn` throws, or "" when it throws nothing.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(stmt, text)                                                  \
  do {                                                                            \
    const std::string msg_ = error_of([&] { stmt; });                             \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: '" << msg_ << "'"; \
  } while (0)

TEST(GraphBuilder, BuildsTinyModel) {
  TinyModel m;
  const Graph g = m.b.build();
  const SymTable& syms = g.syms;
  EXPECT_EQ(to_string(g.type(m.logits), &syms), "f32[1, seq_len, 37]");
  EXPECT_EQ(to_string(g.type(m.next), &syms), "i32[1, seq_len]");
  EXPECT_EQ(to_string(g.type(m.mask), &syms), "bool[1, seq_len]");
  EXPECT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.outputs.size(), 4u);
  EXPECT_EQ(g.constants.size(), 6u);
  ASSERT_EQ(g.buffers.size(), 2u);
  EXPECT_EQ(g.buffers[0].init, BufferInit::Zeros);
  EXPECT_EQ(g.buffers[1].init, BufferInit::Constant);
  EXPECT_EQ(g.constants[g.buffers[1].constant].name, "counter.init");
  ASSERT_EQ(g.mutations.size(), 2u);
  EXPECT_FALSE(g.mutations[0].also_output);               // the cache update is not returned
  EXPECT_TRUE(g.mutations[1].also_output);                // the counter is also a graph output
  EXPECT_EQ(producers(g)[m.logits], g.nodes.size() - 5);  // argmax, two updates and lt follow
  EXPECT_EQ(use_counts(g)[m.embed], 2u);                  // tied embedding
  EXPECT_EQ(find_sym(g, "input_pos"), m.pos);
}

TEST(GraphBuilder, FillsAttributeDefaults) {
  GraphBuilder b;
  const ValueId x = b.input("x", DType::f32, {113, 37});
  const ValueId y = b.op1("slice", {x}, {{"start", 11}});
  const Node& n = b.graph().nodes.back();
  EXPECT_EQ(n.attrs.at("dim").as_int(), 0);
  EXPECT_EQ(n.attrs.at("step").as_int(), 1);
  EXPECT_EQ(b.type(y).shape, (Shape{102, 37}));
}

TEST(GraphBuilder, OpErrorsNameTheNode) {
  GraphBuilder b;
  const ValueId x = b.input("x", DType::f32, {113, 37});
  b.op1("exp", {x});
  EXPECT_ERROR(b.op("nope", {x}, {}, "blk.0"), "node 1 'blk.0' (nope): unknown op");
  EXPECT_ERROR(b.op1("softmax", {x}, {{"dim", 5}}, "attn"),
               "node 1 'attn' (softmax): dim 5 is out of range");
  EXPECT_ERROR(b.op1("add", {x, 999}), "node 1 (add): input 1 is %999, which does not exist");
  EXPECT_ERROR(b.op1("add", {x, b.input("y", DType::f32, {37, 113})}),
               "node 1 (add): shapes [113, 37] and [37, 113]");
  EXPECT_EQ(b.graph().nodes.size(), 1u);  // failed calls add nothing
}

TEST(GraphBuilder, RejectsBadDeclarations) {
  GraphBuilder b;
  const SymId s = b.sym("seq_len", 1, 128);
  EXPECT_ERROR(b.sym("seq_len", 1, 2), "declared twice");
  EXPECT_ERROR(b.sym("bad", 5, 4), "range [5, 4]");
  EXPECT_ERROR(b.sym("neg", -1, 4), "range [-1, 4]");
  EXPECT_ERROR(b.sym("", 0, 4), "without a name");
  b.input("x", DType::f32, {1, s});
  EXPECT_ERROR(b.input("x", DType::f32, {1}), "already used");
  EXPECT_ERROR(b.constant("x", DType::f32, {1}, std::vector<uint8_t>(4)), "already used");
  EXPECT_ERROR(b.input("q", DType::q4gsw, {32}), "cannot be an input");
  EXPECT_ERROR(b.input("big", DType::f32, {1, 2, 3, 4, 5, 6, 7, 8, 9}), "rank 9");
  EXPECT_ERROR(b.input("neg", DType::f32, {-3}), "dim 0");
  EXPECT_ERROR(b.input("nosym", DType::f32, {SymId{5}}), "sym 5");
  EXPECT_ERROR(b.constant("w", DType::f32, {11, 3}, std::vector<uint8_t>(131)), "131 bytes given");
  EXPECT_ERROR(b.constant("w", DType::f32, {s}, std::vector<uint8_t>(4)), "must be constant");
  EXPECT_ERROR(b.constant("w", TensorType{DType::q4gsw, {3, 48}, {32, DType::f32}},
                          std::vector<uint8_t>(10)),
               "not a multiple of the group size");
  EXPECT_ERROR(b.constant("w", TensorType{DType::f32, {2}, {}}, WeightRef{7, 0, 8}),
               "weight blob 7 does not exist");
  EXPECT_ERROR(b.mutable_buffer("c", DType::f32, {s}), "must be constant");
  EXPECT_ERROR(b.mutable_buffer("c", DType::f32, {2}, BufferInit::Constant),
               "give the initial constant");
  EXPECT_ERROR(b.mutable_buffer("c", 0), "is not a constant");
  EXPECT_ERROR(b.output("o", 12345), "not a tensor value");
  EXPECT_ERROR(b.output("o", b.scalar(1.0)), "not a tensor value");
}

TEST(GraphBuilder, ConstantFromBorrowedBlob) {
  GraphBuilder b;
  const std::vector<uint8_t> blob = pattern(4096, 9);
  const uint32_t index = b.weights().add_view(blob);
  const ValueId w =
      b.constant("w", TensorType{DType::f16, {11, 37}, {}}, WeightRef{index, 256, 11 * 37 * 2});
  b.output("w", w);
  const Graph g = b.build();
  EXPECT_EQ(b.weights().bytes(g.constants[0].data).data(), blob.data() + 256);
  EXPECT_ERROR(b.constant("v", TensorType{DType::f32, {1024}, {}}, WeightRef{index, 256, 4096}),
               "outside blob");
}

TEST(GraphBuilder, MutationRules) {
  GraphBuilder b;
  const ValueId cache = b.mutable_buffer("cache", DType::f16, {2, 11});
  const ValueId x = b.input("x", DType::f16, {2, 11});
  const ValueId y = b.op1("add", {cache, x});
  EXPECT_ERROR(b.mutate(x, y), "not a mutable buffer");
  EXPECT_ERROR(b.mutate(cache, x), "is not a node output");
  const ValueId wrong = b.op1("to_copy", {y}, {{"dtype", "f32"}});
  EXPECT_ERROR(b.mutate(cache, wrong), "value is f32[2, 11] but the buffer is f16[2, 11]");
  b.mutate(cache, y);
  EXPECT_ERROR(b.mutate(cache, y), "already mutated");
  // Reading the old state after the new one was written would see the new data: refused.
  b.op1("neg", {cache}, {}, "late.read");
  EXPECT_ERROR(b.build(),
               "node 2 'late.read' (neg) reads the buffer's old value after node 0 (add)");
}

}  // namespace
}  // namespace wgx::graph::testing
