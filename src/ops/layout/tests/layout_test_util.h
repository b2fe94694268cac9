// Helpers for the layout tests: tensors as raw element bits (random, every pattern a dtype can
// hold), read back from storage with a check that tail padding is zero, and a reference that
// gathers output elements through a multi-index map. Layout ops move bits, so comparisons are
// exact.
#pragma once

#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "runtime/program.h"
#include "runtime_test_util.h"

namespace wgx::runtime::layout_test {

using graph::DType;
using Index = std::vector<int64_t>;
using Ints = std::vector<int64_t>;

inline const std::vector<DType> kDTypes{DType::f32, DType::i32, DType::f16, DType::boolean, DType::u8};

inline std::string dtype_param_name(const ::testing::TestParamInfo<DType>& p) { return graph::dtype_name(p.param); }

inline uint64_t count(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

// The dtype's storage moves 4-byte elements (one per word).
inline bool word_sized(DType d) { return d == DType::f32 || d == DType::i32; }

struct HostTensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<uint32_t> bits;  // one per element, in its low element_bytes(dtype) bytes
};

inline HostTensor random_tensor(DType dtype, std::vector<int64_t> shape, uint32_t seed) {
  const uint32_t mask = dtype == DType::boolean ? 1u
                        : dtype == DType::u8    ? 0xffu
                        : dtype == DType::f16   ? 0xffffu
                                                : 0xffffffffu;
  std::mt19937 rng(seed);
  HostTensor t{dtype, std::move(shape), {}};
  t.bits.resize(count(t.shape));
  for (auto& b : t.bits) b = static_cast<uint32_t>(rng()) & mask;
  return t;
}

inline void set_input(Program& p, const std::string& name, const HostTensor& t) {
  const uint32_t eb = graph::element_bytes(t.dtype);
  std::vector<uint8_t> bytes(t.bits.size() * eb);
  for (size_t i = 0; i < t.bits.size(); ++i) std::memcpy(bytes.data() + i * eb, &t.bits[i], eb);
  p.set_input(name, std::span<const uint8_t>(bytes), t.shape);
}

// An output's elements as bits. Adds a failure when its storage is not whole words or a padding
// byte after the last element is not zero.
inline std::vector<uint32_t> read_bits(const Program& p, const std::string& name, DType dtype) {
  const std::vector<uint8_t> raw = p.read_storage(name);
  const uint64_t n = count(p.output_shape(name));
  const uint32_t eb = graph::element_bytes(dtype);
  EXPECT_EQ(raw.size(), (n * eb + 3) / 4 * 4) << name;
  for (size_t b = n * eb; b < raw.size(); ++b) EXPECT_EQ(raw[b], 0) << name << ": padding byte " << b;
  std::vector<uint32_t> bits(std::min<uint64_t>(n, raw.size() / eb), 0);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&bits[i], raw.data() + i * eb, eb);
  return bits;
}

// out[c] = in[source(c)] for every multi-index c of `out_shape`.
inline std::vector<uint32_t> reference(const HostTensor& in, const std::vector<int64_t>& out_shape,
                                       const std::function<Index(const Index&)>& source) {
  std::vector<uint32_t> out;
  Index c(out_shape.size(), 0);
  for (uint64_t i = 0; i < count(out_shape); ++i) {
    const Index s = source(c);
    uint64_t at = 0;
    for (size_t d = 0; d < s.size(); ++d) at = at * static_cast<uint64_t>(in.shape[d]) + static_cast<uint64_t>(s[d]);
    out.push_back(in.bits.at(at));
    for (size_t d = c.size(); d-- > 0;) {
      if (++c[d] < out_shape[d]) break;
      c[d] = 0;
    }
  }
  return out;
}

inline ::testing::AssertionResult same_bits(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      std::ostringstream os;  // AssertionResult streams each piece separately: format here
      os << "element " << i << ": got 0x" << std::hex << got[i] << ", want 0x" << want[i];
      return ::testing::AssertionFailure() << os.str();
    }
  }
  return ::testing::AssertionSuccess();
}

// The route a node labelled `label` took, with the reasons earlier routes were refused
// (testing::rejected joins them).
inline const RouteChoice& route_of(const Program& p, const std::string& label) {
  for (const RouteChoice& r : p.routes()) {
    if (r.label == label) return r;
  }
  ADD_FAILURE() << "no node labelled " << label;
  static const RouteChoice none;
  return none;
}

}  // namespace wgx::runtime::layout_test
