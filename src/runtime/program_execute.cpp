// Program's execution: SymInts and inputs set, steps recorded and submitted, feeds from outputs
// into inputs on the device, asynchronous reads.
#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "runtime/program_impl.h"

namespace wgx::runtime {

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

}  // namespace wgx::runtime
