// embedding: every output element checked, out-of-range ids read as zero rows, f16 tables of odd
// width (output words straddle rows), i64 ids, and a symbolic number of ids.
#include <climits>

#include "graph/builder.h"
#include "linalg_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using testing::random_floats;
using testing::shared_context;

// table[id] per row, or zeros when id is outside [0, rows).
std::vector<float> gather(const std::vector<float>& table, int64_t rows, int64_t dim, const std::vector<int64_t>& ids) {
  std::vector<float> out;
  for (int64_t id : ids) {
    for (int64_t d = 0; d < dim; ++d) out.push_back(id >= 0 && id < rows ? table[id * dim + d] : 0.f);
  }
  return out;
}

TEST(Embedding, GathersRowsAndZeroesOutOfRangeIds) {
  const auto table = random_floats(37 * 11, 1);
  GraphBuilder b;
  auto t = b.constant("table", DType::f32, {37, 11}, testing::bytes_of(table));
  b.output("y", b.op1("embedding", {t, b.input("ids", DType::i32, {3, 13})}));
  Program prog(shared_context(), b.build(), b.weights());
  EXPECT_EQ(prog.routes().at(0).route, "gather");
  std::vector<int32_t> ids(39);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7) % 37);
  ids[0] = 36;
  ids[5] = -1;
  ids[6] = 37;
  ids[20] = INT_MIN;
  ids[38] = INT_MAX;
  prog.set_input<int32_t>("ids", ids, {3, 13});
  prog.execute();
  EXPECT_EQ(prog.output_shape("y"), (std::vector<int64_t>{3, 13, 11}));
  EXPECT_EQ(prog.read_f32("y"), gather(table, 37, 11, {ids.begin(), ids.end()}));
}

TEST(Embedding, F16TableOfOddWidthWithI64IdsOfSymbolicCount) {
  const auto bits = testing::to_f16(random_floats(113 * 11, 2));
  const auto table = testing::from_f16(bits);
  GraphBuilder b;
  auto t = b.constant("table", DType::f16, {113, 11}, testing::bytes_of(bits));
  b.output("y", b.op1("embedding", {t, b.input("ids", DType::i64, {b.sym("n", 1, 37)})}));
  Program prog(shared_context(), b.build(), b.weights());
  for (int64_t n : {37, 1, 6}) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ids[i] = (i * 31 + n) % 113;
    if (n == 6) ids.back() = 113;  // one past the end
    prog.set_input<int64_t>("ids", ids, {n});
    prog.execute();
    // A gather copies f16 bits: exact. The word after an odd count's last element is zero.
    EXPECT_EQ(prog.read_f32("y"), gather(table, 113, 11, ids)) << n;
    const auto raw = prog.read_storage("y");
    ASSERT_EQ(raw.size(), static_cast<size_t>((n * 11 + 1) / 2 * 4));
    if ((n * 11) % 2 == 1) {
      EXPECT_EQ(raw[raw.size() - 2] | raw[raw.size() - 1], 0) << n;
    }
  }
}

}  // namespace
}  // namespace wgx::runtime
