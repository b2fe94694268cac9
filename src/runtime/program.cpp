#include "runtime/program.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "gpu/readback.h"

#include "graph/error.h"
#include "graph/validate.h"
#include "runtime/handoff_pool.h"
#include "runtime/memory_plan.h"
#include "runtime/options.h"
#include "runtime/param_arena.h"
#include "runtime/scratch_pool.h"

namespace wgx::runtime {

using graph::Graph;
using graph::ValueId;
using graph::ValueKind;

namespace {

// Writes a mutation's value into its buffer when the value could not be placed there directly.
class CopyExec : public NodeExec {
 public:
  CopyExec(const TensorRef& from, const TensorRef& to) : from_(from), to_(to) {}
  void resize(const NodeContext&) override {}
  void record(gpu::Recorder& rec) override {
    rec.copy(*from_.buffer, from_.offset, *to_.buffer, to_.offset, std::min(from_.capacity, to_.capacity));
  }

 private:
  TensorRef from_, to_;
};

std::string node_name(const Graph& g, uint32_t i) {
  const graph::Node& n = g.nodes[i];
  return "node #" + std::to_string(i) + " (" + n.op + (n.label.empty() ? "" : " '" + n.label + "'") + ")";
}

uint64_t numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
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

}  // namespace

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

const std::string& AsyncRead::output() const {
  static const std::string none;
  return state_ ? state_->output : none;
}

bool AsyncRead::ready() const {
  if (!state_) return false;
  State& s = *state_;
  if (s.taken) return true;
  if (!s.submitted || !s.slot || !s.pool->alive) return false;
  return s.slot->buffer->ready();
}

const std::vector<uint8_t>& AsyncRead::take() const {
  if (!state_) throw std::logic_error("an empty AsyncRead has no value");
  State& s = *state_;
  if (s.taken) return s.data;
  const std::string what = "the asynchronous read of '" + s.output + "'";
  if (s.failed) {
    throw std::runtime_error(what + " has no value: " +
                             (s.failure.empty() ? "the execute() that was to fill it failed" : s.failure));
  }
  if (!s.pool->alive) throw std::logic_error(what + " outlived its program before its value was taken");
  if (!s.submitted) throw std::logic_error(what + " has no value: no execute() has run since read_async()");
  s.data.resize(s.bytes + s.word_bytes);
  try {
    s.slot->buffer->take(s.data.data(), s.bytes + s.word_bytes);
    if (s.word_bytes) s.handoff->check(s.data.data() + s.bytes);
  } catch (const std::exception& e) {
    s.failed = true;
    s.failure = e.what();
    s.release();
    throw;
  }
  s.data.resize(s.bytes);
  s.release();
  s.taken = true;
  return s.data;
}

std::vector<uint8_t> AsyncRead::storage() const { return take(); }

std::vector<float> AsyncRead::f32() const {
  const std::vector<uint8_t>& bytes = take();
  return storage_to_f32(state_->storage, bytes, numel(state_->shape));
}

std::vector<int32_t> AsyncRead::i32() const {
  const std::vector<uint8_t>& bytes = take();
  if (state_->storage != Storage::I32) {
    throw std::logic_error("output '" + state_->output + "' is stored as " + storage_name(state_->storage) +
                           ", not i32: read it with f32()");
  }
  std::vector<int32_t> out(numel(state_->shape));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(int32_t));
  return out;
}

const std::vector<int64_t>& AsyncRead::shape() const {
  if (!state_) throw std::logic_error("an empty AsyncRead has no shape");
  return state_->shape;
}

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

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

// ---- NodeContext ------------------------------------------------------------------------------
NodeContext::NodeContext(const Program& program, uint32_t node_index)
    : program_(program), index_(node_index) {}
