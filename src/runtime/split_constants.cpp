#include "runtime/split_constants.h"

#include <algorithm>
#include <map>
#include <utility>

#include "gpu/error.h"
#include "graph/error.h"
#include "graph/op_schema.h"
#include "graph/validate.h"
#include "runtime/program.h"
#include "runtime/storage.h"

namespace wgx::runtime {

namespace {

using graph::Graph;
using graph::TensorType;
using graph::ValueId;

// Chunks of at least this many rows are a multiple of it: whole column tiles (at most 128 wide)
// of every product kernel, as in the unsplit weight, in every chunk but the last.
constexpr int64_t kRowAlign = 256;

// The operand of each op that may be read in row chunks.
bool takes_chunks(const std::string& op, size_t input) {
  return (op == "embedding" && input == 0) || (op == "linear" && input == 1) ||
         (op == "add_rms_norm_linear" && input == 3);
}

TensorType with_rows(TensorType type, int64_t rows) {
  type.shape[0] = graph::Dim(rows);
  return type;
}

// Why some reader of `value` cannot take it in chunks, or "".
std::string unsplittable_use(const Graph& g, ValueId value) {
  const std::string how =
      " (only embedding tables and the weights of linear and add_rms_norm_linear are read in row chunks)";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      if (n.inputs[j] == value && !takes_chunks(n.op, j)) {
        return graph::describe_node(g, i) + " reads it as input " + std::to_string(j) + how;
      }
    }
  }
  for (const graph::NamedValue& out : g.outputs) {
    if (out.value == value) return "it is the graph output '" + out.name + "'" + how;
  }
  for (const graph::MutableBuffer& b : g.buffers) {
    if (b.init == graph::BufferInit::Constant && g.constants.at(b.constant).value == value) {
      return "it initializes the buffer '" + b.name + "'" + how;
    }
  }
  return "";
}

// As few chunks as fit under `limit` (one row does), of equal rows (aligned) but the last.
std::vector<int64_t> chunk_rows(const TensorType& type, bool shader_f16, uint64_t limit) {
  const int64_t total = type.shape[0].value();
  auto fits = [&](int64_t rows) { return constant_storage_bytes(with_rows(type, rows), shader_f16) <= limit; };
  int64_t lo = 1, hi = total;  // fits(lo) and not fits(hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  int64_t most = lo;
  if (most >= kRowAlign) most -= most % kRowAlign;
  const int64_t count = (total + most - 1) / most;
  int64_t each = (total + count - 1) / count;
  if (most >= kRowAlign) each = (each + kRowAlign - 1) / kRowAlign * kRowAlign;  // still <= most
  std::vector<int64_t> rows(static_cast<size_t>(count - 1), each);
  rows.push_back(total - (count - 1) * each);
  return rows;
}

// The bytes of rows [first, first + rows) of a constant stored at `ref`, in the layout of a
// constant of that many rows; without `store` (weights that come later), only their size.
graph::WeightRef chunk_bytes(graph::WeightStore* store, const graph::WeightRef& ref, const TensorType& type,
                             int64_t first, int64_t rows) {
  const std::vector<ChunkPiece> pieces = chunk_pieces(type, first, rows);
  if (pieces.size() == 1) return {ref.blob, ref.offset + pieces[0].from, pieces[0].size};
  uint64_t size = 0;
  for (const ChunkPiece& p : pieces) size = std::max(size, p.to + p.size);
  if (!store) return {0, 0, size};
  const std::span<const uint8_t> bytes = store->bytes(ref);
  std::vector<uint8_t> out(size);
  for (const ChunkPiece& p : pieces) {
    std::copy_n(bytes.begin() + static_cast<ptrdiff_t>(p.from), p.size, out.begin() + static_cast<ptrdiff_t>(p.to));
  }
  return {store->add(std::move(out)), 0, size};
}

// A constant's chunks: their values and the rows [first, end) each holds.
struct Chunks {
  std::vector<ValueId> values;
  std::vector<int64_t> first, end;
};

