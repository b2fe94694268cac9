#include "runtime/param_arena.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace wgx::runtime {

ParamArena::ParamArena(gpu::Context& ctx)
    : ctx_(ctx), alignment_(std::max<uint32_t>(ctx.limits().min_uniform_buffer_offset_alignment, 16)) {}

ParamArena::Slot ParamArena::allocate(uint32_t bytes) {
  // Uniform blocks are at least 16 bytes and a whole number of 16-byte rows.
  const uint32_t size = static_cast<uint32_t>(gpu::round_up(std::max<uint32_t>(bytes, 16), 16));
  const uint32_t step = static_cast<uint32_t>(gpu::round_up(size, alignment_));
  if (pages_.empty() || pages_.back().used + step > kPageBytes) {
    Page p;
    p.buffer = std::make_unique<gpu::Buffer>(ctx_, kPageBytes, gpu::BufferKind::Uniform,
                                             "params page " + std::to_string(pages_.size()));
    p.mirror.assign(kPageBytes, 0);
    pages_.push_back(std::move(p));
  }
  Page& page = pages_.back();
  Slot slot{static_cast<uint32_t>(pages_.size() - 1), page.used, size};
  page.used += step;
  return slot;
}

gpu::BufferBinding ParamArena::binding(const Slot& slot) const {
  return {pages_.at(slot.page).buffer.get(), slot.offset, slot.bytes};
}

void ParamArena::write(const Slot& slot, const void* data, uint32_t bytes) {
  Page& page = pages_.at(slot.page);
  bytes = std::min(bytes, slot.bytes);
  uint8_t* at = page.mirror.data() + slot.offset;
  if (std::memcmp(at, data, bytes) == 0) return;
  std::memcpy(at, data, bytes);
  page.dirty_begin = std::min(page.dirty_begin, slot.offset);
  page.dirty_end = std::max(page.dirty_end, slot.offset + slot.bytes);
}

void ParamArena::flush() {
  for (Page& page : pages_) {
    if (page.dirty_begin >= page.dirty_end) continue;
    gpu::upload(ctx_, *page.buffer, page.dirty_begin, page.mirror.data() + page.dirty_begin,
                page.dirty_end - page.dirty_begin);
    ++uploads_;
    page.dirty_begin = UINT32_MAX;
    page.dirty_end = 0;
  }
}

void ParamArena::upload(const gpu::Buffer& dst, uint64_t offset, const void* data, size_t bytes) {
  if (!recorded_) {
    gpu::upload(ctx_, dst, offset, data, bytes);
    return;
  }
  if (offset % 4 != 0 || offset + bytes > dst.size() || (bytes % 4 != 0 && offset + bytes != dst.size())) {
    // What gpu::upload would refuse, refused now rather than at the copy.
    throw gpu::GpuError(gpu::ErrorKind::Validation, dst.label(),
                        "an upload of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                            " into a buffer of " + std::to_string(dst.size()) + " bytes");
  }
  const auto* p = static_cast<const uint8_t*>(data);
  pending_.push_back({&dst, offset, std::vector<uint8_t>(p, p + bytes)});
}

void ParamArena::begin_recorded() {
  recorded_ = true;
  staging_used_ = 0;
  for (Staging& s : staging_) s.bytes.clear();
}

void ParamArena::stage(gpu::Recorder& rec, const gpu::Buffer& dst, uint64_t offset, const uint8_t* data,
                       size_t bytes) {
  const size_t padded = gpu::round_up(bytes, 4);
  // The current staging buffer, or the next (a new one twice the size where none is left).
  while (staging_used_ < staging_.size()) {
    Staging& s = staging_[staging_used_];
    if (s.bytes.size() + padded <= s.buffer->size()) break;
    ++staging_used_;
  }
  if (staging_used_ == staging_.size()) {
    const uint64_t size =
        std::max<uint64_t>(padded, staging_.empty() ? 4 * kPageBytes : 2 * staging_.back().buffer->size());
    staging_.push_back({std::make_unique<gpu::Buffer>(ctx_, size, gpu::BufferKind::Storage,
                                                      "params staging " + std::to_string(staging_.size())),
                        {}});
  }
  Staging& s = staging_[staging_used_];
  const uint64_t at = s.bytes.size();
  s.bytes.insert(s.bytes.end(), data, data + bytes);
  s.bytes.resize(at + padded, 0);
  rec.copy(*s.buffer, at, dst, offset, padded);
}

void ParamArena::record_flush(gpu::Recorder& rec) {
  for (Page& page : pages_) {
    if (page.dirty_begin >= page.dirty_end) continue;
    stage(rec, *page.buffer, page.dirty_begin, page.mirror.data() + page.dirty_begin, page.dirty_end - page.dirty_begin);
    page.dirty_begin = UINT32_MAX;
    page.dirty_end = 0;
  }
  for (const Pending& u : pending_) stage(rec, *u.dst, u.offset, u.bytes.data(), u.bytes.size());
  pending_.clear();
}

void ParamArena::end_recorded() {
  if (!pending_.empty()) throw std::logic_error("params: an upload after the last step's record_flush()");
  recorded_ = false;
  for (Staging& s : staging_) {
    if (s.bytes.empty()) continue;
    gpu::upload(ctx_, *s.buffer, 0, s.bytes.data(), s.bytes.size());
    ++uploads_;
  }
  pending_.clear();
}

void ParamArena::abort_recorded() {
  recorded_ = false;
  pending_.clear();
  // The mirror holds what the recorded steps staged, which never reached the pages: the next
  // flush() uploads every page whole.
  for (Page& page : pages_) {
    page.dirty_begin = 0;
    page.dirty_end = page.used;
  }
}

}  // namespace wgx::runtime