NodeContext::NodeContext(const NodeContext& node, const OperandMap& operands)
    : program_(node.program_), index_(node.index_), operands_(&operands) {
  if (!node.operands_) return;
  auto resolve = [&node](const Operand& o) {
    const Operand& outer = (o.output ? node.operands_->outputs : node.operands_->inputs).at(o.index);
    return Operand{outer.output, outer.index, o.held ? o.held : outer.held};
  };
  auto map = std::make_shared<OperandMap>();
  map->op = operands.op.empty() ? node.operands_->op : operands.op;
  for (const Operand& o : operands.inputs) map->inputs.push_back(resolve(o));
  for (const Operand& o : operands.outputs) map->outputs.push_back(resolve(o));
  composed_ = std::move(map);
  operands_ = composed_.get();
}
const Graph& NodeContext::graph() const { return program_.impl_->graph; }
const graph::Node& NodeContext::node() const { return graph().nodes[index_]; }
const std::string& NodeContext::op() const { return operands_ && !operands_->op.empty() ? operands_->op : node().op; }
std::string NodeContext::label() const {
  const graph::Node& n = node();
  return n.label.empty() ? "#" + std::to_string(index_) + " " + n.op : n.label;
}
gpu::Context& NodeContext::gpu() const { return program_.impl_->gpu; }
gpu::PipelineCache& NodeContext::pipelines() const { return program_.impl_->pipelines; }
ParamArena& NodeContext::params() const { return program_.impl_->params; }
gpu::BufferBinding NodeContext::scratch(uint64_t bytes) const { return program_.impl_->scratch.get(index_, bytes); }
gpu::BufferBinding NodeContext::handoff(uint64_t bytes, const std::string& user) const {
  return program_.impl_->handoff.get(bytes, user, label());
}
const RuntimeOptions& NodeContext::options() const { return program_.impl_->options; }
std::vector<NodeContext::Constant> NodeContext::constants_ahead(size_t nodes) const {
  const Graph& g = graph();
  std::vector<bool> constant(g.values.size(), false), taken(g.values.size(), false);
  for (const graph::Constant& c : g.constants) constant[c.value] = true;
  std::vector<Constant> out;
  const size_t end = std::min(g.nodes.size(), size_t{index_} + nodes + 1);
  for (size_t n = index_; n < end; ++n) {
    for (const ValueId v : g.nodes[n].inputs) {
      if (!constant[v] || taken[v]) continue;
      taken[v] = true;
      out.push_back({v, program_.impl_->refs.at(v)});
    }
  }
  return out;
}
graph::ValueId NodeContext::operand_id(bool output, size_t i) const {
  if (!operands_) return (output ? node().outputs : node().inputs).at(i);
  const Operand& o = (output ? operands_->outputs : operands_->inputs).at(i);
  return (o.output ? node().outputs : node().inputs).at(o.index);
}
const TensorRef* NodeContext::held(bool output, size_t i) const {
  if (!operands_) return nullptr;
  const Operand& o = (output ? operands_->outputs : operands_->inputs).at(i);
  return o.held ? &*o.held : nullptr;
}
const graph::Value& NodeContext::input_value(size_t i) const { return graph().value(operand_id(false, i)); }
const graph::TensorType& NodeContext::input_type(size_t i) const { return input_value(i).type; }
const graph::TensorType& NodeContext::output_type(size_t i) const { return graph().type(operand_id(true, i)); }
const TensorRef& NodeContext::input(size_t i) const {
  const TensorRef* h = held(false, i);
  return h ? *h : program_.impl_->refs.at(operand_id(false, i));
}
const TensorRef& NodeContext::output(size_t i) const {
  const TensorRef* h = held(true, i);
  return h ? *h : program_.impl_->refs.at(operand_id(true, i));
}
const std::vector<int64_t>& NodeContext::input_shape(size_t i) const {
  return program_.impl_->shapes.at(operand_id(false, i));
}
const std::vector<int64_t>& NodeContext::output_shape(size_t i) const {
  return program_.impl_->shapes.at(operand_id(true, i));
}
std::vector<int64_t> NodeContext::input_max_shape(size_t i) const {
  const auto* syms = program_.impl_->build_syms;
  return graph::max_shape(input_type(i).shape, syms ? *syms : graph().syms);
}
std::vector<int64_t> NodeContext::output_max_shape(size_t i) const {
  const auto* syms = program_.impl_->build_syms;
  return graph::max_shape(output_type(i).shape, syms ? *syms : graph().syms);
}
int64_t NodeContext::sym_input(size_t i) const {
  const graph::Value& v = input_value(i);
  if (v.kind == ValueKind::Sym) return program_.impl_->sym_values.at(v.sym.index);
  if (v.kind == ValueKind::Scalar) return v.scalar_i;
  throw graph::GraphError(label() + ": input " + std::to_string(i) + " is not a SymInt");
}
double NodeContext::scalar_input(size_t i) const {
  const graph::Value& v = input_value(i);
  if (v.kind == ValueKind::Scalar) return v.type.dtype == graph::DType::f32 ? v.scalar_f : static_cast<double>(v.scalar_i);
  if (v.kind == ValueKind::Sym) return static_cast<double>(program_.impl_->sym_values.at(v.sym.index));
  throw graph::GraphError(label() + ": input " + std::to_string(i) + " is not a scalar");
}
const graph::Attr& NodeContext::attr(const std::string& name) const {
  auto it = node().attrs.find(name);
  if (it == node().attrs.end()) throw graph::GraphError(label() + ": no attribute '" + name + "'");
  return it->second;
}
bool NodeContext::has_attr(const std::string& name) const { return node().attrs.count(name) > 0; }

// ---- Build --------------------------------------------------------------------------------------
namespace {
// `options` once the table takes them (runtime/options.h), before anything is built.
RuntimeOptions checked(RuntimeOptions options) {
  validate_options(options);
  return options;
}
}  // namespace

