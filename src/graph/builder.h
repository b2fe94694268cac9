// GraphBuilder: the C++ API model builders use. Each call checks what it is given at once (op
// inputs against the op's schema, shapes, names), so a mistake is reported where it is made, with
// the node it concerns; build() then runs the full validation.
//
//   GraphBuilder b;
//   SymId seq = b.sym("seq_len", 1, 128);
//   ValueId tokens = b.input("tokens", DType::i32, {1, seq});
//   ValueId table = b.constant("embed", DType::f32, {32000, 2048}, bytes);
//   ValueId x = b.op1("embedding", {table, tokens});                  // f32[1, seq_len, 2048]
//   ValueId h = b.op1("reshape", {x}, {{"shape", Shape{1, seq, 32, 64}}});
//   b.output("hidden", h);
//   Graph g = b.build();
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/op_schema.h"
#include "graph/weights.h"

namespace wgx::graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(const OpRegistry& registry = OpRegistry::global());

  // A run-time integer in [min, max] (0 <= min <= max <= 2^31-1); names are unique.
  SymId sym(std::string name, int64_t min, int64_t max);
  // The value that passes a sym to an op as an input (e.g. input_pos).
  ValueId sym_value(SymId sym) const;

  ValueId input(std::string name, DType dtype, Shape shape);
  // Constant numbers as op inputs: f32, i64 and bool scalars.
  ValueId scalar(double value);
  ValueId scalar_int(int64_t value);
  ValueId scalar_bool(bool value);

  // A weight. With bytes, the builder keeps them (a new blob in weights()); with a WeightRef, the
  // bytes are in a blob the caller added to weights(). The size must equal dtype * shape.
  ValueId constant(std::string name, const TensorType& type, std::vector<uint8_t> bytes);
  ValueId constant(std::string name, DType dtype, Shape shape, std::vector<uint8_t> bytes);
  ValueId constant(std::string name, const TensorType& type, WeightRef ref);
  // A weight whose bytes come later: an empty blob of weights(); a runtime::Program built with
  // LaterWeights is given them. Its ref names the whole size.
  ValueId later_constant(std::string name, const TensorType& type);
  size_t constant_count() const { return graph_.constants.size(); }

  // Persistent state. The value is the state as nodes read it; mutate() writes it back.
  ValueId mutable_buffer(std::string name, DType dtype, Shape shape,
                         BufferInit init = BufferInit::Zeros);
  // A buffer that starts as a copy of constant `initial`.
  ValueId mutable_buffer(std::string name, ValueId initial);

  // Adds a node; returns its outputs, with types inferred by the op's schema. Throws GraphError
  // naming the node when the schema rejects the inputs or attributes.
  std::vector<ValueId> op(std::string_view op, std::vector<ValueId> inputs, Attrs attrs = {},
                          std::string label = {});
  // The same for an op with exactly one output.
  ValueId op1(std::string_view op, std::vector<ValueId> inputs, Attrs attrs = {},
              std::string label = {});

  // Writes `value` (a node output of the buffer's type) back into `buffer` after each execution.
  void mutate(ValueId buffer, ValueId value);
  void output(std::string name, ValueId value);

  const TensorType& type(ValueId value) const { return graph_.type(value); }
  const SymTable& syms() const { return graph_.syms; }
  // The graph so far (not yet validated as a whole).
  const Graph& graph() const { return graph_; }
  WeightStore& weights() { return weights_; }
  const WeightStore& weights() const { return weights_; }

  // A validated copy of the graph (mutations' also_output flags set); throws GraphError.
  Graph build() const;

 private:
  ValueId add_value(Value v);
  void claim_name(const std::string& name, const char* what);
  ValueId add_constant(std::string name, const TensorType& type, WeightRef ref, bool later = false);

  const OpRegistry& registry_;
  Graph graph_;
  std::vector<ValueId> sym_values_;
  WeightStore weights_;
};

}  // namespace wgx::graph
