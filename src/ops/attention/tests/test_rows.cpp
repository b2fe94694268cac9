// rope_update_cache_rows and sdpa_rows (continuous batching) on one program, built once and run
// with rows that change between executions (R from 1 to 12): rows mixing slots at different
// positions, a prefill chunk of one slot (consecutive positions) beside single rows of others,
// rows interleaved, position 0 of a slot already in use (a new sequence), the last position
// (MaxS - 1), and rows out of the caches (slot S, position MaxS, -1), which write nothing and
// give zeros. Caches of 3 to 5 slots and MaxS 150 start with random contents, so every cache row
// a step should not write is checked to keep its value. Head_dim 64 and 128, groups of 2 and 3
// query heads, f32 and f16 activations and caches, with and without Qwen3's q/k norm, both rope
// layouts.
// After every execution:
//   - the rotated q and both whole caches against a double reference (testing::rope_rows): f32
//     within abs 1e-4 or rel 1e-3, f16 within an f16 ulp plus the norm's spread (rope_matches);
//     v is copied exactly;
//   - sdpa_rows' output against attention in double over the q and caches the kernels left
//     (so that it is checked apart from the rope): f32 within abs 1e-4 or rel 1e-3, f16 output
//     within 1e-4 + one f16 ulp (2^-10 relative); zeros exactly for rows out of the caches.
// Negative controls: the reference with two rows' slots swapped, with each row's last visible
// cache row left out, and with the rotation at the next position are off by more than the
// tolerance. Equivalence: rows of one slot at positions p .. p + T - 1 give what
// rope_update_cache and sdpa_with_kv_cache give at input_pos p (the rope bit for bit). Groups
// too large for a workgroup and a head_dim not a multiple of 8 are refused by sdpa_rows' guard.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attention_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::ValueId;
using testing::RopeReference;

constexpr int64_t kMaxSeq = 150, kMaxRows = 12;
constexpr double kEps = 1e-6;

struct Case {
  const char* name;
  int64_t hq, hkv, dim, slots;
  DType io, kv;  // activations (q, k, v, the rotated q, out, the norm weights), caches
  bool norm;
  RopeReference rope;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
    {"D64_G2_F32", 4, 2, 64, 3, DType::f32, DType::f32, false, testing::kLlamaRope},
    {"D64_G3_F16Cache", 6, 2, 64, 5, DType::f32, DType::f16, false, testing::kLlamaRope},
    {"D128_G2_F32_Norm", 4, 2, 128, 4, DType::f32, DType::f32, true, testing::kQwenRope},
    {"D128_G3_F16_Norm", 6, 2, 128, 5, DType::f16, DType::f16, true, testing::kQwenRope},
    {"D64_G2_F16Io_F32Cache_Interleaved", 4, 2, 64, 3, DType::f16, DType::f32, false, testing::kInterleavedRope},
};

bool f16_io(const Case& c) { return c.io == DType::f16; }
// The caches hold k as f16 values when either the activations or the caches are f16.
bool f16_k(const Case& c) { return f16_io(c) || c.kv == DType::f16; }
double scale(const Case& c) { return 1.0 / std::sqrt(static_cast<double>(c.dim)); }

struct Row {
  int32_t slot, pos;
};
bool in_caches(const Case& c, const Row& r) { return r.slot >= 0 && r.slot < c.slots && r.pos >= 0 && r.pos < kMaxSeq; }

// One execution's tokens: q [1, R, Hq, D], k and v [1, R, Hkv, D], exact in the io dtype.
struct Step {
  std::vector<Row> rows;
  std::vector<float> q, k, v;
};
Step make_step(const Case& c, std::vector<Row> rows, uint32_t seed) {
  const auto n = static_cast<int64_t>(rows.size());
  Step st{std::move(rows), testing::random_floats(static_cast<size_t>(n * c.hq * c.dim), seed),
          testing::random_floats(static_cast<size_t>(n * c.hkv * c.dim), seed + 1),
          testing::random_floats(static_cast<size_t>(n * c.hkv * c.dim), seed + 2)};
  if (f16_io(c)) {
    for (auto* x : {&st.q, &st.k, &st.v}) *x = testing::round_f16(*x);
  }
  return st;
}

std::vector<uint8_t> values_bytes(bool f16, const std::vector<float>& x) { return testing::activation_bytes(f16, x); }