Program::Program(gpu::Context& gpu, Graph graph_in, const graph::WeightStore& weights,
                 RuntimeOptions options, const KernelRegistry& kernels)
    : impl_(std::make_unique<Impl>(gpu, std::move(graph_in), checked(std::move(options)), kernels)) {
  Impl& m = *impl_;
  const Graph& g = m.graph;
  graph::validate(g);
  m.recorded_params = option_on(m.options, "recorded_params");
  const bool f16 = gpu.features().shader_f16;
  const size_t nv = g.values.size();
  m.refs.resize(nv);
  m.shapes.resize(nv);
  m.sym_values.resize(g.syms.size());
  for (size_t s = 0; s < g.syms.size(); ++s) m.sym_values[s] = g.syms[s].max;

  // Storage kind and capacity of every tensor value.
  std::vector<uint64_t> capacity(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    const graph::Value& val = g.values[v];
    if (val.kind != ValueKind::Tensor) continue;
    m.refs[v].storage = storage_for(val.type.dtype, f16);
    m.refs[v].dtype = compute_dtype(val.type.dtype);
    auto bytes = m.refs[v].storage == Storage::Q4
                     ? graph::tensor_bytes(val.type, g.syms)
                     : std::optional<uint64_t>(storage_bytes(m.refs[v].storage,
                                                             static_cast<uint64_t>(graph::max_numel(val.type.shape, g.syms).value_or(0))));
    if (!bytes) throw graph::GraphError("value %" + std::to_string(v) + ": size overflows");
    capacity[v] = gpu::round_up(std::max<uint64_t>(*bytes, 4), 4);
    if (capacity[v] > gpu.limits().max_storage_buffer_binding_size) {
      throw gpu::GpuError(gpu::ErrorKind::OutOfMemory, val.name,
                          "value %" + std::to_string(v) + " needs " + std::to_string(capacity[v]) +
                              " bytes, over the device's maxStorageBufferBindingSize");
    }
  }

  // Which node kernels apply, and which outputs share storage with an input.
  std::vector<const OpKernels*> ops(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    ops[i] = m.kernels.find(g.nodes[i].op);
    if (!ops[i]) throw graph::GraphError(node_name(g, i) + ": wgx has no kernels for op '" + g.nodes[i].op + "'");
  }
  MemoryPlanInput plan_in;
  plan_in.capacity = capacity;
  plan_in.graph = &g;
  plan_in.views.assign(g.nodes.size(), false);
  plan_in.in_place.assign(g.nodes.size(), false);
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    plan_in.views[i] = ops[i]->view;
    plan_in.in_place[i] = ops[i]->in_place;
  }
  const MemoryPlan plan = plan_memory(plan_in);

  // Device memory: constants, state, inputs, the intermediate arena.
  m.constant_buffers.resize(g.constants.size());
  for (size_t c = 0; c < g.constants.size(); ++c) {
    const graph::Constant& k = g.constants[c];
    const TensorRef& r = m.refs[k.value];
    std::vector<uint8_t> bytes = to_storage(g.type(k.value).dtype, weights.bytes(k.data), r.storage, k.name);
    m.buffers.push_back(std::make_unique<gpu::Buffer>(gpu, bytes.data(), bytes.size(), k.name));
    m.constant_buffers[c] = m.buffers.back().get();
    memory_.constants += m.buffers.back()->allocated();
  }
  std::vector<const gpu::Buffer*> root_buffer(nv, nullptr);
  for (size_t c = 0; c < g.constants.size(); ++c) root_buffer[g.constants[c].value] = m.constant_buffers[c];
  for (const graph::MutableBuffer& b : g.buffers) {
    root_buffer[b.value] = &m.own(capacity[b.value], gpu::BufferKind::Storage, b.name);
    memory_.state += root_buffer[b.value]->allocated();
  }
  for (const graph::NamedValue& in : g.inputs) {
    root_buffer[in.value] = &m.own(capacity[in.value], gpu::BufferKind::Storage, in.name);
    memory_.inputs += root_buffer[in.value]->allocated();
  }
  std::vector<const gpu::Buffer*> slots;
  for (size_t s = 0; s < plan.slot_bytes.size(); ++s) {
    slots.push_back(&m.own(plan.slot_bytes[s], gpu::BufferKind::Storage, "intermediate " + std::to_string(s)));
  }
  memory_.intermediates = plan.planned_bytes();
  memory_.unplanned = plan.unplanned_bytes;
  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].kind != ValueKind::Tensor) continue;
    const ValueId root = plan.root[v];
    TensorRef& r = m.refs[v];
    r.capacity = capacity[v];
    if (root_buffer[root]) {
      r.buffer = root_buffer[root];
      r.offset = 0;
    } else if (plan.slot[root] != kNoSlot) {
      r.buffer = slots[plan.slot[root]];
    }
  }

  // The shape classes: syms that size a graph input, when their range has room.
  m.small_syms = g.syms;
  for (const graph::NamedValue& in : g.inputs) {
    for (const graph::Dim& d : g.type(in.value).shape) {
      if (d.is_const()) continue;
      const uint32_t s = d.sym().index;
      if (g.syms[s].min == g.syms[s].max) continue;
      if (std::find(m.class_syms.begin(), m.class_syms.end(), s) == m.class_syms.end()) m.class_syms.push_back(s);
      m.small_syms[s].max = g.syms[s].min;
    }
  }

  // Which shapes are symbolic, and the SymInts each node's resize can see.
  m.sym_sizes_tensors.assign(g.syms.size(), false);
  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].kind != ValueKind::Tensor) continue;
    bool symbolic = false;
    for (const graph::Dim& d : g.values[v].type.shape) {
      if (d.is_const()) continue;
      symbolic = true;
      m.sym_sizes_tensors[d.sym().index] = true;
    }
    if (symbolic) m.symbolic_values.push_back(static_cast<ValueId>(v));
  }
  auto node_syms = [&g](uint32_t i) {
    std::vector<uint32_t> syms;
    auto add = [&syms](uint32_t s) {
      if (std::find(syms.begin(), syms.end(), s) == syms.end()) syms.push_back(s);
    };
    const graph::Node& n = g.nodes[i];
    for (const auto* list : {&n.inputs, &n.outputs}) {
      for (ValueId v : *list) {
        const graph::Value& val = g.values[v];
        if (val.kind == ValueKind::Sym) add(val.sym.index);
        if (val.kind != ValueKind::Tensor) continue;
        for (const graph::Dim& d : val.type.shape) {
          if (!d.is_const()) add(d.sym().index);
        }
      }
    }
    return syms;
  };

  // A route for every node (per class), then its executable part.
  m.update_all_shapes();
  auto choose = [&](uint32_t i, RouteChoice& choice) -> const Route* {
    NodeContext ctx(*this, i);
    for (const Route& route : ops[i]->routes) {
      std::string why = route.guard ? route.guard(ctx) : std::string();
      if (why.empty()) return &route;
      choice.rejected.push_back(route.name + ": " + why);
    }
    std::string why;
    for (const auto& r : choice.rejected) why += "\n  " + r;
    throw graph::GraphError(node_name(g, i) + ": no route can run it:" + why);
  };
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    RouteChoice choice{i, g.nodes[i].op, g.nodes[i].label, "", {}, ""};
    if (ops[i]->view) {
      choice.route = "view";
    } else {
      m.build_syms = &g.syms;
      const Route* route = choose(i, choice);
      choice.route = route->name;
      Impl::Step step{i, {route->build(NodeContext(*this, i)), false, {}}, {}, node_syms(i)};
      if (!m.class_syms.empty()) {
        m.build_syms = &m.small_syms;
        RouteChoice small{i, "", "", "", {}, ""};
        const Route* small_route = choose(i, small);
        if (small_route->name != route->name) {
          choice.small_route = small_route->name;
          step.small.exec = small_route->build(NodeContext(*this, i));
        }
      }
      m.build_syms = nullptr;
      m.steps.push_back(std::move(step));
    }
    for (const auto& [value, buffer] : plan.copies_after[i]) {
      ++mutation_copies_;
      auto copy = std::make_unique<CopyExec>(m.refs[value], m.refs[g.buffers[buffer].value]);
      m.steps.push_back({i, {std::move(copy), false, {}}, {}, {}});
    }
    routes_.push_back(std::move(choice));
  }
  memory_.scratch = m.scratch.bytes() + m.handoff.bytes();
  reset_state();
}

