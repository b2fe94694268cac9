// Helpers for the reduce family's tests: routes and CPU references in double (f16 data and the
// norms' reference: numeric_test_util.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "numeric_test_util.h"
#include "runtime/program.h"

namespace wgx::runtime::testing {

// The route the node producing output number `node` took.
inline std::string route_of(const Program& prog, size_t node) { return prog.routes().at(node).route; }

inline std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

inline size_t norm_dim(int64_t d, size_t rank) { return static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(rank) : d); }

// For every element of a row-major `shape`, the index of its output when the dims in `reduced`
// are reduced (outputs in row-major order of the kept dims), and its index along them.
struct ReduceMap {
  std::vector<size_t> out, along;
  size_t outputs = 1;
};
inline ReduceMap reduce_map(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  ReduceMap m;
  size_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    n *= static_cast<size_t>(shape[d]);
    if (!reduced[d]) m.outputs *= static_cast<size_t>(shape[d]);
  }
  for (size_t i = 0; i < n; ++i) {
    size_t rem = i, out = 0, along = 0, out_stride = 1, along_stride = 1;
    for (size_t k = shape.size(); k-- > 0;) {
      const size_t size = static_cast<size_t>(shape[k]), c = rem % size;
      rem /= size;
      (reduced[k] ? along : out) += c * (reduced[k] ? along_stride : out_stride);
      (reduced[k] ? along_stride : out_stride) *= size;
    }
    m.out.push_back(out);
    m.along.push_back(along);
  }
  return m;
}

inline std::vector<bool> dims_mask(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<bool> r(rank, dims.empty());
  for (int64_t d : dims) r[norm_dim(d, rank)] = true;
  return r;
}

// sum, mean, amax, amin or argmax (first index of the max) over `dims` (empty: all).
inline std::vector<double> reduce_ref(const std::string& op, const std::vector<float>& x,
                                      const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  const ReduceMap m = reduce_map(shape, dims_mask(dims, shape.size()));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(m.outputs, op == "amax" || op == "argmax" ? -inf : op == "amin" ? inf : 0.0);
  std::vector<double> count(m.outputs, 0), arg(m.outputs, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    double& a = acc[m.out[i]];
    const double v = x[i];
    if (op == "sum" || op == "mean") a += v;
    if (op == "amax") a = std::max(a, v);
    if (op == "amin") a = std::min(a, v);
    if (op == "argmax" && v > a) {
      a = v;
      arg[m.out[i]] = static_cast<double>(m.along[i]);
    }
    count[m.out[i]] += 1;
  }
  if (op == "mean") {
    for (size_t o = 0; o < acc.size(); ++o) acc[o] /= count[o];
  }
  return op == "argmax" ? arg : acc;
}

// softmax (or log_softmax) along `dim`.
inline std::vector<double> softmax_ref(const std::vector<float>& x, const std::vector<int64_t>& shape, int64_t dim,
                                       bool log) {
  std::vector<bool> mask(shape.size(), false);
  mask[norm_dim(dim, shape.size())] = true;
  const ReduceMap m = reduce_map(shape, mask);
  std::vector<double> mx(m.outputs, -std::numeric_limits<double>::infinity()), sum(m.outputs, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mx[m.out[i]] = std::max<double>(mx[m.out[i]], x[i]);
  for (size_t i = 0; i < x.size(); ++i) sum[m.out[i]] += std::exp(x[i] - mx[m.out[i]]);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double z = x[i] - mx[m.out[i]];
    y[i] = log ? z - std::log(sum[m.out[i]]) : std::exp(z) / sum[m.out[i]];
  }
  return y;
}

}  // namespace wgx::runtime::testing