// Inputs q, k, v (R rows, a SymInt in [1, kMaxRows]) and, `per_row`, rows [R, 2] with caches of
// the case's slots (rope_update_cache_rows, then sdpa_rows), or else input_pos (a SymInt "pos")
// with caches of one slot (rope_update_cache, then sdpa_with_kv_cache). The rope ("rope") updates
// the caches k_cache and v_cache [slots, Hkv, MaxS, D] in place and the attention ("sdpa") reads
// them; outputs "q_rot" (the rotated q) and "out".
std::unique_ptr<Program> attention_program(const Case& c, const std::vector<float>& qn, const std::vector<float>& kn,
                                           bool per_row = true) {
  GraphBuilder b;
  const graph::Dim r = b.sym("R", 1, kMaxRows);
  const ValueId position = per_row ? b.input("rows", DType::i32, {r, 2}) : b.sym_value(b.sym("pos", 0, kMaxSeq - 1));
  const int64_t slots = per_row ? c.slots : 1;
  const ValueId kc = b.mutable_buffer("k_cache", c.kv, {slots, c.hkv, kMaxSeq, c.dim});
  const ValueId vc = b.mutable_buffer("v_cache", c.kv, {slots, c.hkv, kMaxSeq, c.dim});
  std::vector<ValueId> in = {b.input("q", c.io, {1, r, c.hq, c.dim}), b.input("k", c.io, {1, r, c.hkv, c.dim}),
                             b.input("v", c.io, {1, r, c.hkv, c.dim}), kc, vc, position};
  if (c.norm) {
    in.push_back(b.constant("q_norm", c.io, {c.dim}, values_bytes(f16_io(c), qn)));
    in.push_back(b.constant("k_norm", c.io, {c.dim}, values_bytes(f16_io(c), kn)));
  }
  graph::Attrs attrs = c.rope.attrs();
  attrs.insert_or_assign("eps", kEps);
  const std::vector<ValueId> outs = b.op(per_row ? "rope_update_cache_rows" : "rope_update_cache", in, attrs, "rope");
  b.mutate(kc, outs[1]);
  b.mutate(vc, outs[2]);
  b.output("q_rot", outs[0]);
  b.output("out", b.op1(per_row ? "sdpa_rows" : "sdpa_with_kv_cache", {outs[0], outs[1], outs[2], position}, {},
                        "sdpa"));
  return std::make_unique<Program>(testing::shared_context(), b.build(), b.weights());
}

// Feeds a step and runs it: its rows, or (`per_row` false) its first row's position as input_pos.
void run(Program& prog, const Case& c, const Step& st, bool per_row = true) {
  const auto n = static_cast<int64_t>(st.rows.size());
  if (per_row) {
    std::vector<int32_t> rows;
    for (const Row& r : st.rows) rows.insert(rows.end(), {r.slot, r.pos});
    prog.set_input<int32_t>("rows", rows, {n, 2});
  } else {
    prog.set_sym("pos", st.rows[0].pos);
  }
  const bool f16 = f16_io(c);
  prog.set_input("q", values_bytes(f16, st.q), {1, n, c.hq, c.dim});
  prog.set_input("k", values_bytes(f16, st.k), {1, n, c.hkv, c.dim});
  prog.set_input("v", values_bytes(f16, st.v), {1, n, c.hkv, c.dim});
  prog.execute();
}

// Both caches [slots, Hkv, MaxS, D] as the reference expects them (values exact in the caches'
// dtype) and the spread of the k entries (testing::RopeRows).
struct Caches {
  const Case& c;
  std::vector<float> k, v, k_spread;

  size_t at(int64_t slot, int64_t h, int64_t pos, int64_t d) const {
    return static_cast<size_t>(((slot * c.hkv + h) * kMaxSeq + pos) * c.dim + d);
  }
  // Random contents (the caches' buffers are written with them).
  static Caches random(const Case& c, uint32_t seed) {
    const size_t n = static_cast<size_t>(c.slots * c.hkv * kMaxSeq * c.dim);
    Caches r{c, testing::random_floats(n, seed), testing::random_floats(n, seed + 1), std::vector<float>(n, 0.f)};
    if (c.kv == DType::f16) {
      r.k = testing::round_f16(r.k);
      r.v = testing::round_f16(r.v);
    }
    return r;
  }
  void write_to(Program& prog) const {
    prog.write_state("k_cache", values_bytes(c.kv == DType::f16, k));
    prog.write_state("v_cache", values_bytes(c.kv == DType::f16, v));
  }
};

