// AsyncRead: an output read without waiting, its staging buffer collected when it is taken.
#include <cstring>
#include <stdexcept>

#include "runtime/program_impl.h"

namespace wgx::runtime {

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

}  // namespace wgx::runtime
