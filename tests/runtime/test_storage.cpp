// Storage conversions at the host/device boundary.
#include "graph/error.h"
#include "graph/storage.h"
#include "runtime/storage.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;

TEST(Storage, EveryDtypeMapsToAStorage) {
  EXPECT_EQ(storage_for(DType::f32, false), Storage::F32);
  EXPECT_EQ(storage_for(DType::bf16, false), Storage::F32);
  EXPECT_EQ(storage_for(DType::f16, false), Storage::F16Packed);
  EXPECT_EQ(storage_for(DType::f16, true), Storage::F16Native);
  EXPECT_EQ(storage_for(DType::i64, false), Storage::I32);
  EXPECT_EQ(storage_for(DType::boolean, false), Storage::Bytes);
  EXPECT_EQ(storage_for(DType::u8, false), Storage::Bytes);
  EXPECT_EQ(storage_bytes(Storage::F16Packed, 3), 8u);
  EXPECT_EQ(storage_bytes(Storage::Bytes, 5), 8u);
  EXPECT_EQ(storage_bytes(Storage::F32, 5), 20u);
}

TEST(Storage, F32ToPackedF16AndBack) {
  const std::vector<float> v = {0.f, 1.f, -2.5f, 65504.f, 1e-5f};
  const std::vector<uint8_t> s = f32_to_storage(v, Storage::F16Packed);
  ASSERT_EQ(s.size(), 12u);  // five halves in three words
  const std::vector<float> back = storage_to_f32(Storage::F16Packed, s, v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(back[i], graph::f16_to_f32(graph::f32_to_f16(v[i]))) << i;
  }
  EXPECT_EQ(s[10], 0);  // the tail half is zero
  EXPECT_EQ(s[11], 0);
}

TEST(Storage, I64IsNarrowedWithARangeCheck) {
  const std::vector<int64_t> ok = {-5, 0, 2147483647};
  const auto s = to_storage(DType::i64, {reinterpret_cast<const uint8_t*>(ok.data()), 24}, Storage::I32, "ids");
  EXPECT_EQ(storage_to_f32(Storage::I32, s, 3), (std::vector<float>{-5.f, 0.f, 2147483647.f}));
  const std::vector<int64_t> bad = {1, int64_t{1} << 40};
  try {
    to_storage(DType::i64, {reinterpret_cast<const uint8_t*>(bad.data()), 16}, Storage::I32, "ids");
    FAIL();
  } catch (const graph::GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("ids"), std::string::npos) << e.what();
  }
}

TEST(Storage, BoolsPackFourPerWordAndRejectOtherBytes) {
  const std::vector<uint8_t> bools = {1, 0, 1, 1, 0};
  const auto s = to_storage(DType::boolean, bools, Storage::Bytes, "mask");
  EXPECT_EQ(s, (std::vector<uint8_t>{1, 0, 1, 1, 0, 0, 0, 0}));
  const std::vector<uint8_t> bad = {1, 2};
  EXPECT_THROW(to_storage(DType::boolean, bad, Storage::Bytes, "mask"), graph::GraphError);
}

TEST(Storage, Bf16BecomesF32) {
  const std::vector<uint16_t> bf = {0x3f80, 0xc040};  // 1.0, -3.0
  const auto s = to_storage(DType::bf16, {reinterpret_cast<const uint8_t*>(bf.data()), 4}, Storage::F32, "w");
  EXPECT_EQ(storage_to_f32(Storage::F32, s, 2), (std::vector<float>{1.f, -3.f}));
}

}  // namespace
}  // namespace wgx::runtime
