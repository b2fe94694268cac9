// A graph built for a device: validated, memory planned, weights uploaded, a route chosen and its
// pipelines and bind groups made for every node, once. Then executed many times: set inputs and
// SymInts, execute (a node's resize hook runs only when a SymInt it can see changed; all
// dispatches go into one command buffer), read outputs when asked. Mutable buffers (KV caches,
// streaming state) persist across executions until reset_state().
//
// Executions need not wait for each other: the host may record and submit the next execute()
// while the GPU runs the last. Two things keep the host out of the way of a loop whose steps feed
// each other (greedy decoding):
//   feed_from(input, output)  the device copies the output into the input at the end of every
//                             execute(), so the next one runs without set_input;
//   read_async(output)        the next execute() also copies the output into a staging buffer,
//                             which the host collects later (AsyncRead) without blocking the
//                             queue, while later steps are already submitted.
//
//   p.set_input<int32_t>("tokens", prompt, {1, n});
//   p.feed_from("tokens", "next_token");          // from this execute on
//   std::deque<runtime::AsyncRead> reads;
//   for (int64_t i = 0; i < steps; ++i) {
//     p.set_sym("input_pos", pos + i);
//     reads.push_back(p.read_async("next_token"));
//     p.execute();                                 // submits; waits for nothing
//     if (reads.size() == 3) { use(reads.front().i32()[0]); reads.pop_front(); }
//   }
//
// A Program is used from one thread at a time, as are its AsyncReads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
#include "runtime/split_constants.h"

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
  uint64_t scratch = 0;         // nodes' scratch, shared by all nodes (runtime::ScratchPool, HandoffPool)
  uint64_t total() const { return constants + state + inputs + intermediates + scratch; }
};

class Program;

// An output's value at the end of one execute(), copied to the host without blocking the queue
// (Program::read_async). Copyable: copies share the value. May outlive its program only if the
// value was taken before the program was destroyed.
class AsyncRead {
 public:
  AsyncRead() = default;
  explicit operator bool() const { return state_ != nullptr; }
  const std::string& output() const;

  // Whether the value is on the host; never blocks. False until the execute() that fills it has
  // been submitted.
  bool ready() const;
  // The value, blocking until it is on the host. The first of these calls takes the value out of
  // its staging buffer (which is then free for another read); later calls give the same value.
  // std::logic_error when no execute() has run since read_async() (nothing will fill it) or the
  // program is gone; std::runtime_error when the execute() meant to fill it failed.
  std::vector<uint8_t> storage() const;  // the output's storage bytes (as read_storage)
  std::vector<float> f32() const;        // converted to f32 (as read_f32)
  std::vector<int32_t> i32() const;      // an i32 (or i64, stored as i32) output's values
  // The output's shape in the execute() that filled it.
  const std::vector<int64_t>& shape() const;

 private:
  friend class Program;
  struct State;
  explicit AsyncRead(std::shared_ptr<State> state) : state_(std::move(state)) {}
  const std::vector<uint8_t>& take() const;
  std::shared_ptr<State> state_;
};

class Program {
 public:
  Program(gpu::Context& gpu, graph::Graph graph, const graph::WeightStore& weights,
          RuntimeOptions options = {}, const KernelRegistry& kernels = KernelRegistry::global());
  // A second graph of the same model (models::build_rows_decoder): constants that `constants_from`
  // holds under the same name, dtype and size are read from its buffers instead of uploaded again
  // (the caller vouches that their bytes are the same). `constants_from` must outlive this program.
  // If it was built with LaterWeights and is still being written, this program's
  // NodeContext::when_constants_ready work runs after its last write.
  Program(gpu::Context& gpu, graph::Graph graph, const graph::WeightStore& weights, const Program& constants_from,
          RuntimeOptions options = {}, const KernelRegistry& kernels = KernelRegistry::global());
  // Weights that arrive after the build (a .wgx file streamed from the network): the constants'
  // buffers are made empty, and write_constant() fills them before the first execute().
  struct LaterWeights {};
  Program(gpu::Context& gpu, graph::Graph graph, LaterWeights, RuntimeOptions options = {},
          const KernelRegistry& kernels = KernelRegistry::global());
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // LaterWeights: bytes [offset, offset + size) of constant `index`'s data (its dtype's natural
  // layout, as graph::WeightStore holds it). Bytes that need no conversion go to the GPU at once
  // (offset and size multiples of 4, except a last piece); others are held until the constant is
  // whole, then converted and uploaded. Throws std::invalid_argument for a range outside the data.
  void write_constant(size_t index, uint64_t offset, std::span<const uint8_t> bytes);
  // Throws graph::GraphError naming the first constant that was not written whole.
  void check_constants_written() const;

