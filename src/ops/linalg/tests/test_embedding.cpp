// embedding: every output element checked, out-of-range ids read as zero rows, f16 tables of odd
// width (output words straddle rows), i64 ids, a symbolic number of ids, and rows converted to
// another dtype by the dtype attribute.
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

TEST(Embedding, TheDtypeAttributeConvertsTheRows) {
  // An f16 table read into f32 rows is exact; an f32 table into f16 rows (odd width: words
  // straddle rows) is rounded to nearest, as the host's to_f16 rounds.
  const auto bits = testing::to_f16(random_floats(29 * 11, 3));
  const auto table32 = random_floats(29 * 11, 4);
  GraphBuilder b;
  auto t16 = b.constant("t16", DType::f16, {29, 11}, testing::bytes_of(bits));
  auto t32 = b.constant("t32", DType::f32, {29, 11}, testing::bytes_of(table32));
  const auto ids = b.input("ids", DType::i32, {7});
  b.output("wide", b.op1("embedding", {t16, ids}, {{"dtype", "f32"}}));
  b.output("narrow", b.op1("embedding", {t32, ids}, {{"dtype", "f16"}}));
  Program prog(shared_context(), b.build(), b.weights());
  const std::vector<int32_t> id32{3, 28, 0, -1, 17, 29, 3};
  prog.set_input<int32_t>("ids", id32, {7});
  prog.execute();
  const std::vector<int64_t> id64(id32.begin(), id32.end());
  EXPECT_EQ(prog.read_f32("wide"), gather(testing::from_f16(bits), 29, 11, id64));
  EXPECT_EQ(prog.read_f32("narrow"), testing::from_f16(testing::to_f16(gather(table32, 29, 11, id64))));
  // The storage is the attribute's dtype: 77 f32 words, and 77 halves in 39 words.
  EXPECT_EQ(prog.read_storage("wide").size(), 77u * 4);
  EXPECT_EQ(prog.read_storage("narrow").size(), 39u * 4);
  for (const RouteChoice& r : prog.routes()) EXPECT_EQ(r.route, "gather") << r.label;
}

}  // namespace
}  // namespace wgx::runtime