Program::~Program() {
  // Outstanding reads lose their staging buffers (and say so if asked for their value).
  impl_->reads->alive = false;
  impl_->reads->slots.clear();
}

// ---- Execute ------------------------------------------------------------------------------------
void Program::set_sym(std::string_view name, int64_t value) {
  Impl& m = *impl_;
  auto id = graph::find_sym(m.graph, name);
  if (!id) throw std::invalid_argument("no SymInt named '" + std::string(name) + "'");
  const graph::SymInt& s = m.graph.syms[id->index];
  if (value < s.min || value > s.max) {
    throw std::invalid_argument("SymInt '" + s.name + "' = " + std::to_string(value) + " is outside its range [" +
                                std::to_string(s.min) + ", " + std::to_string(s.max) + "]");
  }
  if (m.sym_values[id->index] != value) {
    m.sym_values[id->index] = value;
    if (m.sym_sizes_tensors[id->index]) m.shapes_dirty = true;
  }
}

void Program::set_input(std::string_view name, std::span<const uint8_t> bytes, std::vector<int64_t> shape) {
  Impl& m = *impl_;
  const graph::NamedValue& in = m.named(m.graph.inputs, name, "input");
  const graph::TensorType& type = m.graph.type(in.value);
  if (shape.size() != type.shape.size()) {
    throw std::invalid_argument("input '" + in.name + "' has rank " + std::to_string(type.shape.size()) +
                                ", got a shape of rank " + std::to_string(shape.size()));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    const graph::Dim& dim = type.shape[d];
    if (dim.is_const()) {
      if (dim.value() != shape[d]) {
        throw std::invalid_argument("input '" + in.name + "' dim " + std::to_string(d) + " must be " +
                                    std::to_string(dim.value()) + ", got " + std::to_string(shape[d]));
      }
      continue;
    }
    auto sym_value = dim.solve(shape[d]);
    if (!sym_value) {
      throw std::invalid_argument("input '" + in.name + "' dim " + std::to_string(d) + " (" +
                                  graph::to_string(dim, &m.graph.syms) + ") cannot be " + std::to_string(shape[d]));
    }
    set_sym(m.graph.syms[dim.sym().index].name, *sym_value);
  }
  const uint64_t n = numel(shape);
  const uint64_t expect = n * graph::element_bytes(type.dtype);
  if (bytes.size() != expect) {
    throw std::invalid_argument("input '" + in.name + "' of shape " + graph::to_string(graph::Shape(shape.begin(), shape.end())) +
                                " needs " + std::to_string(expect) + " bytes of " + graph::dtype_name(type.dtype) +
                                ", got " + std::to_string(bytes.size()));
  }
  const TensorRef& r = m.refs[in.value];
  std::vector<uint8_t> stored = to_storage(type.dtype, bytes, r.storage, in.name);
  if (!stored.empty()) m.params.upload(*r.buffer, r.offset, stored.data(), stored.size());  // see execute_steps
  // The host's bytes replace whatever a feed would have delivered.
  std::erase_if(m.feeds, [&](const Impl::Feed& f) { return f.input == in.value; });
}