  // Sets a SymInt for the next execution (checked against its range).
  void set_sym(std::string_view name, int64_t value);
  // Host data for an input, in the input's dtype and natural layout, with its actual shape;
  // symbolic dims of the input take their values from `shape`. Ends a feed into that input
  // (feed_from): the next execute() reads these bytes.
  void set_input(std::string_view name, std::span<const uint8_t> bytes, std::vector<int64_t> shape);
  template <typename T>
  void set_input(std::string_view name, std::span<const T> data, std::vector<int64_t> shape) {
    set_input(name, {reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()}, std::move(shape));
  }

  // Records every node into one command buffer and submits it; waits for nothing (the GPU runs
  // it while the host goes on). A step of more than kFirstPart dispatches outside the one-token
  // class (prefill) is submitted in parts instead, each ending at a node boundary once it holds
  // kFirstPart, 2 x kFirstPart, 4 x ... dispatches, so that the GPU starts on the first while the
  // host records the rest (profiling and `repeats` > 1 keep one command buffer;
  // submits_per_execute() says how many the last took). Throws
  // std::logic_error, before submitting anything, when a fed
  // input's shape no longer matches what its feed wrote (see feed_from). `repeats` > 1 records
  // the nodes that many times back to back in the command buffer (feeds and readbacks once, after
  // the last): a kernel's cost in a stream of dependent dispatches, with Timing::Passes (bench-op).
  // The outputs are the same only where running the graph again changes nothing.
  void execute(int repeats = 1);

  // `steps` executes back to back in one command buffer and one submit (decoding several tokens
  // a submit: a submit costs the GPU ~20-30 us on the H200). Step 0 runs with what was set
  // before the call; before each later step k, before_step(k) runs on the host and may set
  // SymInts, inputs and reads (read_async) for it as between executes. Each step's params and
  // inputs reach the device in order with the steps (ParamArena's recorded copies), the feeds
  // copy after every step, and a read asked for before step k holds what step k left. Several
  // steps are one submit: where a step after the first fails to record (a throw in before_step,
  // a fed input's shape), nothing is submitted, its reads and those of the steps before it
  // fail, and the inputs set for those steps are lost.
  void execute_steps(int steps, const std::function<void(int step)>& before_step);

  // Records the next execute's step now (resize hooks, params, dispatches), so that this host
  // work overlaps what the GPU is running (a sampled decode step, whose token the host picks
  // only once the last step's logits are back); that execute() then only adds the feeds' copies
  // and the reads asked for and submits. set_input and read_async in between are fine (an
  // input's bytes are a queue write, which lands before the submit); a SymInt set to another
  // value in between (an input of another shape among them), repeats or another timing make
  // execute() record anew. last_execute_was_prepared() says which it was.
  void prepare();
  bool last_execute_was_prepared() const { return last_was_prepared_; }

  // Feeds `input` from `output` on the device: every execute() from now on ends by copying the
  // output's value into the input's storage (in the same command buffer), and the input takes
  // the output's shape (its symbolic dims' SymInts are set from it), so the next execute() reads
  // what the last one produced, with no host round trip. The execute() right after this call
  // still reads what the input holds now (set_input's bytes, or an earlier feed's). Replaces an
  // earlier feed into the same input.
  //   Ends with set_input(input, ...) or stop_feed(input). A set_sym that changes a SymInt sizing
  //   the fed input makes the next execute() throw instead of reading a wrongly sized value.
  // Throws std::invalid_argument when either name is unknown, the dtypes differ, the ranks
  // differ, a fixed dim of the input is not the same fixed dim of the output, the output can be
  // larger than the input's storage, or the two share storage.
  void feed_from(std::string_view input, std::string_view output);
  void stop_feed(std::string_view input);
  // The output feeding `input`, or nothing.
  std::optional<std::string> feeding(std::string_view input) const;

  // Asks the next execute() to copy `output` into a staging buffer as well, and returns the
  // handle to collect it with. Up to kMaxReadsInFlight reads of one output may be outstanding
  // (asked for, and not yet collected or dropped); more is a std::logic_error. A read dropped
  // uncollected frees its staging buffer. Throws std::invalid_argument for an unknown output or
  // a q4 one.
  static constexpr size_t kMaxReadsInFlight = 8;
  AsyncRead read_async(std::string_view output);

  std::vector<int64_t> output_shape(std::string_view name) const;
  // An output converted to f32 (float, integer and bool outputs alike).
  std::vector<float> read_f32(std::string_view name) const;
  // An output's storage bytes as they are on the device (current shape).
  std::vector<uint8_t> read_storage(std::string_view name) const;
  // The current contents of a mutable buffer, as f32, or its storage bytes as they are on the
  // device (at its largest shape).
  std::vector<float> read_state_f32(std::string_view buffer) const;
  std::vector<uint8_t> read_state_storage(std::string_view buffer) const;

