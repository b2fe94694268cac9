// A graph built for a device: validated, memory planned, weights uploaded, a route chosen and its
// pipelines and bind groups made for every node, once. Then executed many times: set inputs and
// SymInts, execute (resize hooks run only when a SymInt changed; all dispatches go into one
// command buffer), read outputs when asked. Mutable buffers (KV caches, streaming state) persist
// across executions until reset_state().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/kernel.h"
#include "gpu/recorder.h"
#include "graph/graph.h"
#include "graph/weights.h"
#include "runtime/op_kernel.h"

namespace wgx::runtime {

struct RouteChoice {
  uint32_t node = 0;
  std::string op;
  std::string label;
  std::string route;                  // "view" for nodes that run nothing
  std::vector<std::string> rejected;  // "route: why not", for routes tried before it
  // The route taken when every SymInt that sizes a graph input is at its minimum (one-token
  // decode steps), where it differs from `route`; empty otherwise.
  std::string small_route;
};

// "512 B", "3.5 KiB", "1.2 GiB".
std::string human_bytes(uint64_t bytes);

struct MemoryReport {
  uint64_t constants = 0;       // weights on the device
  uint64_t state = 0;           // mutable buffers
  uint64_t inputs = 0;          // graph inputs at their max shape
  uint64_t intermediates = 0;   // the planned slots for intermediates
  uint64_t unplanned = 0;       // what intermediates would take without reuse
  uint64_t total() const { return constants + state + inputs + intermediates; }
};

class Program {
 public:
  Program(gpu::Context& gpu, graph::Graph graph, const graph::WeightStore& weights,
          RuntimeOptions options = {}, const KernelRegistry& kernels = KernelRegistry::global());
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Sets a SymInt for the next execution (checked against its range).
  void set_sym(std::string_view name, int64_t value);
  // Host data for an input, in the input's dtype and natural layout, with its actual shape;
  // symbolic dims of the input take their values from `shape`.
  void set_input(std::string_view name, std::span<const uint8_t> bytes, std::vector<int64_t> shape);
  template <typename T>
  void set_input(std::string_view name, std::span<const T> data, std::vector<int64_t> shape) {
    set_input(name, {reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()}, std::move(shape));
  }

  void execute();

  std::vector<int64_t> output_shape(std::string_view name) const;
  // An output converted to f32 (float, integer and bool outputs alike).
  std::vector<float> read_f32(std::string_view name) const;
  // An output's storage bytes as they are on the device (current shape).
  std::vector<uint8_t> read_storage(std::string_view name) const;
  // The current contents of a mutable buffer, as f32.
  std::vector<float> read_state_f32(std::string_view buffer) const;

  // Mutable buffers back to their initial contents.
  void reset_state();

  const std::vector<RouteChoice>& routes() const { return routes_; }
  const MemoryReport& memory() const { return memory_; }
  // Per-dispatch GPU times of the last execute() (profiling on: RuntimeOptions "profile" = "1").
  const std::vector<gpu::DispatchTiming>& last_timings() const { return timings_; }
  size_t dispatches_per_execute() const { return dispatches_; }
  // Queue writes of uniform params so far: only params that changed since the last execute are
  // uploaded, one write per dirty page.
  size_t param_uploads() const;
  // Whether the last execute() ran the small shape class (see RouteChoice::small_route).
  bool last_execute_was_small() const;
  // Mutations whose value is copied into its buffer after the producing node; the others are
  // written into the buffer's own storage.
  size_t mutation_copies() const { return mutation_copies_; }
  // One line per node: value, op, inputs, type, route; then the memory plan.
  std::string describe() const;

 private:
  friend class NodeContext;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<RouteChoice> routes_;
  MemoryReport memory_;
  std::vector<gpu::DispatchTiming> timings_;
  size_t dispatches_ = 0;
  size_t mutation_copies_ = 0;
};

}  // namespace wgx::runtime