namespace {
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

void Program::execute(int repeats) {
  if (repeats < 1) throw std::invalid_argument("execute: repeats is " + std::to_string(repeats) + ", not at least 1");
  run(repeats, 1, {});
}

void Program::execute_steps(int steps, const std::function<void(int)>& before_step) {
  if (steps < 1) throw std::invalid_argument("execute_steps: steps is " + std::to_string(steps) + ", not at least 1");
  if (steps > 1 && !before_step) throw std::invalid_argument("execute_steps: no before_step for steps after the first");
  run(1, steps, before_step);
}

void Program::resize_stale(bool small) {
  Impl& m = *impl_;
  for (auto& step : m.steps) {
    Impl::Resized& r = step.active(small);
    bool stale = !r.fresh;
    for (size_t j = 0; j < step.syms.size() && !stale; ++j) stale = r.seen[j] != m.sym_values[step.syms[j]];
    if (!stale) continue;
    r.fresh = false;
    r.exec->resize(NodeContext(*this, step.node));
    ++m.resizes;
    r.seen.resize(step.syms.size());
    for (size_t j = 0; j < step.syms.size(); ++j) r.seen[j] = m.sym_values[step.syms[j]];
    r.fresh = true;
  }
  m.small_class_now = small;
}

void Program::prepare() {
  Impl& m = *impl_;
  m.prepared.reset();
  const double t0 = thread_cpu_seconds();
  const bool small = m.in_small_class();
  m.refresh_shapes();
  resize_stale(small);
  const double t1 = thread_cpu_seconds();
  m.params.flush();
  const double t2 = thread_cpu_seconds();
  auto rec = std::make_unique<gpu::Recorder>(m.gpu, "execute", m.timing);
  for (auto& step : m.steps) step.active(small).exec->record(*rec);
  host_times_.resize += t1 - t0;
  host_times_.params += t2 - t1;
  host_times_.record += thread_cpu_seconds() - t2;
  m.prepared = std::move(rec);
  m.prepared_syms = m.sym_values;
  m.prepared_timing = m.timing;
}

void Program::run(int repeats, int steps, const std::function<void(int)>& before_step) {
  Impl& m = *impl_;
  // A step prepare() recorded is this execute's first where nothing it depends on changed since.
  std::unique_ptr<gpu::Recorder> rec;
  last_was_prepared_ = m.prepared && repeats == 1 && m.prepared_syms == m.sym_values && m.prepared_timing == m.timing;
  if (last_was_prepared_) rec = std::move(m.prepared);
  m.prepared.reset();
  std::vector<std::shared_ptr<AsyncRead::State>> reads;
  size_t recorded = 0;   // dispatches of the parts submitted
  size_t submitted = 0;  // parts submitted
  // A step after the first that fails to record throws with nothing submitted: the reads of the
  // steps recorded before it fail, and the params they staged are uploaded again by the next.
  struct Abort {
    Impl& m;
    std::vector<std::shared_ptr<AsyncRead::State>>& reads;
    bool armed = false;
    ~Abort() {
      if (!armed) return;
      m.params.abort_recorded();
      for (const auto& st : reads) st->failed = true;
    }
  } abort{m, reads};
  for (int k = 0; k < steps; ++k) {
    if (k > 0) before_step(k);
    const double t0 = thread_cpu_seconds();
    const bool small = m.in_small_class();
    m.refresh_shapes();
    // A fed input must still have the shape its feed wrote; the feeds' next shapes must fit.
    std::vector<std::pair<uint32_t, int64_t>> fed_syms;
    for (const Impl::Feed& f : m.feeds) {
      const std::vector<int64_t>& now = m.shapes[f.input];
      if (f.fed_shape && *f.fed_shape != now) {
        throw std::logic_error("input '" + f.input_name + "' is fed from '" + f.output_name + "', which wrote shape " +
                               shape_text(*f.fed_shape) + ", but SymInts set since make it " + shape_text(now) +
                               ": set_input() it, or set those SymInts back");
      }
      const std::vector<int64_t>& out = m.shapes[f.output];
      const graph::Shape& dims = m.graph.type(f.input).shape;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d].is_const()) continue;  // equal to the output's, checked by feed_from
        const graph::SymInt& sym = m.graph.syms[dims[d].sym().index];
        const auto value = dims[d].solve(out[d]);
        if (!value || *value < sym.min || *value > sym.max) {
          throw std::logic_error("input '" + f.input_name + "' is fed from '" + f.output_name + "' of shape " +
                                 shape_text(out) + ", which its dim " + std::to_string(d) + " (" +
                                 graph::to_string(dims[d], &m.graph.syms) + ") cannot take");
        }
        fed_syms.emplace_back(dims[d].sym().index, *value);
      }
    }
    const bool recorded_ahead = k == 0 && last_was_prepared_;
    if (!recorded_ahead) resize_stale(small);
    const double t1 = thread_cpu_seconds();
    host_times_.resize += t1 - t0;
    // The first step's params are queue writes (prepare() made them for a step it recorded),
    // which land before the command buffer runs; the later steps' are copies recorded in it,
    // between the steps (ParamArena::record_flush).
    if (!recorded_ahead) {
      if (k == 0 || !m.recorded_params) {
        m.params.flush();
      } else {
        m.params.record_flush(*rec);
      }
    }
    const double t2 = thread_cpu_seconds();
    host_times_.params += t2 - t1;
    // A step of many dispatches (prefill) goes to the GPU in parts, so that it starts on the
    // first while the host records and submits the rest: the first part ends at kFirstPart
    // dispatches, each next one is twice as long, and the last holds the feeds' copies and the
    // readbacks. One-token steps (pipelined: the host records while earlier steps run), several
    // steps, and repeated and profiled executes keep one command buffer.
    const bool parts = !small && repeats == 1 && steps == 1 && m.timing == gpu::Timing::Off;
    if (!rec) rec = std::make_unique<gpu::Recorder>(m.gpu, "execute", m.timing);
    size_t part_end = kFirstPart;
    double submitting = 0;
    // A part that fails throws as a failed recording does: the reads asked for stay pending.
    for (int i = 0; i < repeats && !recorded_ahead; ++i) {
      for (auto& step : m.steps) {
        step.active(small).exec->record(*rec);
        if (parts && rec->dispatches() >= part_end) {
          const double s0 = thread_cpu_seconds();
          recorded += rec->dispatches();
          rec->submit();
          ++submitted;
          rec = std::make_unique<gpu::Recorder>(m.gpu, "execute", m.timing);
          part_end *= 2;
          submitting += thread_cpu_seconds() - s0;
        }
      }
    }
    const double t3 = thread_cpu_seconds();
    host_times_.record += t3 - t2 - submitting;
    host_times_.submit += submitting;
    for (const Impl::Feed& f : m.feeds) {
      const TensorRef& from = m.refs[f.output];
      const TensorRef& to = m.refs[f.input];
      const uint64_t bytes = storage_bytes(from.storage, numel(m.shapes[f.output]));
      if (bytes) rec->copy(*from.buffer, from.offset, *to.buffer, to.offset, bytes);
    }
    for (const auto& weak : m.pending_reads) {
      std::shared_ptr<AsyncRead::State> st = weak.lock();
      if (!st) continue;  // dropped before this step
      const ValueId v = st->slot->output;
      const TensorRef& r = m.refs[v];
      st->shape = m.shapes[v];
      st->bytes = storage_bytes(r.storage, numel(st->shape));
      if (st->bytes) {
        std::vector<gpu::Span> spans{{r.buffer, r.offset, st->bytes}};
        spans.insert(spans.end(), m.handoff.words().begin(), m.handoff.words().end());
        st->handoff = &m.handoff;
        st->word_bytes = m.handoff.word_bytes();
        rec->readback(spans, *st->slot->buffer);
      }
      reads.push_back(std::move(st));
    }
    m.pending_reads.clear();
    host_times_.copies += thread_cpu_seconds() - t3;
    // What the feeds wrote sets the SymInts they size for the next step (or execute()).
    for (const auto& [sym, value] : fed_syms) {
      if (m.sym_values[sym] != value) set_sym(m.graph.syms[sym].name, value);
    }
    for (Impl::Feed& f : m.feeds) f.fed_shape = m.shapes[f.output];
    if (k == 0 && steps > 1 && m.recorded_params) {
      m.params.begin_recorded();
      abort.armed = true;
    }
  }
  dispatches_ = (recorded + rec->dispatches()) / static_cast<size_t>(repeats * steps);
  const double t4 = thread_cpu_seconds();
  if (abort.armed) {
    abort.armed = false;
    m.params.end_recorded();
  }
  try {
    rec->submit();
  } catch (...) {
    for (const auto& st : reads) st->failed = true;
    throw;
  }
  host_times_.submit += thread_cpu_seconds() - t4;
  for (const auto& st : reads) {
    st->submitted = true;
    if (st->bytes == 0) {  // an empty value: nothing to wait for
      st->release();
      st->taken = true;
    }
  }
  timings_ = rec->timings();
  submits_ = submitted + 1;
}

