// Layout ops that move data: permute/transpose, slice, select, cat, expand. Every tensor is stored
// contiguous, so each is a copy: a "copy" route (buffer copies) where the bytes moved form whole
// aligned ranges, else "gather" (the strided gather kernel; cat has its own, in cat.cpp).
#include <algorithm>

#include "ops/common.h"
#include "ops/families.h"
#include "ops/layout/layout_routes.h"

namespace wgx::ops {

void register_views(runtime::KernelRegistry& registry);

namespace layout {
namespace {

// Python's rule for a slice start: negative counts from the end, then clamped to [0, n].
int64_t clamp_start(int64_t start, int64_t n) {
  return start < 0 ? std::max<int64_t>(start + n, 0) : std::min(start, n);
}

size_t axis_of(const NodeContext& c, const char* attr) {
  return norm_dim(c.attr(attr).as_int(), c.input_type(0).shape.size());
}

// permute and transpose: output dim k is input dim perm[k].
std::vector<size_t> permutation(const NodeContext& c) {
  const size_t rank = c.input_type(0).shape.size();
  std::vector<size_t> perm(rank);
  if (c.node().op == "permute") {
    const std::vector<int64_t>& dims = c.attr("dims").as_ints();
    for (size_t k = 0; k < rank; ++k) perm[k] = norm_dim(dims[k], rank);
  } else {
    for (size_t k = 0; k < rank; ++k) perm[k] = k;
    std::swap(perm[axis_of(c, "dim0")], perm[axis_of(c, "dim1")]);
  }
  return perm;
}

Strided permute_map(const NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  const std::vector<int64_t> st = contiguous_strides(in);
  Strided m;
  for (size_t p : permutation(c)) {
    m.sizes.push_back(in[p]);
    m.strides.push_back(st[p]);
  }
  return m;
}

Strided slice_map(const NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  const size_t axis = axis_of(c, "dim");
  Strided m{c.output_shape(0), contiguous_strides(in), 0};
  m.base = clamp_start(c.attr("start").as_int(), in[axis]) * m.strides[axis];
  m.strides[axis] *= c.attr("step").as_int();
  return m;
}

int64_t select_index(const NodeContext& c, size_t axis) {
  const int64_t index = c.attr("index").as_int();
  return index < 0 ? index + c.input_shape(0)[axis] : index;
}

Strided select_map(const NodeContext& c) {
  const size_t axis = axis_of(c, "dim");
  std::vector<int64_t> st = contiguous_strides(c.input_shape(0));
  Strided m{c.output_shape(0), {}, select_index(c, axis) * st[axis]};
  st.erase(st.begin() + static_cast<ptrdiff_t>(axis));
  m.strides = st;
  return m;
}

Strided expand_map(const NodeContext& c) {
  const std::vector<int64_t>& out = c.output_shape(0);
  const std::vector<uint32_t> st = broadcast_strides(c.input_shape(0), out);
  return {out, std::vector<int64_t>(st.begin(), st.begin() + static_cast<ptrdiff_t>(out.size())), 0};
}

// ---- copy routes --------------------------------------------------------------------------------

// The whole input, unchanged: its storage bytes (whole words, zero tail included).
std::vector<CopyRange> whole(const NodeContext& c) {
  return {{0, 0, 0, runtime::storage_bytes(c.input(0).storage, numel(c.input_shape(0)))}};
}

// One block along `axis` of a tensor whose dims before it are 1: rows of `inner` elements.
std::string block_guard(const NodeContext& c, size_t axis) {
  if (auto why = leading_dims_unit(c.input_max_shape(0), axis); !why.empty()) return why;
  const graph::Shape& shape = c.input_type(0).shape;
  if (!aligned_rows(shape, axis + 1, shape.size(), element_size(c.input(0).storage))) {
    return "rows along dim " + std::to_string(axis) + " may not be whole 4-byte words";
  }
  return "";
}

std::string slice_copy_guard(const NodeContext& c) {
  if (c.attr("step").as_int() != 1) return "step > 1";
  return block_guard(c, axis_of(c, "dim"));
}

std::vector<CopyRange> slice_ranges(const NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  const size_t axis = axis_of(c, "dim");
  const uint64_t row = product(in, axis + 1, in.size()) * element_size(c.input(0).storage);
  const auto start = static_cast<uint64_t>(clamp_start(c.attr("start").as_int(), in[axis]));
  const uint64_t bytes = numel(c.output_shape(0)) * element_size(c.input(0).storage);
  return {{0, start * row, 0, bytes}};
}

std::string select_copy_guard(const NodeContext& c) { return block_guard(c, axis_of(c, "dim")); }

std::vector<CopyRange> select_ranges(const NodeContext& c) {
  const std::vector<int64_t>& in = c.input_shape(0);
  const size_t axis = axis_of(c, "dim");
  const uint64_t row = product(in, axis + 1, in.size()) * element_size(c.input(0).storage);
  const uint64_t bytes = numel(c.output_shape(0)) * element_size(c.input(0).storage);
  return {{0, static_cast<uint64_t>(select_index(c, axis)) * row, 0, bytes}};
}

// A permutation that keeps the order of every dim that may exceed 1 moves no bytes.
std::string permute_copy_guard(const NodeContext& c) {
  const std::vector<int64_t> max = c.input_max_shape(0);
  size_t last = 0;
  bool any = false;
  for (size_t p : permutation(c)) {
    if (max[p] <= 1) continue;
    if (any && p < last) return "reorders dims of size > 1";
    last = p;
    any = true;
  }
  return "";
}

// An expand that only adds leading 1s or keeps every dim moves no bytes.
std::string expand_copy_guard(const NodeContext& c) {
  const graph::Shape& in = c.input_type(0).shape;
  const graph::Shape& out = c.output_type(0).shape;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < out.size(); ++d) {
    if (d < lead ? !out[d].is_const(1) : out[d] != in[d - lead]) return "broadcasts dim " + std::to_string(d);
  }
  return "";
}

}  // namespace
}  // namespace layout

void register_layout(runtime::KernelRegistry& registry) {
  using namespace layout;
  register_views(registry);
  for (const char* op : {"permute", "transpose"}) {
    registry.add({op, {copy_route(permute_copy_guard, whole), gather_route({}, permute_map)}});
  }
  registry.add({"slice", {copy_route(slice_copy_guard, slice_ranges), gather_route({}, slice_map)}});
  registry.add({"select", {copy_route(select_copy_guard, select_ranges), gather_route({}, select_map)}});
  registry.add({"expand", {copy_route(expand_copy_guard, whole), gather_route({}, expand_map)}});
  registry.add({"cat", {cat_copy_route(), cat_gather_route()}});
}

}  // namespace wgx::ops
