// validate(): each kind of broken graph is rejected with a message that names the node (index,
// op, label) or the part of the graph, and what is wrong.
#include <gtest/gtest.h>

#include <functional>

#include "graph/error.h"
#include "graph/validate.h"
#include "tiny_model.h"

namespace wgx::graph::testing {
namespace {

class GraphValidate : public ::testing::Test {
 protected:
  void SetUp() override { good_ = model_.b.build(); }

  // Index of the first node running `op`.
  size_t node_of(const std::string& op) const {
    for (size_t i = 0; i < good_.nodes.size(); ++i) {
      if (good_.nodes[i].op == op) return i;
    }
    throw std::runtime_error("no " + op);
  }

  // Applies `edit` to a copy of the good graph and returns validate()'s message.
  std::string broken(const std::function<void(Graph&)>& edit) const {
    Graph g = good_;
    edit(g);
    try {
      validate(g);
    } catch (const GraphError& e) {
      return e.what();
    }
    return "<valid>";
  }

  TinyModel model_;
  Graph good_;
};

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

TEST_F(GraphValidate, AcceptsTheBuiltGraph) { EXPECT_NO_THROW(validate(good_)); }

TEST_F(GraphValidate, UnknownOp) {
  const size_t n = node_of("rms_norm");
  const std::string msg = broken([&](Graph& g) { g.nodes[n].op = "rms_nrom"; });
  EXPECT_HAS(msg, "node " + std::to_string(n) + " 'norm' (rms_nrom): unknown op 'rms_nrom'");
}

TEST_F(GraphValidate, DtypeMismatch) {
  const size_t n = node_of("softmax");
  const std::string msg =
      broken([&](Graph& g) { g.values[g.nodes[n].outputs[0]].type.dtype = DType::f16; });
  EXPECT_HAS(msg, "node " + std::to_string(n) + " (softmax): output 0");
  EXPECT_HAS(msg,
             "declared f16[1, 2, seq_len, seq_len] but the op gives f32[1, 2, seq_len, seq_len]");
}

TEST_F(GraphValidate, ShapeMismatch) {
  const size_t n = node_of("matmul");
  const std::string msg =
      broken([&](Graph& g) { g.values[g.nodes[n].outputs[0]].type.shape[3] = Dim(16); });
  EXPECT_HAS(msg, "'attn.scores' (matmul): output 0");
  EXPECT_HAS(msg, "declared f32[1, 2, seq_len, 16]");
}

TEST_F(GraphValidate, InferenceFailureNamesNode) {
  const size_t n = node_of("softmax");
  const std::string msg =
      broken([&](Graph& g) { g.nodes[n].attrs.insert_or_assign("dim", Attr(9)); });
  EXPECT_HAS(msg, "node " + std::to_string(n) + " (softmax): dim 9 is out of range for rank 4");
}

TEST_F(GraphValidate, DanglingInput) {
  const std::string msg = broken([&](Graph& g) { g.nodes[0].inputs[1] = 100000; });
  EXPECT_HAS(msg, "node 0 'embed' (embedding): input 1 is %100000, which does not exist");
}

TEST_F(GraphValidate, NeverDefined) {
  const std::string msg = broken([&](Graph& g) {
    Value orphan;
    orphan.type = g.type(g.nodes[1].inputs[0]);
    g.values.push_back(orphan);
    g.nodes[1].inputs[0] = static_cast<ValueId>(g.values.size() - 1);
  });
  EXPECT_HAS(msg, "node 1 'norm' (rms_norm): input 0 (%");
  EXPECT_HAS(msg, ") is never defined");
}

TEST_F(GraphValidate, UseBeforeDefinition) {
  const std::string msg = broken([&](Graph& g) { std::swap(g.nodes[0], g.nodes[1]); });
  EXPECT_HAS(msg, "node 0 'norm' (rms_norm): input 0");
  EXPECT_HAS(msg, "is used before its definition by node 1 'embed' (embedding)");
}

TEST_F(GraphValidate, DefinedTwice) {
  const std::string msg = broken([&](Graph& g) { g.nodes[0].outputs[0] = g.inputs[0].value; });
  EXPECT_HAS(msg, "node 0 'embed' (embedding): output 0: value %");
  EXPECT_HAS(msg, "is already defined by input 0 'tokens'");
  const std::string twice =
      broken([&](Graph& g) { g.nodes[1].outputs[0] = g.nodes[0].outputs[0]; });
  EXPECT_HAS(twice, "node 1 'norm' (rms_norm): output 0: value %");
  EXPECT_HAS(twice, "already defined by node 0 'embed' (embedding): output 0");
}

TEST_F(GraphValidate, OutputOfNothing) {
  const std::string msg = broken([&](Graph& g) {
    Value orphan;
    orphan.type = {DType::f32, {3}, {}};
    g.values.push_back(orphan);
    g.outputs[0].value = static_cast<ValueId>(g.values.size() - 1);
  });
  EXPECT_HAS(msg, "output 0 'logits': value %");
  EXPECT_HAS(msg, "is never defined");
  EXPECT_HAS(broken([&](Graph& g) { g.outputs[1].value = 77777; }),
             "output 1 'next': value %77777 does not exist");
  EXPECT_HAS(broken([&](Graph& g) { g.outputs[1].name = "logits"; }),
             "output 1 'logits': the name repeats");
}

TEST_F(GraphValidate, OrphanTensor) {
  const std::string msg = broken([&](Graph& g) { g.values.push_back(Value{}); });
  EXPECT_HAS(msg, "is a tensor that no input, constant, buffer or node defines");
}

TEST_F(GraphValidate, MutationTargetMustBeABuffer) {
  EXPECT_HAS(broken([&](Graph& g) { g.mutations[0].buffer = 9; }),
             "mutation 0: target 9 is not a mutable buffer (the graph has 2)");
  EXPECT_HAS(broken([&](Graph& g) { g.mutations[1].buffer = 0; }),
             "mutation 1 of buffer 'k_cache': the buffer is mutated twice");
}

TEST_F(GraphValidate, MutationTypeMustMatch) {
  const std::string msg = broken([&](Graph& g) { g.mutations[0].value = model_.logits; });
  EXPECT_HAS(msg, "mutation 0 of buffer 'k_cache': value %");
  EXPECT_HAS(msg, "is f32[1, seq_len, 37] but the buffer is f32[1, 2, 48, 32]");
  EXPECT_HAS(broken([&](Graph& g) { g.mutations[0].value = g.buffers[0].value; }),
             "is not a node output");
}

TEST_F(GraphValidate, AlsoOutputMustAgree) {
  EXPECT_HAS(broken([&](Graph& g) { g.mutations[0].also_output = true; }),
             "also_output is set but the value is not a graph output");
  EXPECT_HAS(broken([&](Graph& g) { g.mutations[1].also_output = false; }),
             "also_output is clear but the value is a graph output");
}

TEST_F(GraphValidate, DefinitionsAndNames) {
  EXPECT_HAS(broken([&](Graph& g) { g.constants[1].name = "embed"; }),
             "constant 1 'embed': name 'embed' is already used");
  EXPECT_HAS(broken([&](Graph& g) { g.constants[0].data.bytes -= 4; }),
             "constant 0 'embed': 9468 bytes of data but f32[37, 64] is 9472 bytes");
  EXPECT_HAS(broken([&](Graph& g) { g.buffers[1].constant = 0; }),
             "mutable buffer 1 'counter': is i32[1] but its initial constant is f32[37, 64]");
  EXPECT_HAS(broken([&](Graph& g) { g.buffers[0].constant = 0; }),
             "names an initial constant but does not use it");
  EXPECT_HAS(broken([&](Graph& g) { g.inputs[0].value = g.constants[0].value; }),
             "constant 0 'embed': value %3 is already defined by input 0 'tokens'");
  EXPECT_HAS(broken([&](Graph& g) { g.inputs[0].name.clear(); }), "input 0 '' has no name");
}

TEST_F(GraphValidate, SymsAndValues) {
  EXPECT_HAS(broken([&](Graph& g) { g.syms[1].name = "seq_len"; }),
             "sym 1: name 'seq_len' repeats");
  EXPECT_HAS(broken([&](Graph& g) { g.syms[0].min = 20; }), "sym 'seq_len': range [20, 16]");
  EXPECT_HAS(broken([&](Graph& g) { g.values[g.inputs[0].value].type.shape[1] = Dim(SymId{9}); }),
             "dim 1 refers to sym 9 but the graph has 2");
  EXPECT_HAS(broken([&](Graph& g) {
               g.values[g.inputs[0].value].type.shape[1] = Dim::affine(1, SymId{1}, -1);
             }),
             "takes values in [-1, 46]");
  EXPECT_HAS(
      broken([&](Graph& g) { g.values[g.inputs[0].value].type.dtype = static_cast<DType>(42); }),
      "bad dtype");
}

TEST(GraphDescribeNode, WithAndWithoutLabel) {
  Graph g;
  g.nodes.push_back({"add", {}, {}, {}, ""});
  g.nodes.push_back({"linear", {}, {}, {}, "blk.3.ffn"});
  EXPECT_EQ(describe_node(g, 0), "node 0 (add)");
  EXPECT_EQ(describe_node(g, 1), "node 1 'blk.3.ffn' (linear)");
}

}  // namespace
}  // namespace wgx::graph::testing