void Program::set_timing(gpu::Timing timing) { impl_->timing = timing; }

void Program::feed_from(std::string_view input, std::string_view output) {
  Impl& m = *impl_;
  const graph::NamedValue& in = m.named(m.graph.inputs, input, "input");
  const graph::NamedValue& out = m.named(m.graph.outputs, output, "output");
  const graph::TensorType& it = m.graph.type(in.value);
  const graph::TensorType& ot = m.graph.type(out.value);
  const std::string what = "feed_from: input '" + in.name + "' from output '" + out.name + "': ";
  if (it.dtype != ot.dtype) {
    throw std::invalid_argument(what + "the input is " + graph::dtype_name(it.dtype) + ", the output " +
                                graph::dtype_name(ot.dtype));
  }
  if (it.shape.size() != ot.shape.size()) {
    throw std::invalid_argument(what + "the input has rank " + std::to_string(it.shape.size()) + ", the output " +
                                std::to_string(ot.shape.size()));
  }
  for (size_t d = 0; d < it.shape.size(); ++d) {
    if (it.shape[d].is_const() && !(ot.shape[d].is_const() && ot.shape[d].value() == it.shape[d].value())) {
      throw std::invalid_argument(what + "the input's dim " + std::to_string(d) + " is fixed at " +
                                  std::to_string(it.shape[d].value()) + ", the output's is " +
                                  graph::to_string(ot.shape[d], &m.graph.syms));
    }
  }
  const TensorRef& ir = m.refs[in.value];
  const TensorRef& orf = m.refs[out.value];
  const uint64_t out_max = storage_bytes(orf.storage, numel(graph::max_shape(ot.shape, m.graph.syms)));
  if (out_max > ir.capacity) {
    throw std::invalid_argument(what + "the output holds up to " + std::to_string(out_max) +
                                " bytes, the input's storage " + std::to_string(ir.capacity));
  }
  if (ir.buffer == orf.buffer) throw std::invalid_argument(what + "the output shares the input's storage");
  stop_feed(input);
  m.feeds.push_back({in.value, out.value, in.name, out.name, std::nullopt});
}

