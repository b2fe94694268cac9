// flash_decoding at long context: thousands of visible cache rows, so a chunk spans several tiles
// of the split kernel (and the single pass, forced on by sdpa_decode_single_max, runs one
// workgroup over every row). The graph writes k and v rows in blocks of up to kFill per execute
// (update_cache at input_pos) while the one query row attends rows 0 .. input_pos, so the cache
// fills with distinct data in a few executes and rows past the query's stay invisible. Each
// output is compared with the double reference. The queries fall on several chunks with a partial
// last tile (and a tile that is not a multiple of 4 rows), for groups of 1, 2, 4, 8 and 16 query
// heads, head_dim 64 and 128 (and an odd group, and head_dim up to 1024), f32 and f16 caches,
// under the default chunking (up to 32 chunks of two tiles) and a single pass (64 tiles). The
// split's chunks are merged in the same dispatch: one at every step.
#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::AttnConfig;
using testing::AttnReference;
using testing::Step;

constexpr int64_t kFill = 512;     // rows written per filling execute
constexpr int64_t kMaxSeq = 4160;  // 8 filling executes write rows 0 .. 4095

struct LongCase {
  std::string name;
  int64_t hq, hkv, dim;
  DType kv;
  RuntimeOptions options;
};

// Visible rows (input_pos + 1) of the queries after the fill. The default single pass takes up to
// two tiles (128 rows) at head_dim 64 and one (64 rows) at wider heads: 64 is one full tile, 65
// and 128 two tiles at head_dim 64 (the second of 1 row, or full), split passes of 16-row chunks
// (5 and 8) at wider heads. Default chunking (rows per chunk a multiple of 16, at most 32 chunks,
// or 48 from 2,049 to 3,072 rows): 193 is 13 chunks of 16 (the last 1 row); 1234 is 26 chunks of
// 48 (the last 34); 3000 and 3001 are 47 of 64 (one tile each; the last chunk 56 and 57 rows);
// 3073 is 28 of 112 (two tiles each, the second 48 rows; the last chunk 49); 4001 is 32 of 128
// (the last 33); 4096 is 32 full ones.
const int64_t kVisible[] = {64, 65, 128, 193, 1234, 3000, 3001, 3073, 4001, 4096};

const RuntimeOptions kDefault{};
const RuntimeOptions kSinglePass{{"sdpa_decode_single_max", "1048576"}};

std::vector<LongCase> long_cases() {
  std::vector<LongCase> cases;
  struct Geometry {
    int64_t hq, hkv;
  };
  // group = hq / hkv; two kv heads where the group allows, so a head's rows start past row 0 of
  // the buffer.
  const Geometry geometries[] = {{2, 2}, {4, 2}, {8, 2}, {8, 1}};
  for (const Geometry& g : geometries) {
    for (int64_t dim : {int64_t{64}, int64_t{128}}) {
      for (DType kv : {DType::f16, DType::f32}) {
        const std::string name = "G" + std::to_string(g.hq / g.hkv) + "_D" + std::to_string(dim) +
                                 (kv == DType::f16 ? "_F16" : "_F32");
        cases.push_back({name, g.hq, g.hkv, dim, kv, kDefault});
      }
    }
  }
  // The largest group (16 heads: S = 1 in the kernel's phase A); an odd group (its last v unit
  // has one head) and wide heads, both with more v units than invocations (two per invocation).
  cases.push_back({"G16_D64_F16", 16, 1, 64, DType::f16, kDefault});
  cases.push_back({"G3_D336_F32", 3, 1, 336, DType::f32, kDefault});
  cases.push_back({"G1_D1024_F16", 2, 2, 1024, DType::f16, kDefault});
  // One workgroup per kv head over every visible row.
  cases.push_back({"G4_D64_F16_SinglePass", 8, 2, 64, DType::f16, kSinglePass});
  cases.push_back({"G2_D128_F16_SinglePass", 4, 2, 128, DType::f16, kSinglePass});
  cases.push_back({"G1_D64_F32_SinglePass", 2, 2, 64, DType::f32, kSinglePass});
  cases.push_back({"G8_D128_F32_SinglePass", 8, 1, 128, DType::f32, kSinglePass});
  return cases;
}

AttnConfig long_config(const LongCase& lc) {
  AttnConfig c;
  c.hq = lc.hq;
  c.hkv = lc.hkv;
  c.dim = lc.dim;
  c.max_seq = kMaxSeq;
  c.max_new = 1;  // q is one row (a decode-only graph); k and v are kFill rows at most
  c.kv = lc.kv;
  c.options = lc.options;
  return c;
}

// gtest prints a failing case by name.
void PrintTo(const LongCase& c, std::ostream* os) { *os << c.name; }

class LongContext : public ::testing::TestWithParam<LongCase> {};

TEST_P(LongContext, EveryQueryMatchesTheReference) {
  const AttnConfig c = long_config(GetParam());
  graph::GraphBuilder b;
  Program prog(testing::shared_context(), testing::attention_graph(b, c, false, kFill), b.weights(), c.options);
  const RouteChoice& sdpa = testing::route_of(prog, "sdpa");
  ASSERT_EQ(sdpa.route, "flash_decoding") << testing::rejected_text(sdpa);
  AttnReference ref(c, c.kv == DType::f16);
  uint32_t seed = 9000;
  // Writes `rows` k and v rows at `pos`, then checks the query at pos (rows 0 .. pos visible)
  // and sdpa's dispatch (the program's others are the two cache updates).
  auto run = [&](int64_t pos, int64_t rows) {
    SCOPED_TRACE("input_pos " + std::to_string(pos) + ", " + std::to_string(rows) + " rows written");
    const Step fill{pos, rows, {}, testing::random_floats(static_cast<size_t>(c.batch * rows * c.hkv * c.dim), seed++),
                    testing::random_floats(static_cast<size_t>(c.batch * rows * c.hkv * c.dim), seed++)};
    const Step query{pos, 1, testing::random_floats(static_cast<size_t>(c.batch * c.hq * c.dim), seed++), {}, {}};
    prog.set_sym("pos", pos);
    prog.set_input<float>("q", query.q, {c.batch, 1, c.hq, c.dim});
    prog.set_input<float>("k", fill.k, {c.batch, rows, c.hkv, c.dim});
    prog.set_input<float>("v", fill.v, {c.batch, rows, c.hkv, c.dim});
    prog.execute();
    ref.append(fill);
    EXPECT_TRUE(testing::close(prog.read_f32("out"), ref.attend(query)));
    EXPECT_EQ(prog.dispatches_per_execute(), 3u);
  };
  for (int64_t pos = 0; pos + kFill <= kMaxSeq; pos += kFill) {
    run(pos, kFill);
    if (::testing::Test::HasFailure()) return;
  }
  // One row rewritten at each query's position; the rows past it hold data the query must not see.
  for (int64_t visible : kVisible) {
    run(visible - 1, 1);
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Chunkings, LongContext, ::testing::ValuesIn(long_cases()),
                         [](const auto& tp) { return tp.param.name; });

}  // namespace
}  // namespace wgx::runtime
