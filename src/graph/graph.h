// The graph IR: a value table, nodes in topological order, named inputs and outputs, constants
// (weights, referenced by position in a weight blob), mutable buffers (state that persists across
// executions, such as KV caches) and mutations (node outputs written back into a buffer).
//
// Values are small integer ids into Graph::values. Every tensor value is defined exactly once: by
// a graph input, a constant, a mutable buffer or a node output. Sym and scalar values need no
// definition. Graphs from GraphBuilder::build() and format::open_wgx() are validated and carry
// every node attribute, defaults included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/attr.h"
#include "graph/dtype.h"
#include "graph/shape.h"

namespace wgx::graph {

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;
inline constexpr uint32_t kNoIndex = UINT32_MAX;

// Only for q4gsw; other dtypes keep the defaults {0, f32}.
struct QuantParams {
  uint32_t group_size = 0;         // 32, 64 or 128: elements of the last dim sharing one scale
  DType scale_dtype = DType::f32;  // f32 or f16
  friend bool operator==(const QuantParams&, const QuantParams&) = default;
};

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  QuantParams quant;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// "f32[1, seq_len, 2048]", "q4gsw<g32,f32>[2048, 2048]"
std::string to_string(const TensorType& type, const SymTable* syms = nullptr);

// Byte layout of a q4gsw tensor with logical shape [..., K], rows = product of the leading dims:
//   packed nibbles: rows * K / 2 bytes, row-major; element k of a row sits in byte k / 2, the
//                   low nibble holding the even k. A nibble n decodes as (n - 8) * scale.
//   scales:         at byte `scales_offset`, rows * (K / group_size) values of scale_dtype,
//                   row-major; element k of row r uses scale [r][k / group_size].
struct Q4Layout {
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t groups_per_row = 0;
  uint64_t packed_bytes = 0;
  uint64_t scales_offset = 0;
  uint64_t scale_bytes = 0;
  uint64_t total_bytes = 0;
};
// Nothing when the params or sizes are invalid (rank 0, K not a multiple of the group, overflow).
std::optional<Q4Layout> q4gsw_layout(const std::vector<int64_t>& dims, QuantParams quant);
// An empty string when the quant params fit the dtype; otherwise what is wrong.
std::string quant_error(const TensorType& type);

// Bytes of a tensor at its max shape; nothing on overflow or invalid quant params.
std::optional<uint64_t> tensor_bytes(const TensorType& type, const SymTable& syms);

enum class ValueKind : uint8_t {
  Tensor = 1,
  Sym = 2,     // the run-time value of a SymInt, as an op input (e.g. input_pos)
  Scalar = 3,  // a constant number, as an op input (e.g. the 0.5 of mul(x, 0.5))
};
const char* value_kind_name(ValueKind kind);

struct Value {
  ValueKind kind = ValueKind::Tensor;
  // Sym and Scalar values have rank 0; a Sym is i64, a Scalar is f32, i64 or bool.
  TensorType type;
  std::string name;      // input, constant or buffer name; may be empty for node outputs
  SymId sym;             // Sym only
  double scalar_f = 0;   // Scalar of f32
  int64_t scalar_i = 0;  // Scalar of i64 or bool
  friend bool operator==(const Value&, const Value&) = default;
};

struct Node {
  std::string op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attrs attrs;
  std::string label;  // optional, e.g. "layers.0.attn.q_proj"; shown in errors and printing
  friend bool operator==(const Node&, const Node&) = default;
};

struct NamedValue {
  std::string name;
  ValueId value = kNoValue;
  friend bool operator==(const NamedValue&, const NamedValue&) = default;
};

// Where a constant's bytes live: `bytes` bytes at `offset` in blob `blob` of a WeightStore
// (weights.h). In a graph read from a .wgx file, blob 0 is the file's weight section.
struct WeightRef {
  uint32_t blob = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  friend bool operator==(const WeightRef&, const WeightRef&) = default;
};

struct Constant {
  std::string name;
  ValueId value = kNoValue;  // a tensor value with a static shape
  WeightRef data;
  friend bool operator==(const Constant&, const Constant&) = default;
};

enum class BufferInit : uint8_t {
  None = 0,      // contents undefined until the graph writes them
  Zeros = 1,     // zero-filled when the runtime is created (and on reset)
  Constant = 2,  // a copy of MutableBuffer::constant
};

struct MutableBuffer {
  std::string name;
  ValueId value = kNoValue;  // the buffer's state as nodes read it; static shape
  BufferInit init = BufferInit::Zeros;
  uint32_t constant = kNoIndex;  // index into Graph::constants when init == Constant
  friend bool operator==(const MutableBuffer&, const MutableBuffer&) = default;
};

// A node output written back into a mutable buffer. The runtime aliases `value` to the buffer's
// storage (no fresh tensor). Validation guarantees no node after the one producing `value` reads
// the buffer's old value, so the aliasing is safe. A mutation-only value is not returned to the
// user; `also_output` says it is also named in Graph::outputs (then it is returned as well).
struct Mutation {
  uint32_t buffer = kNoIndex;  // index into Graph::buffers
  ValueId value = kNoValue;
  bool also_output = false;
  friend bool operator==(const Mutation&, const Mutation&) = default;
};

struct Graph {
  SymTable syms;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<NamedValue> inputs;
  std::vector<NamedValue> outputs;
  std::vector<Constant> constants;
  std::vector<MutableBuffer> buffers;
  std::vector<Mutation> mutations;

  // Throws GraphError for an id out of range.
  const Value& value(ValueId id) const;
  const TensorType& type(ValueId id) const { return value(id).type; }
  friend bool operator==(const Graph&, const Graph&) = default;
};

// For every value, the index of the node that outputs it, or kNoIndex.
std::vector<uint32_t> producers(const Graph& graph);
// For every value, how many node inputs, graph outputs and mutations read it.
std::vector<uint32_t> use_counts(const Graph& graph);
// The sym with this name, if any.
std::optional<SymId> find_sym(const Graph& graph, std::string_view name);

}  // namespace wgx::graph