// What rope_update_cache_rows gives for `st` (rows at `shift` past their positions: a negative
// control): the rotated q (and its spread), with the caches updated.
testing::RopeRows apply(const Case& c, const Step& st, const std::vector<float>& qn, const std::vector<float>& kn,
                        Caches& caches, int64_t shift = 0) {
  const size_t qd = static_cast<size_t>(c.hq * c.dim), kd = static_cast<size_t>(c.hkv * c.dim);
  testing::RopeRows q{std::vector<double>(st.q.size(), 0.0), std::vector<double>(st.q.size(), 0.0)};
  for (size_t r = 0; r < st.rows.size(); ++r) {
    const Row row = st.rows[r];
    if (!in_caches(c, row)) continue;
    auto slice = [](const std::vector<float>& x, size_t at, size_t n) {
      const auto first = x.begin() + static_cast<std::ptrdiff_t>(at);
      return std::vector<float>(first, first + static_cast<std::ptrdiff_t>(n));
    };
    const testing::RopeRows qr =
        testing::rope_rows(c.rope, c.dim, f16_io(c), kEps, slice(st.q, r * qd, qd), 1, c.hq, qn, row.pos + shift);
    std::copy(qr.values.begin(), qr.values.end(), q.values.begin() + static_cast<std::ptrdiff_t>(r * qd));
    std::copy(qr.spread.begin(), qr.spread.end(), q.spread.begin() + static_cast<std::ptrdiff_t>(r * qd));
    const testing::RopeRows kr =
        testing::rope_rows(c.rope, c.dim, f16_io(c), kEps, slice(st.k, r * kd, kd), 1, c.hkv, kn, row.pos + shift);
    for (int64_t h = 0; h < c.hkv; ++h) {
      for (int64_t d = 0; d < c.dim; ++d) {
        const size_t e = static_cast<size_t>(h * c.dim + d), dst = caches.at(row.slot, h, row.pos, d);
        caches.k[dst] = f16_k(c) ? testing::round_f16(kr.values[e]) : static_cast<float>(kr.values[e]);
        caches.k_spread[dst] = static_cast<float>(kr.spread[e]);
        const float v = st.v[r * kd + e];
        caches.v[dst] = c.kv == DType::f16 ? testing::round_f16(double{v}) : v;
      }
    }
  }
  return q;
}

// sdpa_rows in double over q [1, R, Hq, D] and caches k and v [slots, Hkv, MaxS, D]: row r
// attends over rows 0 .. pos + 1 + `extra` - 1 of its slot (`extra` -1: a negative control);
// zeros for rows out of the caches.
std::vector<float> attend(const Case& c, const std::vector<Row>& rows, const std::vector<float>& q,
                          const std::vector<float>& k, const std::vector<float>& v, int64_t extra = 0) {
  std::vector<float> out(q.size(), 0.f);
  const int64_t group = c.hq / c.hkv;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!in_caches(c, rows[r])) continue;
    const int64_t slot = rows[r].slot;
    for (int64_t h = 0; h < c.hq; ++h) {
      const size_t qb = (r * static_cast<size_t>(c.hq) + static_cast<size_t>(h)) * static_cast<size_t>(c.dim);
      const int64_t kv = h / group;
      auto at = [&](int64_t j, int64_t d) {
        return static_cast<size_t>(((slot * c.hkv + kv) * kMaxSeq + j) * c.dim + d);
      };
      testing::attend_row(
          &q[qb], c.dim, rows[r].pos + 1 + extra, scale(c), [&](int64_t j, int64_t d) { return double{k[at(j, d)]}; },
          [&](int64_t j, int64_t d) { return double{v[at(j, d)]}; }, &out[qb]);
    }
  }
  return out;
}

// sdpa_rows' tolerance: f32 abs 1e-4 or rel 1e-3; an f16 output adds its one rounding (1e-4 +
// 2^-10 relative).
::testing::AssertionResult attention_matches(const std::vector<float>& got, const std::vector<float>& want, bool f16) {
  if (!f16) return testing::close(got, want);
  return testing::close(got, want, 1e-4, testing::kF16Rel + 1e-4);
}

