// What stands behind Program's handle, shared by its parts: program.cpp (building), node_context.cpp
// (what a route sees of its node), program_execute.cpp (executing, feeds, asynchronous reads),
// program_read.cpp (outputs and state), async_read.cpp. Nothing outside src/runtime includes it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/readback.h"
#include "graph/error.h"
#include "runtime/handoff_pool.h"
#include "runtime/param_arena.h"
#include "runtime/program.h"
#include "runtime/scratch_pool.h"

namespace wgx::runtime {

using graph::Graph;
using graph::ValueId;
using graph::ValueKind;

inline std::string node_name(const Graph& g, uint32_t i) {
  const graph::Node& n = g.nodes[i];
  return "node #" + std::to_string(i) + " (" + n.op + (n.label.empty() ? "" : " '" + n.label + "'") + ")";
}

inline uint64_t numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

inline std::string shape_text(const std::vector<int64_t>& shape) {
  return graph::to_string(graph::Shape(shape.begin(), shape.end()));
}


// Staging buffers for AsyncReads, shared by the program and its reads: a read frees its buffer
// when collected or dropped; the program marks the pool dead when it goes.
struct ReadPool {
  struct Slot {
    std::unique_ptr<gpu::AsyncReadback> buffer;
    graph::ValueId output = graph::kNoValue;
    bool busy = false;  // an AsyncRead holds it
  };
  std::vector<std::unique_ptr<Slot>> slots;
  bool alive = true;
};


struct AsyncRead::State {
  std::string output;
  Storage storage = Storage::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;  // storage bytes of the value
  // The handoff words copied after the value (HandoffPool::words), checked when it is taken.
  const HandoffPool* handoff = nullptr;  // valid while pool->alive
  uint64_t word_bytes = 0;
  std::shared_ptr<ReadPool> pool;
  ReadPool::Slot* slot = nullptr;  // while the value is in its staging buffer
  bool submitted = false;
  bool failed = false;
  std::string failure;  // what the take that failed threw, for a take after it
  bool taken = false;
  std::vector<uint8_t> data;

  void release() noexcept {
    if (!slot) return;
    if (pool->alive) {
      try {
        slot->buffer->release();
      } catch (...) {  // a lost device: the buffer goes with the program
      }
      slot->busy = false;
    }
    slot = nullptr;
  }
  ~State() { release(); }
};

struct Program::Impl {
  Impl(gpu::Context& g, Graph gr, RuntimeOptions o, const KernelRegistry& k)
      : gpu(g), graph(std::move(gr)), options(std::move(o)), kernels(k), pipelines(g) {}

  gpu::Context& gpu;
  Graph graph;
  RuntimeOptions options;
  const KernelRegistry& kernels;
  gpu::PipelineCache pipelines;
  ParamArena params{gpu};  // before the steps: their bind groups refer to its buffers
  ScratchPool scratch{gpu};  // likewise
  HandoffPool handoff{gpu};  // likewise
  gpu::Timing timing = gpu::Timing::Off;
  // The recorded_params option (execute_steps): off makes the later steps' params and uploads
  // queue writes, which land before the command buffer runs (wrong: the tests' negative control).
  bool recorded_params = true;
  // prepare(): the next execute's step recorded ahead, and the SymInts it was recorded with.
  std::unique_ptr<gpu::Recorder> prepared;
  std::vector<int64_t> prepared_syms;
  gpu::Timing prepared_timing = gpu::Timing::Off;

