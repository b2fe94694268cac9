#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "graph/validate.h"
#include "runtime/memory_plan.h"
#include "runtime/options.h"
#include "runtime/program_impl.h"

namespace wgx::runtime {

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

}  // namespace

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
  build(&weights);
}

Program::Program(gpu::Context& gpu, Graph graph_in, const graph::WeightStore& weights, const Program& constants_from,
                 RuntimeOptions options, const KernelRegistry& kernels)
    : impl_(std::make_unique<Impl>(gpu, std::move(graph_in), checked(std::move(options)), kernels)) {
  if (&constants_from.impl_->gpu != &gpu) throw std::invalid_argument("constants_from is a program of another device");
  build(&weights, &constants_from);
}

Program::Program(gpu::Context& gpu, Graph graph_in, LaterWeights, RuntimeOptions options,
                 const KernelRegistry& kernels)
    : impl_(std::make_unique<Impl>(gpu, std::move(graph_in), checked(std::move(options)), kernels)) {
  build(nullptr);
}

void Program::build(const graph::WeightStore* weights, const Program* constants_from) {
  Impl& m = *impl_;
  gpu::Context& gpu = m.gpu;
  const Graph& g = m.graph;
  graph::validate(g);
  // Weights over one binding's limit are read in row chunks (split_constants.h); most devices
  // and models have none, and then the graph and its weights stay as given.
  splits_ = plan_splits(g, gpu.limits().max_storage_buffer_binding_size, gpu.features().shader_f16);
  graph::WeightStore chunked;
  if (!weights) {
    // Where each constant's later bytes go: to itself, or in pieces to its chunks.
    for (size_t c = 0; c < g.constants.size(); ++c) {
      const graph::Constant& k = g.constants[c];
      m.later_sources.push_back({k.name, k.data.bytes, {{static_cast<uint32_t>(c), {0, 0, k.data.bytes}}}});
    }
    auto next = static_cast<uint32_t>(g.constants.size());
    for (const ConstantSplit& split : splits_) {
      std::vector<Impl::LaterPiece>& pieces = m.later_sources[split.constant].pieces;
      pieces.clear();
      int64_t first = 0;
      for (size_t c = 0; c < split.rows.size(); ++c) {
        const uint32_t target = c == 0 ? split.constant : next++;
        for (const ChunkPiece& p : chunk_pieces(split.type, first, split.rows[c])) pieces.push_back({target, p});
        first += split.rows[c];
      }
    }
  }
  if (!splits_.empty()) {
    if (weights) {
      chunked = split_constants(m.graph, *weights, splits_);
      weights = &chunked;
    } else {
      split_constants(m.graph, splits_);
    }
    graph::validate(g);
  }
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
  std::map<std::string, std::pair<const graph::TensorType*, const gpu::Buffer*>> shared;
  if (constants_from) {
    const Impl& from = *constants_from->impl_;
    for (size_t c = 0; c < from.graph.constants.size(); ++c) {
      const graph::Constant& k = from.graph.constants[c];
      shared[k.name] = {&from.graph.type(k.value), from.constant_buffers[c]};
    }
  }
  for (size_t c = 0; c < g.constants.size(); ++c) {
    const graph::Constant& k = g.constants[c];
    const TensorRef& r = m.refs[k.value];
    if (const auto it = shared.find(k.name); it != shared.end() && *it->second.first == g.type(k.value)) {
      m.constant_buffers[c] = it->second.second;
      continue;
    }
    if (weights) {
      std::vector<uint8_t> bytes = to_storage(g.type(k.value).dtype, weights->bytes(k.data), r.storage, k.name);
      m.buffers.push_back(std::make_unique<gpu::Buffer>(gpu, bytes.data(), bytes.size(), k.name));
    } else {
      m.buffers.push_back(std::make_unique<gpu::Buffer>(gpu, capacity[k.value], gpu::BufferKind::Storage, k.name));
      m.later.push_back({k.data.bytes, 0, storage_is_copy(g.type(k.value).dtype, r.storage), {}});
    }
    m.constant_buffers[c] = m.buffers.back().get();
    memory_.constants += m.buffers.back()->allocated();
  }
  // A chunk whose pieces do not start and end on 4 bytes (as uploads must) is held until whole.
  for (const Impl::LaterSource& source : m.later_sources) {
    for (const Impl::LaterPiece& p : source.pieces) {
      const bool ends_chunk = p.piece.to + p.piece.size == m.later[p.constant].size;
      if (p.piece.from % 4 != 0 || p.piece.to % 4 != 0 || (p.piece.size % 4 != 0 && !ends_chunk)) {
        m.later[p.constant].copy = false;
      }
    }
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
  // The pipelines were created asynchronously, in parallel: their errors are the build's.
  m.pipelines.ready();
  memory_.scratch = m.scratch.bytes() + m.handoff.bytes();
  reset_state();
  if (constants_from && constants_from->impl_->later_complete < constants_from->impl_->later.size()) {
    // Shared constants still to be written (a LaterWeights program): this program's copies of
    // them wait for the last write there.
    constants_from->impl_->constants_ready.push_back([alive = std::weak_ptr<char>(m.alive), &m] {
      if (alive.lock()) m.run_constants_ready();
    });
  } else if (weights || m.later.empty()) {
    m.run_constants_ready();
  }
}

void Program::write_constant(size_t index, uint64_t offset, std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  if (index >= m.later_sources.size()) {
    throw std::invalid_argument(m.later.empty() ? "write_constant: this program was built with its weights"
                                                : "write_constant: no constant " + std::to_string(index));
  }
  const Impl::LaterSource& source = m.later_sources[index];
  if (offset > source.size || bytes.size() > source.size - offset) {
    throw std::invalid_argument(source.name + ": bytes [" + std::to_string(offset) + ", +" +
                                std::to_string(bytes.size()) + ") outside its " + std::to_string(source.size) + " bytes");
  }
  const uint64_t end = offset + bytes.size();
  for (const Impl::LaterPiece& p : source.pieces) {
    const uint64_t lo = std::max(offset, p.piece.from), hi = std::min(end, p.piece.from + p.piece.size);
    if (lo < hi) write_later(p.constant, p.piece.to + (lo - p.piece.from), bytes.subspan(lo - offset, hi - lo));
  }
}

void Program::write_later(size_t index, uint64_t offset, std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  Impl::LaterConstant& c = m.later[index];
  const graph::Constant& k = m.graph.constants[index];
  c.written += bytes.size();
  if (c.copy) {
    gpu::upload(m.gpu, *m.constant_buffers[index], offset, bytes.data(), bytes.size());
  } else {
    if (c.held.empty()) c.held.resize(c.size);
    std::copy(bytes.begin(), bytes.end(), c.held.begin() + static_cast<std::ptrdiff_t>(offset));
    if (c.written < c.size) return;
    const std::vector<uint8_t> stored =
        to_storage(m.graph.type(k.value).dtype, c.held, m.refs[k.value].storage, k.name);
    gpu::upload(m.gpu, *m.constant_buffers[index], 0, stored.data(), stored.size());
    std::vector<uint8_t>().swap(c.held);
  }
  if (c.written == c.size && ++m.later_complete == m.later.size()) m.run_constants_ready();
}

void Program::check_constants_written() const {
  const Impl& m = *impl_;
  for (size_t i = 0; i < m.later.size(); ++i) {
    if (m.later[i].written != m.later[i].size) {
      throw graph::GraphError(m.graph.constants[i].name + ": " + std::to_string(m.later[i].written) + " of its " +
                              std::to_string(m.later[i].size) + " bytes were written");
    }
  }
}

Program::~Program() {
  // Outstanding reads lose their staging buffers (and say so if asked for their value).
  impl_->reads->alive = false;
  impl_->reads->slots.clear();
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
  for (const ConstantSplit& split : splits_) s << "split  " << runtime::describe(split) << "\n";
  const auto mib = human_bytes;
  s << "memory: constants " << mib(memory_.constants) << ", state " << mib(memory_.state) << ", inputs "
    << mib(memory_.inputs) << ", intermediates " << mib(memory_.intermediates) << " (without reuse "
    << mib(memory_.unplanned) << "), scratch " << mib(memory_.scratch) << ", total " << mib(memory_.total()) << "\n";
  return s.str();
}

}  // namespace wgx::runtime
