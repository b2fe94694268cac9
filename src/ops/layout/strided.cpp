// The strided gather and buffer-copy executables behind every layout op, and their guards.
#include <numeric>

#include "ops/common.h"
#include "ops/layout/layout_routes.h"
#include "shaders/layout_shaders.h"

namespace wgx::ops::layout {

namespace {

using runtime::DispatchExec;
using runtime::Storage;

constexpr uint32_t kWorkgroupSize = 256;  // every layout variant's @workgroup_size
constexpr size_t kGatherParamWords = 20;

// Drops size-1 dims and merges neighbours that are contiguous in the source, so the kernel's
// index loop runs over as few dims as possible (a dim-0 slice becomes one dim).
Strided coalesce(const Strided& m) {
  Strided out;
  out.base = m.base;
  for (size_t d = 0; d < m.sizes.size(); ++d) {
    const int64_t n = m.sizes[d], s = m.strides[d];
    if (n == 0) return {{0}, {0}, 0};
    if (n == 1) continue;
    if (!out.sizes.empty() && out.strides.back() == s * n) {
      out.sizes.back() *= n;
      out.strides.back() = s;
    } else {
      out.sizes.push_back(n);
      out.strides.push_back(s);
    }
  }
  return out;
}

std::unique_ptr<runtime::NodeExec> build_gather(const NodeContext& ctx, const StridedFn& map) {
  const Storage storage = ctx.output(0).storage;
  const gpu::Kernel& kernel =
      variant_kernel(ctx, *shaders::find_layout("gather." + width_label(storage)),
                     {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  const uint32_t per_word = runtime::elements_per_word(storage);
  auto update = [map, per_word](const NodeContext& c) {
    const Strided m = coalesce(map(c));
    const uint64_t n = numel(m.sizes);
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(m.sizes.size()), static_cast<uint32_t>(m.base), 0};
    std::vector<uint32_t> sizes(8, 1), strides(8, 0);
    for (size_t d = 0; d < m.sizes.size(); ++d) {
      sizes[d] = static_cast<uint32_t>(m.sizes[d]);
      strides[d] = static_cast<uint32_t>(m.strides[d]);
    }
    l.params.insert(l.params.end(), sizes.begin(), sizes.end());
    l.params.insert(l.params.end(), strides.begin(), strides.end());
    const uint64_t words = (n + per_word - 1) / per_word;
    l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel, std::vector<gpu::BufferBinding>{ctx.input(0).binding(), ctx.output(0).binding()},
      kGatherParamWords, update);
}

// Recorder copies between tensors; the ranges are recomputed on every resize.
class CopyExec : public runtime::NodeExec {
 public:
  CopyExec(const NodeContext& ctx, CopyFn ranges) : ranges_fn_(std::move(ranges)), out_(ctx.output(0)) {
    for (size_t i = 0; i < ctx.input_count(); ++i) inputs_.push_back(ctx.input(i));
  }
  void resize(const NodeContext& ctx) override { ranges_ = ranges_fn_(ctx); }
  void record(gpu::Recorder& rec) override {
    for (const CopyRange& r : ranges_) {
      if (r.bytes == 0) continue;
      const runtime::TensorRef& in = inputs_[r.input];
      rec.copy(*in.buffer, in.offset + r.src_offset, *out_.buffer, out_.offset + r.dst_offset, r.bytes);
    }
  }

 private:
  CopyFn ranges_fn_;
  runtime::TensorRef out_;
  std::vector<runtime::TensorRef> inputs_;
  std::vector<CopyRange> ranges_;
};

}  // namespace

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d > 1; --d) strides[d - 2] = strides[d - 1] * shape[d - 1];
  return strides;
}

size_t norm_dim(int64_t dim, size_t rank) {
  return static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(rank) : dim);
}

uint64_t product(const std::vector<int64_t>& shape, size_t from, size_t to) {
  uint64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= static_cast<uint64_t>(shape[d]);
  return n;
}

std::string width_label(Storage s) {
  switch (s) {
    case Storage::F32:
    case Storage::I32: return "w32";
    case Storage::F16Packed:
    case Storage::F16Native: return "w16";
    case Storage::Bytes: return "w8";
    default: return "";
  }
}

uint64_t element_size(Storage storage) { return 4 / runtime::elements_per_word(storage); }

bool aligned_rows(const graph::Shape& shape, size_t from, size_t to, uint64_t element_bytes) {
  // A symbolic dim coef*s+offset is a multiple of gcd(coef, offset) for every s; only the product
  // modulo 4 matters.
  uint64_t f = element_bytes % 4;
  for (size_t d = from; d < to; ++d) {
    const graph::Dim& dim = shape[d];
    const int64_t g = dim.is_const() ? dim.value() : std::gcd(dim.coef(), dim.offset());
    f = f * static_cast<uint64_t>(g % 4) % 4;
  }
  return f == 0;
}

std::string leading_dims_unit(const std::vector<int64_t>& max_shape, size_t axis) {
  for (size_t d = 0; d < axis; ++d) {
    if (max_shape[d] > 1) return "dim " + std::to_string(d) + ", before dim " + std::to_string(axis) + ", may exceed 1";
  }
  return "";
}

std::string storage_guard(const NodeContext& ctx) {
  const Storage s = ctx.output(0).storage;
  if (width_label(s).empty()) return std::string("no kernel moves ") + runtime::storage_name(s);
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input(i).storage != s) return "input " + std::to_string(i) + " is stored unlike the output";
  }
  return check_rank_and_size(ctx);
}

runtime::Route gather_route(Guard guard, StridedFn map) {
  return {"gather",
          [guard](const NodeContext& ctx) {
            std::string why = storage_guard(ctx);
            return why.empty() && guard ? guard(ctx) : why;
          },
          [map](const NodeContext& ctx) { return build_gather(ctx, map); }};
}

runtime::Route copy_route(Guard guard, CopyFn ranges) {
  return {"copy",
          [guard](const NodeContext& ctx) {
            std::string why = storage_guard(ctx);
            return why.empty() ? guard(ctx) : why;
          },
          [ranges](const NodeContext& ctx) { return std::make_unique<CopyExec>(ctx, ranges); }};
}

}  // namespace wgx::ops::layout
