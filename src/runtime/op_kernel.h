// The contract between the runtime and the op library. Each op (by graph op name) offers routes in
// preference order; a route has an exact guard (why it cannot take this node, or "") and a
// builder that makes the node's executable part once, at build time. Executing then only resizes
// (when SymInts change) and records dispatches.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "gpu/recorder.h"
#include "graph/graph.h"
#include "runtime/memory_plan.h"
#include "runtime/options.h"
#include "runtime/storage.h"

namespace wgx::runtime {

// Where a tensor value lives on the device.
struct TensorRef {
  const gpu::Buffer* buffer = nullptr;
  uint64_t offset = 0;    // bytes into the buffer
  uint64_t capacity = 0;  // bytes reserved (the tensor at its max shape)
  Storage storage = Storage::F32;
  graph::DType dtype = graph::DType::f32;  // what kernels compute with (bf16 -> f32, i64 -> i32)

  gpu::BufferBinding binding() const { return {buffer, offset, capacity}; }
};

class Program;
class ParamArena;

// A view of a node's operands as another op's: a fused op runs the routes of the ops it fuses on
// its own node, each route seeing its op's inputs and outputs where the fused node has them.
// Operand i of the view is the node's input or output `index`, or (`held`) a tensor of the same
// type and shape that the node keeps elsewhere (an intermediate between the fused ops, in scratch).
struct Operand {
  bool output = false;  // `index` counts the node's outputs, else its inputs
  size_t index = 0;
  std::optional<TensorRef> held;
};
struct OperandMap {
  std::vector<Operand> inputs, outputs;
  // The op the view presents its node as (NodeContext::op): a fused op running the routes of
  // one it fuses (add_rms_norm_linear_swiglu_linear's gate/up as add_rms_norm_linear_swiglu);
  // empty: the op of the node, or of the view this one looks through.
  std::string op;
};

// What a route sees of its node, at build time and on every resize.
class NodeContext {
 public:
  NodeContext(const Program& program, uint32_t node_index);
  // The same node seen through `operands` (which must outlive this context): inputs and outputs
  // by the view's positions, everything else (attributes, label, scratch, options) the node's own.
  // Where `node` is a view itself, the map's indices count that view's operands (a fused op runs
  // a fused op's routes through a view, and those routes their own views): the two maps compose.
  NodeContext(const NodeContext& node, const OperandMap& operands);

  const graph::Graph& graph() const;
  const graph::Node& node() const;
  // The node's op, or the one a view presents it as (OperandMap::op).
  const std::string& op() const;
  uint32_t index() const { return index_; }
  std::string label() const;  // the node's label, or "#index op"
  gpu::Context& gpu() const;
  gpu::PipelineCache& pipelines() const;
  // Where dispatches keep their uniform params (shared buffers, uploaded once per execute).
  ParamArena& params() const;
  // Scratch the node uses only between its own dispatches, shared with every node's (see
  // runtime/scratch_pool.h): the node's i-th call gets slot i, at least `bytes`.
  gpu::BufferBinding scratch(uint64_t bytes) const;
  // Memory for a dispatch whose workgroups hand work over (runtime/handoff_pool.h): the pool's
  // words (counts zero at rest, the fault word), then `bytes` of the dispatch's own, shared with
  // every node's. `user` says what runs there and how to do without it; every readback checks
  // the words.
  gpu::BufferBinding handoff(uint64_t bytes, const std::string& user) const;
  // The program's runtime options, which the table accepted (runtime/options.h: option_on,
  // option_count and option_choice read them).
  const RuntimeOptions& options() const;
  // The constant tensors this node and the `nodes` after it read, in the order the program runs
  // them (this node's own first), each once: what a kernel whose workgroups leave the GPU idle
  // may read ahead, so that the products after it find their weights in the GPU's cache.
  struct Constant {
    graph::ValueId value;
    TensorRef ref;
  };
  std::vector<Constant> constants_ahead(size_t nodes) const;
  // Runs `fn` once every constant holds its bytes: at the end of the build, or, for a program
  // built with Program::LaterWeights, once the last is written. GPU work it submits runs after
  // the constants' uploads (a copy of a constant into a table of the node's own).
  void when_constants_ready(std::function<void()> fn) const;