void Program::stop_feed(std::string_view input) {
  Impl& m = *impl_;
  const graph::NamedValue& in = m.named(m.graph.inputs, input, "input");
  std::erase_if(m.feeds, [&](const Impl::Feed& f) { return f.input == in.value; });
}

std::optional<std::string> Program::feeding(std::string_view input) const {
  Impl& m = *impl_;
  const graph::NamedValue& in = m.named(m.graph.inputs, input, "input");
  for (const Impl::Feed& f : m.feeds) {
    if (f.input == in.value) return f.output_name;
  }
  return std::nullopt;
}

AsyncRead Program::read_async(std::string_view output) {
  Impl& m = *impl_;
  const graph::NamedValue& out = m.named(m.graph.outputs, output, "output");
  const TensorRef& r = m.refs[out.value];
  if (r.storage == Storage::Q4) {
    throw std::invalid_argument("read_async: output '" + out.name + "' is q4-quantized; read_storage() it");
  }
  ReadPool& pool = *m.reads;
  ReadPool::Slot* free = nullptr;
  size_t busy = 0;
  for (const auto& slot : pool.slots) {
    if (slot->output != out.value) continue;
    if (slot->busy) {
      ++busy;
    } else if (!free) {
      free = slot.get();
    }
  }
  if (!free) {
    if (busy >= kMaxReadsInFlight) {
      throw std::logic_error("read_async: " + std::to_string(busy) + " reads of '" + out.name +
                             "' are outstanding; collect or drop one first");
    }
    auto slot = std::make_unique<ReadPool::Slot>();
    slot->buffer =
        std::make_unique<gpu::AsyncReadback>(m.gpu, r.capacity + m.handoff.word_bytes(), "read_async " + out.name);
    slot->output = out.value;
    free = slot.get();
    pool.slots.push_back(std::move(slot));
  }
  free->busy = true;
  auto st = std::make_shared<AsyncRead::State>();
  st->output = out.name;
  st->storage = r.storage;
  st->pool = m.reads;
  st->slot = free;
  m.pending_reads.push_back(st);
  return AsyncRead(std::move(st));
}

bool Program::last_execute_was_small() const { return impl_->small_class_now; }
size_t Program::resize_count() const { return impl_->resizes; }
size_t Program::param_uploads() const { return impl_->params.uploads(); }
size_t Program::kernels_compiled() const { return impl_->pipelines.size(); }

std::vector<int64_t> Program::output_shape(std::string_view name) const {
  const Impl& m = *impl_;
  return m.shapes[m.named(m.graph.outputs, name, "output").value];
}

std::vector<uint8_t> Program::read_storage(std::string_view name) const {
  const Impl& m = *impl_;
  const ValueId v = m.named(m.graph.outputs, name, "output").value;
  const TensorRef& r = m.refs[v];
  const uint64_t bytes = r.storage == Storage::Q4 ? r.capacity : storage_bytes(r.storage, numel(m.shapes[v]));
  std::vector<uint8_t> out(bytes);
  if (!bytes) return out;
  const std::vector<gpu::Span>& words = m.handoff.words();
  if (words.empty()) {
    gpu::download(m.gpu, *r.buffer, r.offset, bytes, out.data());
    return out;
  }
  // The handoff words in the same copy: a step whose handoff failed gives an error, not its values.
  std::vector<gpu::Span> spans{{r.buffer, r.offset, gpu::round_up(bytes, 4)}};
  spans.insert(spans.end(), words.begin(), words.end());
  std::vector<uint8_t> all(spans[0].bytes + m.handoff.word_bytes());
  gpu::download(m.gpu, spans, all.data());
  m.handoff.check(all.data() + spans[0].bytes);
  std::copy_n(all.begin(), bytes, out.begin());
  return out;
}

