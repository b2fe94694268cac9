// cat: "copy" when every input is one aligned block of the output (the dims before the cat dim
// are 1), else "gather": the cat kernel, one dispatch per group of up to seven inputs (cat.wgsl
// says why it gathers rather than scattering per input).
#include <algorithm>

#include "ops/common.h"
#include "ops/layout/layout_routes.h"
#include "shaders/layout_shaders.h"

namespace wgx::ops::layout {

namespace {

using runtime::DispatchExec;

constexpr uint32_t kWorkgroupSize = 256;  // every cat variant's @workgroup_size
constexpr size_t kGroup = 7;              // input bindings of the cat kernel
constexpr size_t kCatParamWords = 12;

size_t cat_axis(const NodeContext& c) { return norm_dim(c.attr("dim").as_int(), c.input_type(0).shape.size()); }

std::string copy_guard(const NodeContext& c) {
  const size_t axis = cat_axis(c);
  if (auto why = leading_dims_unit(c.output_max_shape(0), axis); !why.empty()) return why;
  const uint64_t element = element_size(c.output(0).storage);
  for (size_t i = 0; i < c.input_count(); ++i) {
    const graph::Shape& shape = c.input_type(i).shape;
    if (!aligned_rows(shape, axis, shape.size(), element)) {
      return "input " + std::to_string(i) + " may not be whole 4-byte words";
    }
  }
  return "";
}

std::vector<CopyRange> copy_ranges(const NodeContext& c) {
  const uint64_t element = element_size(c.output(0).storage);
  std::vector<CopyRange> ranges;
  uint64_t at = 0;
  for (size_t i = 0; i < c.input_count(); ++i) {
    const uint64_t n = numel(c.input_shape(i)) * element;
    ranges.push_back({i, 0, at, n});
    at += n;
  }
  return ranges;
}

std::unique_ptr<runtime::NodeExec> build_gather(const NodeContext& ctx) {
  const runtime::Storage storage = ctx.output(0).storage;
  std::vector<gpu::Binding> layout(kGroup + 2, gpu::Binding::ReadOnlyStorage);
  layout.front() = gpu::Binding::Uniform;
  layout.back() = gpu::Binding::Storage;
  const gpu::Kernel& kernel = variant_kernel(ctx, *shaders::find_layout("cat." + width_label(storage)), layout);
  const uint32_t per_word = runtime::elements_per_word(storage);
  const size_t axis = cat_axis(ctx);
  // One dispatch per group, in order: later groups read what earlier ones wrote in shared
  // boundary words.
  auto exec = std::make_unique<Steps>();
  for (size_t first = 0; first < ctx.input_count(); first += kGroup) {
    const size_t count = std::min(kGroup, ctx.input_count() - first);
    std::vector<gpu::BufferBinding> buffers;
    // Unused slots repeat the group's first input (read-only bindings may alias).
    for (size_t j = 0; j < kGroup; ++j) buffers.push_back(ctx.input(first + (j < count ? j : 0)).binding());
    buffers.push_back(ctx.output(0).binding());
    auto update = [first, count, axis, per_word](const NodeContext& c) {
      const std::vector<int64_t>& out = c.output_shape(0);
      uint64_t at = 0;
      for (size_t i = 0; i < first; ++i) at += static_cast<uint64_t>(c.input_shape(i)[axis]);
      std::vector<uint32_t> offs(8, 0);
      for (size_t j = 0; j < 8; ++j) {
        offs[j] = static_cast<uint32_t>(at);
        if (j < count) at += static_cast<uint64_t>(c.input_shape(first + j)[axis]);
      }
      const uint64_t n = numel(out);
      DispatchExec::Launch l;
      l.params = {static_cast<uint32_t>(n), static_cast<uint32_t>(product(out, axis + 1, out.size())),
                  static_cast<uint32_t>(out[axis]), static_cast<uint32_t>(count)};
      l.params.insert(l.params.end(), offs.begin(), offs.end());
      const uint64_t words = (n + per_word - 1) / per_word;
      l.workgroups = (words + kWorkgroupSize - 1) / kWorkgroupSize;
      return l;
    };
    exec->add(std::make_unique<DispatchExec>(ctx, kernel, buffers, kCatParamWords, update));
  }
  return exec;
}

}  // namespace

runtime::Route cat_copy_route() { return copy_route(copy_guard, copy_ranges); }

runtime::Route cat_gather_route() {
  return {"gather", storage_guard, build_gather};
}

}  // namespace wgx::ops::layout
