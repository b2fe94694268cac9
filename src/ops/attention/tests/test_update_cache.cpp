// update_cache on its own: conversion into f32 and f16 caches (overflow to inf), the path where
// output 0 is not the cache's own buffer (no mutation: the cache is copied, then updated, and the
// buffer itself stays as it was), and an input_pos that does not fit.
#include <cmath>
#include <limits>
#include <vector>

#include "attention_test_util.h"
#include "graph/error.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;

constexpr int64_t kHeads = 3, kMaxSeq = 11, kDim = 6;

// The cache after writing `value` ([1, S, H, D]) at rows pos .. pos + S - 1 of `cache` ([1, H, MaxS, D]).
std::vector<float> updated(std::vector<float> cache, const std::vector<float>& value, int64_t pos, int64_t seq) {
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t d = 0; d < kDim; ++d) {
        cache[static_cast<size_t>((h * kMaxSeq + pos + s) * kDim + d)] = value[static_cast<size_t>((s * kHeads + h) * kDim + d)];
      }
  return cache;
}

class UpdateCache : public ::testing::TestWithParam<std::pair<DType, DType>> {};  // (cache, value)

TEST_P(UpdateCache, WritesConvertedRowsInPlace) {
  const auto [cache_dtype, value_dtype] = GetParam();
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 4);
  auto pos = b.sym("pos", 0, kMaxSeq - 1);
  auto cache = b.mutable_buffer("cache", cache_dtype, {1, kHeads, kMaxSeq, kDim});
  auto value = b.input("value", value_dtype, {1, seq, kHeads, kDim});
  b.mutate(cache, b.op1("update_cache", {cache, value, b.sym_value(pos)}));
  Program prog(testing::shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes()[0].route, "update_cache");
  EXPECT_EQ(prog.mutation_copies(), 0u);

  const bool half_cache = cache_dtype == DType::f16;
  std::vector<float> want(static_cast<size_t>(kHeads * kMaxSeq * kDim), 0.f);
  int64_t at = 0;
  for (int64_t s : {4, 1, 3, 1}) {
    std::vector<float> v = testing::random_floats(static_cast<size_t>(s * kHeads * kDim), 40 + static_cast<uint32_t>(at));
    if (at == 0) {
      v[0] = 70000.f;  // past f16's range: inf in an f16 cache
      v[1] = -70000.f;
    }
    if (value_dtype == DType::f16) {
      const std::vector<uint16_t> h = testing::to_f16(v);
      v = testing::from_f16(h);  // +-70000 is +-inf in f16
      prog.set_input<uint16_t>("value", h, {1, s, kHeads, kDim});
    } else {
      prog.set_input<float>("value", v, {1, s, kHeads, kDim});
    }
    prog.set_sym("pos", at);
    prog.execute();
    if (half_cache) {
      v = testing::round_f16(v);  // one rounding to nearest; +-70000 -> +-inf
    }
    want = updated(want, v, at, s);
    at += s;
  }
  const std::vector<float> got = prog.read_state_f32("cache");
  EXPECT_EQ(got, want);
  if (half_cache || value_dtype == DType::f16) {
    EXPECT_EQ(got[0], std::numeric_limits<float>::infinity());
    EXPECT_EQ(got[1], -std::numeric_limits<float>::infinity());
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, UpdateCache,
                         ::testing::Values(std::pair{DType::f32, DType::f32}, std::pair{DType::f32, DType::f16},
                                           std::pair{DType::f16, DType::f32}, std::pair{DType::f16, DType::f16}),
                         [](const auto& tp) {
                           return std::string("cache_") + graph::dtype_name(tp.param.first) + "_value_" +
                                  graph::dtype_name(tp.param.second);
                         });

TEST(UpdateCacheCopy, WithoutAMutationTheCacheIsCopiedThenUpdated) {
  const std::vector<float> initial = testing::random_floats(static_cast<size_t>(kHeads * kMaxSeq * kDim), 5);
  GraphBuilder b;
  auto pos = b.sym("pos", 0, kMaxSeq - 1);
  auto init = b.constant("init", DType::f32, {1, kHeads, kMaxSeq, kDim}, testing::bytes_of(initial));
  auto cache = b.mutable_buffer("cache", init);
  auto value = b.input("value", DType::f32, {1, 2, kHeads, kDim});
  b.output("updated", b.op1("update_cache", {cache, value, b.sym_value(pos)}));
  Program prog(testing::shared_context(), b.build(), b.weights());
  const std::vector<float> v = testing::random_floats(static_cast<size_t>(2 * kHeads * kDim), 6);
  prog.set_input<float>("value", v, {1, 2, kHeads, kDim});
  for (int64_t at : {int64_t{9}, int64_t{3}}) {  // each execution starts from the unchanged buffer
    prog.set_sym("pos", at);
    prog.execute();
    EXPECT_EQ(prog.read_f32("updated"), updated(initial, v, at, 2)) << "pos " << at;
  }
  EXPECT_EQ(prog.read_state_f32("cache"), initial);
}

TEST(UpdateCacheRange, RowsPastTheCacheAreRefused) {
  GraphBuilder b;
  auto seq = b.sym("seq", 1, 4);
  auto pos = b.sym("pos", 0, kMaxSeq - 1);
  auto cache = b.mutable_buffer("cache", DType::f32, {1, kHeads, kMaxSeq, kDim});
  auto value = b.input("value", DType::f32, {1, seq, kHeads, kDim});
  b.mutate(cache, b.op1("update_cache", {cache, value, b.sym_value(pos)}));
  Program prog(testing::shared_context(), b.build(), b.weights());
  const std::vector<float> v(static_cast<size_t>(3 * kHeads * kDim), 1.f);
  prog.set_input<float>("value", v, {1, 3, kHeads, kDim});
  prog.set_sym("pos", 9);  // rows 9, 10, 11 of 11
  EXPECT_THROW(prog.execute(), graph::GraphError);
  prog.set_sym("pos", 8);  // rows 8, 9, 10: the last ones
  prog.execute();
  EXPECT_EQ(prog.read_state_f32("cache")[static_cast<size_t>((kMaxSeq - 1) * kDim)], 1.f);
}

}  // namespace
}  // namespace wgx::runtime
