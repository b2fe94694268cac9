#include "runtime/param_arena.h"

#include <algorithm>
#include <cstring>

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

}  // namespace wgx::runtime