// R 1, 7, 7, 6 and 12 rows; `last` is the caches' last slot.
std::vector<std::vector<Row>> step_rows(int32_t slots) {
  const int32_t last = slots - 1, end = kMaxSeq;
  return {
      {{1, 0}},                                                  // one row, position 0
      {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 100}, {2, end - 1}},  // a chunk beside single rows
      {{last, 11}, {1, 18}, {0, 5}, {last, 12}, {1, 19}, {2, 0}, {last, 13}},  // interleaved; a new sequence
      {{slots, 3}, {0, 6}, {0, end}, {-1, 2}, {1, -1}, {1, 20}},  // out of the caches, with two in
      {{1, 21}, {1, 22}, {1, 23}, {1, 24}, {1, 25}, {1, 26}, {1, 27}, {1, 28}, {0, 7}, {2, 1}, {last, end - 2},
       {last, end - 1}},
  };
}

// The first two rows in the caches that are of different slots, with their slots swapped (a
// negative control); nullopt where there are none.
std::optional<std::vector<Row>> swap_slots(const Case& c, std::vector<Row> rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = i + 1; j < rows.size(); ++j) {
      if (in_caches(c, rows[i]) && in_caches(c, rows[j]) && rows[i].slot != rows[j].slot) {
        std::swap(rows[i].slot, rows[j].slot);
        return rows;
      }
    }
  }
  return std::nullopt;
}

class AttentionRows : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionRows, MatchDoubleReferencesAsTheRowsChange) {
  const Case& c = GetParam();
  const std::vector<float> qn = c.norm ? testing::norm_weight(c.dim, f16_io(c), 1) : std::vector<float>{};
  const std::vector<float> kn = c.norm ? testing::norm_weight(c.dim, f16_io(c), 2) : std::vector<float>{};
  const std::unique_ptr<Program> prog = attention_program(c, qn, kn);
  EXPECT_EQ(testing::route_of(*prog, "rope").route, "rope_update_cache_rows");
  EXPECT_EQ(testing::route_of(*prog, "sdpa").route, "rows_online");
  EXPECT_EQ(prog->mutation_copies(), 0u) << "both caches should be updated where they lie";
  Caches want = Caches::random(c, 10);
  want.write_to(*prog);