// Appends nodes, with their output types inferred as GraphBuilder infers them, to a graph whose
// node list is being rebuilt.
class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}

  ValueId tensor(TensorType type, std::string name = {}) {
    graph::Value v;
    v.type = std::move(type);
    v.name = std::move(name);
    g_.values.push_back(std::move(v));
    return static_cast<ValueId>(g_.values.size() - 1);
  }
  ValueId scalar_int(int64_t value) {
    graph::Value v;
    v.kind = graph::ValueKind::Scalar;
    v.type.dtype = graph::DType::i64;
    v.scalar_i = value;
    g_.values.push_back(std::move(v));
    return static_cast<ValueId>(g_.values.size() - 1);
  }

  // The node's outputs: new values, or those of `keep` that are not kNoValue (the outputs of
  // the node it replaces, which other nodes read).
  std::vector<ValueId> emit(std::string_view op, std::vector<ValueId> inputs, const graph::Attrs& attrs,
                            std::string label, const std::vector<ValueId>& keep = {}) {
    graph::Node n;
    n.op = std::string(op);
    n.label = std::move(label);
    std::vector<const graph::Value*> in;
    for (ValueId v : inputs) in.push_back(&g_.values.at(v));
    const graph::InferResult r = graph::OpRegistry::global().find(op)->check(in, attrs, g_.syms, &n.attrs);
    if (!r.ok()) throw graph::GraphError(graph::describe_node(nodes.size(), n.op, n.label) + ": " + r.error);
    n.inputs = std::move(inputs);
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      n.outputs.push_back(i < keep.size() && keep[i] != graph::kNoValue ? keep[i] : tensor(r.outputs[i]));
    }
    nodes.push_back(std::move(n));
    return nodes.back().outputs;
  }

  std::vector<graph::Node> nodes;

 private:
  Graph& g_;
};

std::string rows_text(int64_t first, int64_t end) {
  return "[" + std::to_string(first) + ":" + std::to_string(end) + "]";
}

// `n` with its input `at` (a split constant) read in chunks.
void rewrite(Rewriter& w, const graph::Node& n, size_t at, const Chunks& chunks) {
  const std::string base = n.label.empty() ? n.op : n.label;
  const size_t count = chunks.values.size();
  if (n.op == "embedding") {
    const ValueId ids = n.inputs[1];
    ValueId sum = graph::kNoValue;
    for (size_t c = 0; c < count; ++c) {
      const std::string label = base + rows_text(chunks.first[c], chunks.end[c]);
      // An id below the chunk wraps around in i32 to past its rows (the table has fewer than
      // 2^31): a zero row, as for any id outside.
      const ValueId local =
          chunks.first[c] == 0 ? ids : w.emit("sub", {ids, w.scalar_int(chunks.first[c])}, {}, label + ".ids")[0];
      const ValueId rows = w.emit("embedding", {chunks.values[c], local}, n.attrs, label)[0];
      if (c == 0) {
        sum = rows;
      } else {
        // The last sum is the node's output.
        sum = w.emit("add", {sum, rows}, {}, n.label, c + 1 == count ? n.outputs : std::vector<ValueId>{})[0];
      }
    }
    return;
  }
  // linear or add_rms_norm_linear: the weight at `at`, an optional bias after it.
  const ValueId bias = n.inputs.size() > at + 1 ? n.inputs[at + 1] : graph::kNoValue;
  std::vector<ValueId> parts;
  for (size_t c = 0; c < count; ++c) {
    const std::string label = base + rows_text(chunks.first[c], chunks.end[c]);
    std::vector<ValueId> in(n.inputs.begin(), n.inputs.begin() + static_cast<ptrdiff_t>(at));
    in.push_back(chunks.values[c]);
    if (bias != graph::kNoValue) {
      in.push_back(w.emit("slice", {bias}, {{"dim", 0}, {"start", chunks.first[c]}, {"end", chunks.end[c]}},
                          label + ".bias")[0]);
    }
    // Every output but the product is the same in each chunk: the first one's stands for them.
    std::vector<ValueId> keep;
    if (c == 0) {
      keep = n.outputs;
      keep[0] = graph::kNoValue;
    }
    parts.push_back(w.emit(n.op, in, n.attrs, label, keep)[0]);
  }
  w.emit("cat", parts, {{"dim", -1}}, n.label, {n.outputs[0]});
}

}  // namespace

uint64_t constant_storage_bytes(const TensorType& type, bool shader_f16) {
  const graph::SymTable none;
  const Storage s = storage_for(type.dtype, shader_f16);
  uint64_t bytes = 0;
  if (s == Storage::Q4) {
    bytes = graph::tensor_bytes(type, none).value_or(0);
  } else {
    uint64_t n = 1;
    for (const graph::Dim& d : type.shape) n *= static_cast<uint64_t>(d.value());
    bytes = storage_bytes(s, n);
  }
  return (std::max<uint64_t>(bytes, 4) + 3) / 4 * 4;
}

std::vector<ChunkPiece> chunk_pieces(const TensorType& type, int64_t first, int64_t rows) {
  const auto cols = static_cast<uint64_t>(type.shape[1].value());
  const auto r0 = static_cast<uint64_t>(first), n = static_cast<uint64_t>(rows);
  if (type.dtype != graph::DType::q4gsw) {
    const uint64_t row = cols * graph::element_bytes(type.dtype);
    return {{r0 * row, 0, n * row}};
  }
  // q4gsw: every row's nibbles, then every row's scales (graph.h, Q4Layout).
  const std::vector<int64_t> dims{type.shape[0].value(), type.shape[1].value()};
  const graph::Q4Layout whole = *graph::q4gsw_layout(dims, type.quant);
  const uint64_t nibble_row = whole.packed_bytes / whole.rows, scale_row = whole.scale_bytes / whole.rows;
  return {{r0 * nibble_row, 0, n * nibble_row}, {whole.scales_offset + r0 * scale_row, n * nibble_row, n * scale_row}};
}