  size_t input_count() const { return operands_ ? operands_->inputs.size() : node().inputs.size(); }
  size_t output_count() const { return operands_ ? operands_->outputs.size() : node().outputs.size(); }
  // The graph value of input i (a held operand: the value it is like).
  graph::ValueId input_id(size_t i) const { return operand_id(false, i); }
  const graph::Value& input_value(size_t i) const;
  const graph::TensorType& input_type(size_t i) const;
  const graph::TensorType& output_type(size_t i) const;
  const TensorRef& input(size_t i) const;
  const TensorRef& output(size_t i) const;
  // Sizes now (valid during resize) and at their max (valid always).
  const std::vector<int64_t>& input_shape(size_t i) const;
  const std::vector<int64_t>& output_shape(size_t i) const;
  std::vector<int64_t> input_max_shape(size_t i) const;
  std::vector<int64_t> output_max_shape(size_t i) const;
  // A Sym input's current value, or a Scalar input's value.
  int64_t sym_input(size_t i) const;
  double scalar_input(size_t i) const;

  // Attribute accessors; throw graph::GraphError when absent (schemas fill defaults).
  const graph::Attr& attr(const std::string& name) const;
  bool has_attr(const std::string& name) const;

 private:
  graph::ValueId operand_id(bool output, size_t i) const;
  const TensorRef* held(bool output, size_t i) const;

  const Program& program_;
  uint32_t index_;
  const OperandMap* operands_ = nullptr;
  std::shared_ptr<const OperandMap> composed_;  // a view of a view, resolved to the node's operands
};

// The executable part of one node.
class NodeExec {
 public:
  virtual ~NodeExec() = default;
  // Recompute dispatch sizes and params for the current shapes and SymInts. Must write every
  // param it uses (nothing is kept implicitly between resizes), and depend only on what the
  // NodeContext shows of the node: the program calls it on the first execute of a shape class and
  // then only when a SymInt in the node's input or output shapes, or a Sym input, has changed.
  virtual void resize(const NodeContext& ctx) = 0;
  virtual void record(gpu::Recorder& rec) = 0;
};

struct Route {
  std::string name;
  // Empty when this route can run the node; otherwise why not (shown when no route fits).
  std::function<std::string(const NodeContext&)> guard;
  std::function<std::unique_ptr<NodeExec>(const NodeContext&)> build;
};

struct OpKernels {
  std::string op;
  std::vector<Route> routes;  // in preference order
  // A view: output 0 shares input 0's storage and nothing runs (reshape of a contiguous tensor).
  bool view = false;
  // The inputs the kernel updates where they lie, each with the output that is that storage
  // (bound once, read_write): a mutation of such an input's buffer then needs no copy (cache
  // updates). `true`: input 0 as output 0.
  InPlace in_place{};
};

class KernelRegistry {
 public:
  // The registry with every op family of src/ops registered (defined in src/ops/register.cpp,
  // so link wgx_ops to use it).
  static const KernelRegistry& global();
  void add(OpKernels kernels);
  // Adds routes to an op another family registered (e.g. quantized-weight routes for linear),
  // ahead of its own: guards keep routes apart, and the more specialised come first.
  void prepend_routes(std::string_view op, std::vector<Route> routes);
  const OpKernels* find(std::string_view op) const;
  std::vector<std::string> ops() const;

 private:
  std::map<std::string, OpKernels, std::less<>> ops_;
};

// Registers every op family (defined in src/ops/register.cpp).
void register_all_ops(KernelRegistry& registry);

// The common shape of a node's executable part: one kernel, one bind group, a uniform block of
// params, and a workgroup count; `update` fills both from the current shapes.
class DispatchExec : public NodeExec {
 public:
  struct Launch {
    std::vector<uint32_t> params;  // 32-bit words of the kernel's uniform block
    uint64_t workgroups = 0;       // linear count; the recorder splits it
  };
  using Update = std::function<Launch(const NodeContext&)>;

  // `buffers` are the kernel's bindings after binding 0, which is the params block.
  DispatchExec(const NodeContext& ctx, const gpu::Kernel& kernel,
               std::vector<gpu::BufferBinding> buffers, size_t param_words, Update update);
  void resize(const NodeContext& ctx) override;
  void record(gpu::Recorder& rec) override;

 private:
  const gpu::Kernel& kernel_;
  ParamArena& arena_;
  uint32_t slot_page_ = 0, slot_offset_ = 0, slot_bytes_ = 0;
  gpu::BindGroup group_;
  Update update_;
  uint64_t workgroups_ = 0;
  std::string label_;
};

}  // namespace wgx::runtime