  uint32_t seed = 100;
  int swaps = 0;
  for (const std::vector<Row>& rows : step_rows(static_cast<int32_t>(c.slots))) {
    SCOPED_TRACE("R " + std::to_string(rows.size()) + ", first row (" + std::to_string(rows[0].slot) + ", " +
                 std::to_string(rows[0].pos) + ")");
    const Step st = make_step(c, rows, seed += 3);
    run(*prog, c, st);
    EXPECT_EQ(prog->dispatches_per_execute(), 2u);  // rope, the attention (rows of up to 5 chunks at MaxS 150) merged by the last
    const std::vector<float> got_q = prog->read_f32("q_rot"), got = prog->read_f32("out");
    const std::vector<float> kc = prog->read_state_f32("k_cache"), vc = prog->read_state_f32("v_cache");

    // rope_update_cache_rows: the rotated q, every cache row (written or kept).
    Caches before = want;
    const testing::RopeRows q = apply(c, st, qn, kn, want);
    EXPECT_TRUE(testing::rope_matches(got_q, q.values, q.spread, f16_io(c)));
    EXPECT_TRUE(testing::rope_matches(kc, want.k, want.k_spread, f16_k(c)));
    EXPECT_EQ(vc, want.v);

    // sdpa_rows over what the rope left; zeros exactly where a row is out of the caches.
    EXPECT_TRUE(attention_matches(got, attend(c, rows, got_q, kc, vc), f16_io(c)));
    const size_t qd = static_cast<size_t>(c.hq * c.dim);
    for (size_t r = 0; r < rows.size(); ++r) {
      if (in_caches(c, rows[r])) continue;
      for (size_t i = r * qd; i < (r + 1) * qd; ++i) {
        ASSERT_EQ(got[i], 0.f) << "row " << r << " is out of the caches";
        ASSERT_EQ(got_q[i], 0.f) << "row " << r << " is out of the caches";
      }
    }

    // Negative controls: another position's rotation, the last visible row left out (at position
    // 0 nothing is left: NaN), and two rows' slots swapped (where the rows are of several slots)
    // are all off.
    const testing::RopeRows next = apply(c, st, qn, kn, before, 1);
    EXPECT_FALSE(testing::rope_matches(got_q, next.values, next.spread, f16_io(c))) << "positions are not followed";
    EXPECT_FALSE(attention_matches(got, attend(c, rows, got_q, kc, vc, -1), f16_io(c)))
        << "the row's own position is not visible";
    if (const std::optional<std::vector<Row>> swapped = swap_slots(c, rows)) {
      EXPECT_FALSE(attention_matches(got, attend(c, *swapped, got_q, kc, vc), f16_io(c))) << "slots are not followed";
      ++swaps;
    }
  }
  EXPECT_EQ(swaps, 4) << "every step but the one of one row swaps two rows' slots";
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionRows, ::testing::ValuesIn(kCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

class AttentionRowsOfOneSlot : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionRowsOfOneSlot, MatchRopeUpdateCacheAndSdpaAtInputPos) {
  const Case& c = GetParam();
  const std::vector<float> qn = c.norm ? testing::norm_weight(c.dim, f16_io(c), 3) : std::vector<float>{};
  const std::vector<float> kn = c.norm ? testing::norm_weight(c.dim, f16_io(c), 4) : std::vector<float>{};
  const std::unique_ptr<Program> rows = attention_program(c, qn, kn), step = attention_program(c, qn, kn, false);
  const size_t slot_elements = static_cast<size_t>(c.hkv * kMaxSeq * c.dim);
  int32_t p = 0;
  uint32_t seed = 300;
  for (const int32_t t : {5, 1, 3, 12, 1}) {
    SCOPED_TRACE("input_pos " + std::to_string(p) + ", T " + std::to_string(t));
    std::vector<Row> slot0;
    for (int32_t i = 0; i < t; ++i) slot0.push_back({0, p + i});
    const Step st = make_step(c, slot0, seed += 3);
    run(*rows, c, st);
    run(*step, c, st, false);
    p += t;

    EXPECT_EQ(rows->read_f32("q_rot"), step->read_f32("q_rot"));
    for (const char* cache : {"k_cache", "v_cache"}) {
      const std::vector<float> all = rows->read_state_f32(cache);
      EXPECT_EQ(std::vector<float>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(slot_elements)),
                step->read_state_f32(cache))
          << cache;
      EXPECT_EQ(std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(slot_elements), all.end()),
                std::vector<float>(all.size() - slot_elements, 0.f))
          << cache << ": only slot 0 is written";
    }
    EXPECT_TRUE(attention_matches(rows->read_f32("out"), step->read_f32("out"), f16_io(c)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionRowsOfOneSlot, ::testing::Values(kCases[0], kCases[3]),
                         [](const auto& tp) { return std::string(tp.param.name); });

// sdpa_rows alone over caches of `hkv` heads for q of `hq` heads of head_dim `dim`: the build's
// error, or "" when it built.
std::string sdpa_rows_build_error(int64_t hq, int64_t hkv, int64_t dim) {
  GraphBuilder b;
  const graph::Dim r = b.sym("R", 1, kMaxRows);
  const ValueId kc = b.mutable_buffer("k_cache", DType::f32, {3, hkv, kMaxSeq, dim});
  const ValueId vc = b.mutable_buffer("v_cache", DType::f32, {3, hkv, kMaxSeq, dim});
  b.output("out", b.op1("sdpa_rows", {b.input("q", DType::f32, {1, r, hq, dim}), kc, vc,
                                      b.input("rows", DType::i32, {r, 2})}));
  try {
    Program prog(testing::shared_context(), b.build(), b.weights());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(AttentionRowsRange, SdpaRowsRefusesWhatAWorkgroupCannotHold) {
  EXPECT_EQ(sdpa_rows_build_error(16, 1, 64), "");  // 16 heads of 64: the most
  EXPECT_NE(sdpa_rows_build_error(32, 1, 64).find("more than one workgroup holds"), std::string::npos);
  EXPECT_NE(sdpa_rows_build_error(12, 1, 128).find("more than one workgroup holds"), std::string::npos);
  EXPECT_NE(sdpa_rows_build_error(4, 2, 37).find("head_dim 37 is not a multiple of 8"), std::string::npos);
}

}  // namespace
}  // namespace wgx::runtime
