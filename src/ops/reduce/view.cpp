#include "ops/reduce/view.h"

#include <algorithm>
#include <cstring>

#include "ops/common.h"

namespace wgx::ops::reduce {

std::string check_node(const runtime::NodeContext& ctx, uint32_t shared_bytes) {
  const gpu::Limits& limits = ctx.gpu().limits();
  if (limits.max_compute_invocations_per_workgroup < kWorkgroupSize ||
      limits.max_compute_workgroup_size_x < kWorkgroupSize) {
    return "the device runs fewer than " + std::to_string(kWorkgroupSize) + " invocations per workgroup";
  }
  if (limits.max_compute_workgroup_storage_size < shared_bytes) {
    return "needs " + std::to_string(shared_bytes) + " bytes of workgroup memory, the device has " +
           std::to_string(limits.max_compute_workgroup_storage_size);
  }
  if (std::string why = check_rank_and_size(ctx); !why.empty()) return why;
  constexpr uint64_t kMaxElements = uint64_t{1} << 31;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input_value(i).kind == graph::ValueKind::Tensor && numel(ctx.input_max_shape(i)) >= kMaxElements) {
      return "input " + std::to_string(i) + " has 2^31 elements or more";
    }
  }
  if (numel(ctx.output_max_shape(0)) >= kMaxElements) return "the output has 2^31 elements or more";
  return "";
}

std::vector<bool> reduced_dims(const runtime::NodeContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input_type(0).shape.size());
  auto norm = [rank](int64_t d) { return static_cast<size_t>(d < 0 ? d + rank : d); };
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  if (ctx.has_attr("dim")) {
    reduced[norm(ctx.attr("dim").as_int())] = true;
  } else if (!ctx.has_attr("dims") || ctx.attr("dims").as_ints().empty()) {
    reduced.assign(reduced.size(), true);
  } else {
    for (int64_t d : ctx.attr("dims").as_ints()) reduced[norm(d)] = true;
  }
  return reduced;
}

DimGroups group_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  DimGroups g;
  std::vector<uint64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * static_cast<uint64_t>(shape[d]);
  int last_kind = -1;  // 0 kept, 1 reduced: the kind of the last run
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const uint64_t size = static_cast<uint64_t>(shape[d]);
    std::vector<uint32_t>& sizes = reduced[d] ? g.red_size : g.kept_size;
    std::vector<uint32_t>& strides = reduced[d] ? g.red_stride : g.kept_stride;
    (reduced[d] ? g.count : g.outputs) *= size;
    if (last_kind == static_cast<int>(reduced[d])) {  // adjacent to the run: merge
      sizes.back() = static_cast<uint32_t>(sizes.back() * size);
      strides.back() = static_cast<uint32_t>(stride[d]);
    } else {
      sizes.push_back(static_cast<uint32_t>(size));
      strides.push_back(static_cast<uint32_t>(stride[d]));
    }
    last_kind = static_cast<int>(reduced[d]);
  }
  return g;
}

std::string reduced_run_is_last(const std::vector<int64_t>& max_shape, const std::vector<bool>& reduced) {
  bool seen_reduced = false;
  for (size_t d = 0; d < max_shape.size(); ++d) {
    if (max_shape[d] == 1) continue;
    if (reduced[d]) {
      seen_reduced = true;
    } else if (seen_reduced) {
      return "kept dim " + std::to_string(d) + " follows a reduced dim: the reduced elements are strided";
    }
  }
  return "";
}

uint32_t pow2_tile(uint64_t n) {
  uint32_t p = 1;
  while (p < n && p < kWorkgroupSize) p *= 2;
  return p;
}

uint32_t row_lanes(uint64_t n) { return std::clamp<uint32_t>(pow2_tile(n / 4), 32, kWorkgroupSize); }

uint32_t strided_lanes(uint64_t outputs, uint64_t count, uint32_t min_cols) {
  uint32_t cols = 64;
  while (cols > 8 && outputs < cols * kFillWorkgroups) cols /= 2;
  cols = std::max(min_cols, std::min(cols, pow2_tile(outputs)));
  return std::min(pow2_tile(count), kWorkgroupSize / cols);
}

uint32_t f32_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

}  // namespace wgx::ops::reduce