  std::vector<TensorRef> refs;                 // per value
  std::vector<std::vector<int64_t>> shapes;    // per value, current sizes
  std::vector<int64_t> sym_values;
  std::vector<ValueId> symbolic_values;        // tensor values with a symbolic dim
  std::vector<bool> sym_sizes_tensors;         // per sym: some tensor's shape depends on it
  bool shapes_dirty = true;                    // such a sym changed since the last update_shapes()
  std::vector<std::unique_ptr<gpu::Buffer>> buffers;  // everything the program owns
  std::vector<const gpu::Buffer*> constant_buffers;   // per graph constant
  // LaterWeights: per constant, the bytes written so far, and the data held for a conversion.
  struct LaterConstant {
    uint64_t size = 0;       // bytes of the constant's data
    uint64_t written = 0;
    bool copy = false;       // storage bytes == data bytes: uploaded as they come
    std::vector<uint8_t> held;
  };
  std::vector<LaterConstant> later;
  size_t later_complete = 0;  // constants written whole
  // NodeContext::when_constants_ready's work, not yet run (LaterWeights: until the last constant
  // is written whole).
  std::vector<std::function<void()>> constants_ready;
  void run_constants_ready() {
    for (auto& fn : constants_ready) fn();
    constants_ready.clear();
  }
  // Expires with the program: work another program's constants_ready holds for this one.
  std::shared_ptr<char> alive = std::make_shared<char>();
  // LaterWeights: per constant of the graph as given, its bytes' destinations (itself, or the
  // pieces of its row chunks where it was split).
  struct LaterPiece {
    uint32_t constant = 0;
    ChunkPiece piece;
  };
  struct LaterSource {
    std::string name;
    uint64_t size = 0;
    std::vector<LaterPiece> pieces;
  };
  std::vector<LaterSource> later_sources;
  // An exec and what its last resize saw: it is resized again only when a SymInt it can see
  // (through its node's shapes and Sym inputs) has changed since.
  struct Resized {
    std::unique_ptr<NodeExec> exec;
    bool fresh = false;
    std::vector<int64_t> seen;  // values of the step's syms at the last resize
  };
  struct Step {
    uint32_t node;
    Resized exec;
    Resized small;               // the exec for the small class, when its route differs
    std::vector<uint32_t> syms;  // the SymInts the node's resize can see
    Resized& active(bool small_class) { return small_class && small.exec ? small : exec; }
  };
  std::vector<Step> steps;
  size_t resizes = 0;  // resize hooks run so far

  // Feeds (feed_from): at most one per input.
  struct Feed {
    ValueId input = graph::kNoValue, output = graph::kNoValue;
    std::string input_name, output_name;
    std::optional<std::vector<int64_t>> fed_shape;  // the shape the last feed wrote
  };
  std::vector<Feed> feeds;
  // Reads asked for by read_async, filled by the next execute().
  std::shared_ptr<ReadPool> reads = std::make_shared<ReadPool>();
  std::vector<std::weak_ptr<AsyncRead::State>> pending_reads;

  // Shape classes. Routes are chosen at max shapes; a program that serves both prefill and
  // decode would then run prefill routes for every decode step. The "small" class is every
  // SymInt that sizes a graph input at its minimum (one token); nodes whose best route differs
  // there get a second exec, picked at execute time.
  graph::SymTable small_syms;          // graph syms with the class syms' max lowered to min
  std::vector<uint32_t> class_syms;    // indices of the syms that size graph inputs
  const graph::SymTable* build_syms = nullptr;  // what max shapes mean while building
  bool small_class_now = false;
  bool in_small_class() const {
    if (class_syms.empty()) return false;
    for (uint32_t s : class_syms) {
      if (sym_values[s] != graph.syms[s].min) return false;
    }
    return true;
  }

  const gpu::Buffer& own(uint64_t bytes, gpu::BufferKind kind, const std::string& label) {
    buffers.push_back(std::make_unique<gpu::Buffer>(gpu, std::max<uint64_t>(bytes, 4), kind, label));
    return *buffers.back();
  }
  const graph::NamedValue& named(const std::vector<graph::NamedValue>& list, std::string_view name,
                                 const char* what) const {
    for (const auto& nv : list) {
      if (nv.name == name) return nv;
    }
    std::string known;
    for (const auto& nv : list) known += (known.empty() ? "" : ", ") + nv.name;
    throw std::invalid_argument(std::string("no ") + what + " named '" + std::string(name) +
                                "' (the graph has: " + known + ")");
  }
  void update_shapes() {
    for (ValueId v : symbolic_values) shapes[v] = graph::eval_shape(graph.values[v].type.shape, sym_values);
  }
  // The tensors' shapes for the SymInts now, where one that sizes a tensor changed.
  void refresh_shapes() {
    if (!shapes_dirty) return;
    update_shapes();
    shapes_dirty = false;
  }
  void update_all_shapes() {
    for (size_t v = 0; v < graph.values.size(); ++v) {
      if (graph.values[v].kind == ValueKind::Tensor) shapes[v] = graph::eval_shape(graph.values[v].type.shape, sym_values);
    }
  }
  Feed* feed_into(ValueId input) {
    for (Feed& f : feeds) {
      if (f.input == input) return &f;
    }
    return nullptr;
  }
};

}  // namespace wgx::runtime