std::vector<float> Program::read_f32(std::string_view name) const {
  const Impl& m = *impl_;
  const ValueId v = m.named(m.graph.outputs, name, "output").value;
  return storage_to_f32(m.refs[v].storage, read_storage(name), numel(m.shapes[v]));
}

namespace {
const graph::MutableBuffer& buffer_named(const Graph& g, std::string_view name) {
  for (const graph::MutableBuffer& b : g.buffers) {
    if (b.name == name) return b;
  }
  throw std::invalid_argument("no mutable buffer named '" + std::string(name) + "'");
}
}  // namespace

std::vector<uint8_t> Program::read_state_storage(std::string_view name) const {
  const Impl& m = *impl_;
  const graph::MutableBuffer& b = buffer_named(m.graph, name);
  const TensorRef& r = m.refs[b.value];
  const uint64_t n = numel(graph::max_shape(m.graph.type(b.value).shape, m.graph.syms));
  std::vector<uint8_t> bytes(storage_bytes(r.storage, n));
  gpu::download(m.gpu, *r.buffer, r.offset, bytes.size(), bytes.data());
  return bytes;
}

std::vector<float> Program::read_state_f32(std::string_view name) const {
  const Impl& m = *impl_;
  const graph::MutableBuffer& b = buffer_named(m.graph, name);
  const uint64_t n = numel(graph::max_shape(m.graph.type(b.value).shape, m.graph.syms));
  return storage_to_f32(m.refs[b.value].storage, read_state_storage(name), n);
}

void Program::write_state(std::string_view name, std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  const graph::MutableBuffer& b = buffer_named(m.graph, name);
  const graph::TensorType& type = m.graph.type(b.value);
  const uint64_t expect = numel(graph::max_shape(type.shape, m.graph.syms)) * graph::element_bytes(type.dtype);
  if (bytes.size() != expect) {
    throw std::invalid_argument("mutable buffer '" + b.name + "' (" + graph::to_string(type, &m.graph.syms) +
                                ") needs " + std::to_string(expect) + " bytes, got " + std::to_string(bytes.size()));
  }
  const TensorRef& r = m.refs[b.value];
  std::vector<uint8_t> stored = to_storage(type.dtype, bytes, r.storage, b.name);
  if (!stored.empty()) m.params.upload(*r.buffer, r.offset, stored.data(), stored.size());
}

void Program::reset_state() {
  Impl& m = *impl_;
  if (m.graph.buffers.empty() && m.handoff.words().empty()) return;
  gpu::Recorder rec(m.gpu, "reset state");
  m.handoff.clear(rec);
  for (const graph::MutableBuffer& b : m.graph.buffers) {
    const TensorRef& r = m.refs[b.value];
    if (b.init == graph::BufferInit::Zeros) {
      rec.clear(*r.buffer, r.offset, r.capacity);
    } else if (b.init == graph::BufferInit::Constant) {
      const TensorRef& c = m.refs[m.graph.constants.at(b.constant).value];
      rec.copy(*c.buffer, c.offset, *r.buffer, r.offset, std::min(c.capacity, r.capacity));
    }
  }
  rec.submit();
}

std::string Program::describe() const {
  const Impl& m = *impl_;
  const Graph& g = m.graph;
  std::ostringstream s;
  auto name = [&](ValueId v) {
    const graph::Value& val = g.values[v];
    if (val.kind == ValueKind::Scalar) {
      return val.type.dtype == graph::DType::f32 ? std::to_string(val.scalar_f) : std::to_string(val.scalar_i);
    }
    if (val.kind == ValueKind::Sym) return g.syms[val.sym.index].name;
    return "%" + std::to_string(v) + (val.name.empty() ? "" : "(" + val.name + ")");
  };
  for (const graph::NamedValue& in : g.inputs) {
    s << "input  " << name(in.value) << " : " << graph::to_string(g.type(in.value), &g.syms) << "\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    std::string outs, ins;
    for (ValueId v : n.outputs) outs += (outs.empty() ? "" : ", ") + name(v);
    for (ValueId v : n.inputs) ins += (ins.empty() ? "" : ", ") + name(v);
    s << outs << " = " << n.op << "(" << ins << ") : "
      << graph::to_string(g.type(n.outputs.at(0)), &g.syms) << "  [" << routes_[i].route
      << (routes_[i].small_route.empty() ? "" : ", one token: " + routes_[i].small_route) << "]";
    if (!n.label.empty()) s << "  " << n.label;
    s << "\n";
  }
  const auto mib = human_bytes;
  s << "memory: constants " << mib(memory_.constants) << ", state " << mib(memory_.state) << ", inputs "
    << mib(memory_.inputs) << ", intermediates " << mib(memory_.intermediates) << " (without reuse "
    << mib(memory_.unplanned) << "), scratch " << mib(memory_.scratch) << ", total " << mib(memory_.total()) << "\n";
  return s.str();
}

}  // namespace wgx::runtime
