// The rows graph (LoadOptions::slots: continuous batching) on tiny random checkpoints: steps that
// feed rows of several sequences at once, each in its own KV cache slot at its own positions
// (prompts of new sequences beside one-token steps of running ones, a slot reused after its
// sequence ended), every sequence's logits against its own double-precision reference at the
// same bounds as the one-sequence graph (test_decoder.cpp), the tokens fed being each
// reference's greedy choices; the program reads the one-sequence program's weight buffers. Negative control: a row that names another sequence's slot gets
// logits its own reference does not match.
#include <gtest/gtest.h>

#include <cstdio>
#include <array>
#include <map>

#include "model_test_util.h"
#include "models/decoder.h"
#include "models/model.h"
#include "reference_model.h"
#include "runtime_test_util.h"
#include "tiny_checkpoint.h"

namespace wgx::models::testing {
namespace {

using runtime::testing::shared_context;

// Every pick greedy (all sampling words 0; the counters then go unused), with no seen set.
void set_greedy(runtime::Program& prog, int64_t picks) {
  prog.set_input<int32_t>("sampling", std::vector<int32_t>(static_cast<size_t>(8 * picks), 0), {picks, 8});
  prog.set_input<int32_t>("counters", std::vector<int32_t>(static_cast<size_t>(picks), 0), {picks});
  prog.set_input<int32_t>("pick_slots", std::vector<int32_t>(static_cast<size_t>(picks), -1), {picks});
}

constexpr double kF32Tol = 1e-3;
constexpr double kQ4X8Tol = 0.25;  // test_decoder.cpp: q4 weights, x rounded to int8

// One step's rows: per sequence (by name) the tokens it feeds.
using Step = std::vector<std::pair<char, std::vector<int32_t>>>;

struct Sequence {
  int32_t slot = 0;
  std::unique_ptr<ReferenceModel> ref;
  int32_t next = 0;  // the reference's greedy token after the last step
};

struct Outcome {
  Diff diff;
  int rows_checked = 0, decided = 0, agree_decided = 0;
};

// Runs `steps` on a rows program; "*" in a step's tokens means the sequence's next greedy token.
// `slot_override`: the slot a sequence's rows claim instead of its own (the negative control).
Outcome run(runtime::Program& prog, const ModelConfig& config, const WeightMap& weights,
            std::map<char, Sequence>& seqs, const std::vector<Step>& steps, double tol,
            const std::map<char, int32_t>& slot_override = {}) {
  Outcome o;
  const auto vocab = static_cast<size_t>(config.vocab_size);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::vector<int32_t> tokens, rows, picks;
    std::vector<std::pair<char, std::vector<int32_t>>> fed;
    for (const auto& [name, given] : steps[s]) {
      Sequence& q = seqs[name];
      if (!q.ref) q.ref = std::make_unique<ReferenceModel>(config, weights);
      std::vector<int32_t> ids = given.empty() ? std::vector<int32_t>{q.next} : given;
      const auto override_it = slot_override.find(name);
      const int32_t slot = override_it == slot_override.end() ? q.slot : override_it->second;
      for (size_t i = 0; i < ids.size(); ++i) {
        tokens.push_back(ids[i]);
        rows.push_back(slot);
        rows.push_back(static_cast<int32_t>(q.ref->position() + static_cast<int64_t>(i)));
      }
      picks.push_back(static_cast<int32_t>(tokens.size() - 1));
      fed.emplace_back(name, std::move(ids));
    }
    const auto n = static_cast<int64_t>(tokens.size());
    prog.set_input<int32_t>("tokens", tokens, {1, n});
    prog.set_input<int32_t>("rows", rows, {n, 2});
    prog.set_input<int32_t>("logit_rows", picks, {static_cast<int64_t>(picks.size())});
    set_greedy(prog, static_cast<int64_t>(picks.size()));
    prog.execute();
    const std::vector<float> logits = prog.read_f32("logits");
    const std::vector<float> next = prog.read_f32("next_tokens");
    EXPECT_EQ(logits.size(), picks.size() * vocab);
    for (size_t k = 0; k < fed.size() && (k + 1) * vocab <= logits.size(); ++k) {
      Sequence& q = seqs[fed[k].first];
      const std::vector<double> want = q.ref->step(fed[k].second).back();
      const std::vector<float> got(logits.begin() + static_cast<ptrdiff_t>(k * vocab),
                                   logits.begin() + static_cast<ptrdiff_t>((k + 1) * vocab));
      o.diff.add(got, want, tol, tol, std::string("step ") + std::to_string(s) + " sequence " + fed[k].first);
      const Greedy g = greedy(want);
      ++o.rows_checked;
      EXPECT_EQ(static_cast<int32_t>(next[k]), greedy(got).token) << "next_tokens is not the argmax of the logits";
      if (g.margin > 2 * tol) {
        ++o.decided;
        o.agree_decided += greedy(got).token == g.token;
      }
      q.next = g.token;
    }
  }
  return o;
}

// A, B start together; C joins while they decode; A ends and D takes its slot; rows of one step
// come in mixed orders.
const std::vector<Step> kSchedule = {
    {{'A', {5, 17, 42, 3, 88, 61, 29}}, {'B', {7, 1, 90}}},
    {{'A', {}}, {'B', {}}},
    {{'B', {}}, {'A', {}}},
    {{'A', {}}, {'C', {11, 12, 13, 14, 15}}, {'B', {}}},
    {{'C', {}}, {'A', {}}, {'B', {}}},
    {{'A', {}}, {'B', {}}, {'C', {}}},
    {{'D', {2, 4, 6, 8}}, {'B', {}}, {'C', {}}},
    {{'B', {}}, {'C', {}}, {'D', {}}},
    {{'D', {}}, {'C', {}}},
};

std::map<char, Sequence> sequences() {
  std::map<char, Sequence> s;
  s['A'].slot = 0;
  s['B'].slot = 1;
  s['C'].slot = 2;
  s['D'].slot = 0;  // after A
  return s;
}

constexpr int64_t kSlots = 3;

LoadOptions rows_options(WeightFormat format, bool half_cache) {
  LoadOptions o;
  o.weights = format;
  o.half_kv_cache = half_cache;
  o.max_seq = 32;
  o.max_prefill = 16;
  return o;
}

struct Case {
  const char* name;
  TinySpec spec;
  WeightFormat format;
  bool half_cache;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

TinySpec llama_gqa() { return tiny_llama_gqa(21); }
TinySpec qwen3() { return tiny_qwen3(23); }

class RowsDecoder : public ::testing::TestWithParam<Case> {};

TEST_P(RowsDecoder, EverySequenceMatchesItsOwnReference) {
  const Case& c = GetParam();
  TempDir dir;
  const TinyModel tiny = make_tiny(c.spec);
  write_checkpoint(tiny, dir.path());
  const LoadOptions o = rows_options(c.format, c.half_cache);
  const BuiltModel single = load_hf(dir.path(), o);
  const BuiltModel built = build_rows_decoder(single, kSlots);
  const WeightMap weights = c.format == WeightFormat::Q4
                                ? dequantized(tiny.config, tiny.weights, o.q4_group_size, o.q4_scale_dtype)
                                : tiny.weights;
  const double tol = c.format == WeightFormat::Q4 ? kQ4X8Tol : kF32Tol;
  // The rows program reads the one-sequence program's weights where they are.
  runtime::Program base(shared_context(), single.graph, single.weights);
  runtime::Program prog(shared_context(), built.graph, built.weights, base);
  EXPECT_EQ(prog.memory().constants, 0u) << "the rows program uploaded weights of its own";
  std::map<char, Sequence> seqs = sequences();
  const Outcome r = run(prog, tiny.config, weights, seqs, kSchedule, tol);
  std::printf("[ measured ] %s: %d rows checked, max abs %.3g, greedy %d/%d where decided\n", c.name, r.rows_checked,
              r.diff.max_abs, r.agree_decided, r.decided);
  EXPECT_EQ(r.rows_checked, 23);
  EXPECT_EQ(r.diff.failures, 0u) << r.diff.first_failure << " (bound " << tol << ")";
  EXPECT_GT(r.decided, 0);
  EXPECT_EQ(r.agree_decided, r.decided);

  // Negative control: B's rows after the prompts claim A's slot (at B's positions) and read A's
  // keys and values: B's own reference no longer matches. (This program holds its own weights.)
  runtime::Program control(shared_context(), built.graph, built.weights);
  std::map<char, Sequence> fresh = sequences();
  run(control, tiny.config, weights, fresh, {kSchedule[0]}, tol);
  const Outcome wrong = run(control, tiny.config, weights, fresh, {{{'A', {}}, {'B', {}}}}, tol, {{'B', 0}});
  EXPECT_GT(wrong.diff.failures, 0u) << "a row reading another sequence's slot went unnoticed";
}

// One step: rows of (token, slot, position), logits for the rows `picks` names, flattened.
std::vector<float> step(runtime::Program& prog, const std::vector<std::array<int32_t, 3>>& rows,
                        const std::vector<int32_t>& picks) {
  std::vector<int32_t> tokens, where;
  for (const auto& [token, slot, pos] : rows) {
    tokens.push_back(token);
    where.push_back(slot);
    where.push_back(pos);
  }
  const auto n = static_cast<int64_t>(rows.size());
  prog.set_input<int32_t>("tokens", tokens, {1, n});
  prog.set_input<int32_t>("rows", where, {n, 2});
  prog.set_input<int32_t>("logit_rows", picks, {static_cast<int64_t>(picks.size())});
  set_greedy(prog, static_cast<int64_t>(picks.size()));
  prog.execute();
  return prog.read_f32("logits");
}

// What llm::Batch relies on for a greedy sequence to get the same tokens alone as beside others:
// in steps of 5 to 64 rows (picks likewise), a row's logits are the same bit for bit whatever the
// other rows are (dummy rows at slot S write nothing), across the GEMM's tile variants (16-row
// tiles up to 32 rows, 64-row tiles above). Negative control: the same row in a step of one row
// (the products' gemv kernels) differs.
TEST(RowsDecoderInvariance, ARowsLogitsDoNotDependOnTheRowsBesideIt) {
  TempDir dir;
  const TinyModel tiny = make_tiny(llama_gqa());
  write_checkpoint(tiny, dir.path());
  LoadOptions o = rows_options(WeightFormat::Q4, true);
  o.max_seq = 64;
  o.max_prefill = 64;
  constexpr int64_t kWide = 40;  // slots, and so rows a step may hold
  const BuiltModel single = load_hf(dir.path(), o);
  const BuiltModel built = build_rows_decoder(single, kWide);
  const auto vocab = static_cast<size_t>(tiny.config.vocab_size);
  const std::vector<int32_t> prompt = {5, 17, 42, 3, 88, 61, 29};
  auto prefill = [&](runtime::Program& p, bool with_b) {
    std::vector<std::array<int32_t, 3>> rows;
    for (int32_t i = 0; i < 7; ++i) rows.push_back({prompt[static_cast<size_t>(i)], 0, i});
    if (with_b) {
      for (int32_t i = 0; i < 3; ++i) rows.push_back({11 + i, 1, i});
    }
    step(p, rows, {6, 6, 6, 6, 6});
  };
  const int32_t dummy_slot = static_cast<int32_t>(kWide);
  // A alone: its next token beside four dummy rows.
  runtime::Program alone(shared_context(), built.graph, built.weights);
  prefill(alone, false);
  const std::vector<float> a = step(alone, {{40, 0, 7}, {0, dummy_slot, 0}, {0, dummy_slot, 0}, {0, dummy_slot, 0},
                                            {0, dummy_slot, 0}},
                                    {0, 0, 0, 0, 0});
  // A beside B's next token and C's prompt.
  runtime::Program beside(shared_context(), built.graph, built.weights);
  prefill(beside, true);
  const std::vector<float> b =
      step(beside, {{50, 1, 3}, {40, 0, 7}, {1, 2, 0}, {2, 2, 1}, {3, 2, 2}, {4, 2, 3}}, {1, 0, 5, 1, 1});
  ASSERT_EQ(a.size(), 5 * vocab);
  ASSERT_EQ(b.size(), 5 * vocab);
  const std::vector<float> a_row(a.begin(), a.begin() + static_cast<ptrdiff_t>(vocab));
  const std::vector<float> b_row(b.begin(), b.begin() + static_cast<ptrdiff_t>(vocab));
  EXPECT_EQ(a_row, b_row) << "A's logits changed with the rows beside it";
  // A beside 39 rows (C's prompt and dummy rows): the 64-row tiles.
  runtime::Program crowded(shared_context(), built.graph, built.weights);
  prefill(crowded, false);
  std::vector<std::array<int32_t, 3>> many;
  for (int32_t i = 0; i < 20; ++i) many.push_back({i + 1, 2, i});
  many.push_back({40, 0, 7});
  while (many.size() < 40) many.push_back({0, dummy_slot, 0});
  const std::vector<float> d = step(crowded, many, {20, 20, 20, 20, 20});
  ASSERT_EQ(d.size(), 5 * vocab);
  EXPECT_EQ(a_row, std::vector<float>(d.begin(), d.begin() + static_cast<ptrdiff_t>(vocab)))
      << "A's logits changed in a step of 40 rows";
  // Negative control: A's next token in a step of its own (one row, one pick).
  runtime::Program lone(shared_context(), built.graph, built.weights);
  prefill(lone, false);
  const std::vector<float> c = step(lone, {{40, 0, 7}}, {0});
  ASSERT_EQ(c.size(), vocab);
  EXPECT_NE(c, a_row) << "a one-row step gave the padded step's logits bit for bit: the test shows nothing";
}

INSTANTIATE_TEST_SUITE_P(Tiny, RowsDecoder,
                         ::testing::Values(Case{"llama_gqa_f32", llama_gqa(), WeightFormat::F32, false},
                                           Case{"llama_gqa_q4_f16_cache", llama_gqa(), WeightFormat::Q4, true},
                                           Case{"qwen3_f32", qwen3(), WeightFormat::F32, false},
                                           Case{"qwen3_q4_f16_cache", qwen3(), WeightFormat::Q4, true}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace wgx::models::testing
