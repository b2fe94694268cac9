// Program's outputs and state, read and written by the host.
#include <algorithm>
#include <stdexcept>

#include "runtime/program_impl.h"

namespace wgx::runtime {


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

void Program::write_state_at(std::string_view name, uint64_t first, std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  const graph::MutableBuffer& b = buffer_named(m.graph, name);
  const graph::TensorType& type = m.graph.type(b.value);
  const uint64_t element = graph::element_bytes(type.dtype);
  const uint64_t size = numel(graph::max_shape(type.shape, m.graph.syms)) * element;
  const TensorRef& r = m.refs[b.value];
  const std::string what = "mutable buffer '" + b.name + "' (" + graph::to_string(type, &m.graph.syms) + ")";
  if (element != 4 || elements_per_word(r.storage) != 1 || !storage_is_copy(type.dtype, r.storage)) {
    throw std::invalid_argument(what + " is stored as " + storage_name(r.storage) + ": it is written only whole");
  }
  if (bytes.size() % element != 0 || first > size / element || bytes.size() > size - first * element) {
    throw std::invalid_argument(what + " holds " + std::to_string(size) + " bytes: " + std::to_string(bytes.size()) +
                                " from element " + std::to_string(first) + " do not fit");
  }
  if (!bytes.empty()) m.params.upload(*r.buffer, r.offset + first * element, bytes.data(), bytes.size());
}

void Program::copy_to_state(std::string_view output, Program& target, std::string_view buffer) const {
  const Impl& m = *impl_;
  Impl& t = *target.impl_;
  if (&m.gpu != &t.gpu) throw std::invalid_argument("copy_to_state: the programs are on different devices");
  const ValueId v = m.named(m.graph.outputs, output, "output").value;
  const graph::MutableBuffer& b = buffer_named(t.graph, buffer);
  const TensorRef& src = m.refs[v];
  const TensorRef& dst = t.refs[b.value];
  const uint64_t bytes = storage_bytes(src.storage, numel(m.shapes[v]));
  const uint64_t want = storage_bytes(dst.storage, numel(graph::max_shape(t.graph.type(b.value).shape, t.graph.syms)));
  if (src.storage != dst.storage || bytes != want) {
    throw std::invalid_argument("copy_to_state: output '" + std::string(output) + "' (" + std::to_string(bytes) +
                                " bytes) does not fit mutable buffer '" + b.name + "' (" + std::to_string(want) +
                                " bytes) as it is stored");
  }
  gpu::Recorder rec(m.gpu, "copy to state");
  rec.copy(*src.buffer, src.offset, *dst.buffer, dst.offset, gpu::round_up(bytes, 4));
  rec.submit();
}

void Program::copy_state(std::string_view buffer, Program& target, std::string_view into) const {
  const Impl& m = *impl_;
  Impl& t = *target.impl_;
  if (&m.gpu != &t.gpu) throw std::invalid_argument("copy_state: the programs are on different devices");
  const graph::MutableBuffer& a = buffer_named(m.graph, buffer);
  const graph::MutableBuffer& b = buffer_named(t.graph, into);
  const TensorRef& src = m.refs[a.value];
  const TensorRef& dst = t.refs[b.value];
  const uint64_t bytes = storage_bytes(src.storage, numel(graph::max_shape(m.graph.type(a.value).shape, m.graph.syms)));
  const uint64_t want = storage_bytes(dst.storage, numel(graph::max_shape(t.graph.type(b.value).shape, t.graph.syms)));
  if (src.storage != dst.storage || bytes != want) {
    throw std::invalid_argument("copy_state: mutable buffer '" + a.name + "' (" + std::to_string(bytes) +
                                " bytes) does not fit mutable buffer '" + b.name + "' (" + std::to_string(want) +
                                " bytes) as they are stored");
  }
  if (src.buffer == dst.buffer && src.offset == dst.offset) return;
  gpu::Recorder rec(m.gpu, "copy state");
  rec.copy(*src.buffer, src.offset, *dst.buffer, dst.offset, gpu::round_up(bytes, 4));
  rec.submit();
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

}  // namespace wgx::runtime