  // Copies output `output` (as the last execute() left it) into mutable buffer `buffer` of
  // `target`, another program on the same device, on the GPU: queued after that execute() and
  // before target's next one (Whisper's encoder hands its keys and values to the decoder's state
  // this way). The two must have the same storage and the output its largest shape, the
  // buffer's size; else std::invalid_argument, as for another device.
  void copy_to_state(std::string_view output, Program& target, std::string_view buffer) const;
  // Copies mutable buffer `buffer` whole into mutable buffer `into` of `target` (this program or
  // another on the same device built from a graph with it), on the GPU, ordered as copy_to_state
  // (beam search forks a hypothesis's caches this way). The same storage and size, else
  // std::invalid_argument.
  void copy_state(std::string_view buffer, Program& target, std::string_view into) const;

  // Mutable buffers back to their initial contents.
  void reset_state();
  // Writes a whole mutable buffer: `bytes` of its dtype at its (largest) shape. Ordered like
  // set_input: before the next execute's steps, or between steps inside execute_steps.
  void write_state(std::string_view buffer, std::span<const uint8_t> bytes);
  template <typename T>
  void write_state(std::string_view buffer, std::span<const T> data) {
    write_state(buffer, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()));
  }
  // Writes part of one, from element `first` on, where its storage holds its dtype's 4-byte
  // elements as they are (i32, f32 kept as f32); ordered as write_state.
  void write_state_at(std::string_view buffer, uint64_t first, std::span<const uint8_t> bytes);
  template <typename T>
  void write_state_at(std::string_view buffer, uint64_t first, std::span<const T> data) {
    write_state_at(buffer, first,
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()));
  }

  const std::vector<RouteChoice>& routes() const { return routes_; }
  // The weights split into row chunks to fit the device's storage bindings (split_constants.h);
  // routes() lists the chunks' nodes.
  const std::vector<ConstantSplit>& splits() const { return splits_; }
  const MemoryReport& memory() const { return memory_; }
  // GPU times of the last execute(): per dispatch with Timing::Dispatches (each in a pass of its
  // own), per pass with Timing::Passes (the step as it runs unprofiled, passes split only by
  // copies); empty without timestamp-query or with timing off (the default). set_timing chooses
  // for the executes that follow.
  const std::vector<gpu::DispatchTiming>& last_timings() const { return timings_; }
  void set_timing(gpu::Timing timing);
  size_t dispatches_per_execute() const { return dispatches_; }
  size_t submits_per_execute() const { return submits_; }
  static constexpr size_t kFirstPart = 16;
  // Queue writes of uniform params so far: only params that changed since the last execute are
  // uploaded, one write per dirty page.
  size_t param_uploads() const;
  // Compute pipelines this program compiled: one per kernel variant and set of pipeline constants
  // (the products and flash decoding build theirs per shape).
  size_t kernels_compiled() const;
  // This thread's CPU time in execute() so far, by phase (seconds): the nodes' resize hooks and
  // shape updates, the uniform params' upload, recording the dispatches, recording the feeds'
  // copies and the readbacks, and the submit (where Dawn turns the recording into the backend's
  // commands).
  struct HostTimes {
    double resize = 0, params = 0, record = 0, copies = 0, submit = 0;
  };
  const HostTimes& host_times() const { return host_times_; }
  // Whether the last execute() ran the small shape class (see RouteChoice::small_route).
  bool last_execute_was_small() const;
  // Resize hooks run so far. A node's hook runs on its first execute in a shape class and then
  // only when a SymInt it can see (in its inputs' and outputs' shapes, or a Sym input) changed.
  size_t resize_count() const;
  // Mutations whose value is copied into its buffer after the producing node; the others are
  // written into the buffer's own storage.
  size_t mutation_copies() const { return mutation_copies_; }
  // One line per node: value, op, inputs, type, route; the split weights; then the memory plan.
  std::string describe() const;

 private:
  friend class NodeContext;
  void build(const graph::WeightStore* weights, const Program* constants_from = nullptr);  // null: LaterWeights
  // write_constant()'s bytes for constant `index` of the graph as built (a chunk, or a whole).
  void write_later(size_t index, uint64_t offset, std::span<const uint8_t> bytes);
  void run(int repeats, int steps, const std::function<void(int)>& before_step);
  // Resizes the nodes of the shape class whose SymInts changed since their last resize.
  void resize_stale(bool small);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<RouteChoice> routes_;
  std::vector<ConstantSplit> splits_;
  MemoryReport memory_;
  std::vector<gpu::DispatchTiming> timings_;
  size_t dispatches_ = 0;
  size_t submits_ = 0;
  size_t mutation_copies_ = 0;
  bool last_was_prepared_ = false;
  HostTimes host_times_;
};

}  // namespace wgx::runtime