std::vector<ConstantSplit> plan_splits(const Graph& g, uint64_t limit, bool shader_f16) {
  std::vector<ConstantSplit> splits;
  for (size_t c = 0; c < g.constants.size(); ++c) {
    const graph::Constant& k = g.constants[c];
    const TensorType& type = g.type(k.value);
    const uint64_t bytes = constant_storage_bytes(type, shader_f16);
    if (bytes <= limit) continue;
    std::string why = type.shape.size() != 2 ? "it is not a matrix" : unsplittable_use(g, k.value);
    if (why.empty() && constant_storage_bytes(with_rows(type, 1), shader_f16) > limit) why = "one row alone is over it";
    if (!why.empty()) {
      // Out of memory, as any other value over the limit is (Program).
      throw gpu::GpuError(gpu::ErrorKind::OutOfMemory, k.name,
                          "constant '" + k.name + "' (" + graph::to_string(type) + ", " + std::to_string(bytes) +
                              " bytes) is over the device's maxStorageBufferBindingSize (" + std::to_string(limit) +
                              ") and cannot be read in row chunks: " + why);
    }
    splits.push_back({static_cast<uint32_t>(c), k.name, type, bytes, limit, chunk_rows(type, shader_f16, limit)});
  }
  return splits;
}

namespace {
void rewrite_splits(Graph& g, graph::WeightStore* store, std::span<const ConstantSplit> splits) {
  std::map<ValueId, Chunks> chunked;
  Rewriter w(g);
  for (const ConstantSplit& s : splits) {
    const graph::Constant whole = g.constants.at(s.constant);
    if (const std::string why = unsplittable_use(g, whole.value); !why.empty()) {
      throw graph::GraphError("constant '" + whole.name + "' cannot be read in row chunks: " + why);
    }
    const TensorType type = g.type(whole.value);
    int64_t total = 0;
    for (int64_t r : s.rows) {
      if (r < 1) throw graph::GraphError("constant '" + whole.name + "': a chunk of " + std::to_string(r) + " rows");
      total += r;
    }
    if (type.shape.size() != 2 || total != type.shape[0].value()) {
      throw graph::GraphError("constant '" + whole.name + "' " + graph::to_string(type) + " is not " +
                              std::to_string(total) + " rows");
    }
    Chunks& ch = chunked[whole.value];
    int64_t first = 0;
    for (size_t c = 0; c < s.rows.size(); ++c) {
      const TensorType chunk = with_rows(type, s.rows[c]);
      const graph::WeightRef ref = chunk_bytes(store, whole.data, type, first, s.rows[c]);
      const std::string name = whole.name + rows_text(first, first + s.rows[c]);
      // The first chunk takes the whole's place, so that no value is left undefined.
      ValueId v = whole.value;
      if (c == 0) {
        g.values[v].type = chunk;
        g.values[v].name = name;
        g.constants[s.constant].name = name;
        g.constants[s.constant].data = ref;
      } else {
        v = w.tensor(chunk, name);
        g.constants.push_back({name, v, ref});
      }
      ch.values.push_back(v);
      ch.first.push_back(first);
      ch.end.push_back(first + s.rows[c]);
      first += s.rows[c];
    }
  }
  for (graph::Node& n : std::exchange(g.nodes, std::vector<graph::Node>{})) {
    size_t at = 0;
    while (at < n.inputs.size() && !chunked.contains(n.inputs[at])) ++at;
    if (at == n.inputs.size()) {
      w.nodes.push_back(std::move(n));
    } else {
      rewrite(w, n, at, chunked.at(n.inputs[at]));
    }
  }
  g.nodes = std::move(w.nodes);
}
}  // namespace

graph::WeightStore split_constants(Graph& g, const graph::WeightStore& weights, std::span<const ConstantSplit> splits) {
  graph::WeightStore store = weights;
  rewrite_splits(g, &store, splits);
  return store;
}

void split_constants(Graph& g, std::span<const ConstantSplit> splits) { rewrite_splits(g, nullptr, splits); }

std::string describe(const ConstantSplit& s) {
  std::string text = s.name + " " + graph::to_string(s.type) + " (" + human_bytes(s.bytes) + ", over the " +
                     human_bytes(s.limit) + " binding limit): " + std::to_string(s.rows.size()) + " row chunks";
  int64_t first = 0;
  for (int64_t r : s.rows) {
    text += " " + rows_text(first, first + r);
    first += r;
  }
  return text;
}

}  // namespace wgx::runtime
