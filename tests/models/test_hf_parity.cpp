// Parity with Hugging Face itself: checkpoints and float32 logits written by
// tools/hf_reference/make_tiny.py (transformers, eval mode, eager attention). load_hf with f32
// weights and an f32 cache must give HF's logits (abs 1e-3 OR rel 1e-3) at every prompt position
// (tiny models) or the last one (full geometries), and the same 8 greedy tokens.
//
// The tiny checkpoints live in data/hf/<name>/ once the script's output is committed; the
// full-geometry ones (GBs) are read from $WGX_HF_FULL_DIR/<name>/ and are meant for a GPU machine.
// Without the data a case says so and is skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model_test_util.h"
#include "models/model.h"
#include "reference_model.h"
#include "runtime_test_util.h"

namespace wgx::models::testing {
namespace {

using nlohmann::json;

constexpr double kTol = 1e-3;

struct HfCase {
  const char* name;
  bool full;  // a full geometry: only the last position's logits are in reference.json
};

void PrintTo(const HfCase& c, std::ostream* os) { *os << c.name; }

std::filesystem::path folder_of(const HfCase& c) {
  if (!c.full) return std::filesystem::path(WGX_MODELS_TEST_DATA) / "hf" / c.name;
  const char* root = std::getenv("WGX_HF_FULL_DIR");
  return root ? std::filesystem::path(root) / c.name : std::filesystem::path();
}

std::vector<float> row_of(const std::vector<float>& logits, size_t row, size_t vocab) {
  const size_t begin = std::min(row * vocab, logits.size());
  return {logits.begin() + static_cast<ptrdiff_t>(begin),
          logits.begin() + static_cast<ptrdiff_t>(std::min(begin + vocab, logits.size()))};
}

class HfParity : public ::testing::TestWithParam<HfCase> {};

TEST_P(HfParity, LogitsAndGreedyTokens) {
  const HfCase& c = GetParam();
  const std::filesystem::path dir = folder_of(c);
  if (dir.empty() || !std::filesystem::exists(dir / "reference.json")) {
    const std::string where = dir.empty() ? std::string("$WGX_HF_FULL_DIR (unset)") : dir.string();
    std::printf("[ no data  ] %s: %s has no reference.json; run tools/hf_reference/make_tiny.py%s\n", c.name,
                where.c_str(), c.full ? " and set WGX_HF_FULL_DIR to its full/ folder" : " and copy its output there");
    GTEST_SKIP() << "no Hugging Face reference data for " << c.name;
  }
  std::ifstream in(dir / "reference.json");
  const json ref = json::parse(in);

  LoadOptions o;
  o.weights = WeightFormat::F32;
  o.half_kv_cache = false;
  o.all_logits = !c.full;
  o.max_seq = 128;
  o.max_prefill = 16;
  o.progress = c.full;
  const BuiltModel built = load_hf(dir, o);
  runtime::Program prog(runtime::testing::shared_context(), built.graph, built.weights);
  const auto vocab = static_cast<size_t>(built.config.vocab_size);

  Diff diff;
  int agree = 0, total = 0;
  for (const json& p : ref.at("prompts")) {
    prog.reset_state();
    const auto ids = p.at("ids").get<std::vector<int32_t>>();
    const std::vector<float> got = gpu_step(prog, ids, 0);
    if (c.full) {
      diff.add(got, p.at("last_logits").get<std::vector<double>>(), kTol, kTol, "last position");
    } else {
      for (size_t t = 0; t < ids.size(); ++t) {
        diff.add(row_of(got, t, vocab), p.at("logits").at(t).get<std::vector<double>>(), kTol, kTol,
                 "position " + std::to_string(t));
      }
    }
    const auto greedy_ids = p.at("greedy").get<std::vector<int32_t>>();
    const auto margins = p.at("greedy_margins").get<std::vector<double>>();
    std::vector<float> last = row_of(got, c.full ? 0 : ids.size() - 1, vocab);
    int64_t pos = static_cast<int64_t>(ids.size());
    for (size_t j = 0; j < greedy_ids.size(); ++j) {
      if (!c.full) {
        diff.add(last, p.at("greedy_logits").at(j).get<std::vector<double>>(), kTol, kTol,
                 "greedy step " + std::to_string(j));
      }
      const int32_t ours = greedy(last).token;
      EXPECT_EQ(ours, greedy_ids[j]) << "prompt of " << ids.size() << " tokens, greedy step " << j
                                     << " (HF's margin " << margins[j] << ")";
      agree += ours == greedy_ids[j];
      ++total;
      if (j + 1 == greedy_ids.size()) break;
      // HF's token, so one disagreement does not change every later step.
      last = gpu_step(prog, {greedy_ids[j]}, pos++);
    }
  }
  std::printf("[ measured ] %s: max abs %.3g against HF (%s, transformers %s), greedy %d/%d\n", c.name, diff.max_abs,
              ref.value("device", "?").c_str(), ref.value("transformers", "?").c_str(), agree, total);
  EXPECT_EQ(diff.failures, 0u) << diff.first_failure;
}

INSTANTIATE_TEST_SUITE_P(Hf, HfParity,
                         ::testing::Values(HfCase{"tiny_llama", false}, HfCase{"tiny_qwen3", false},
                                           HfCase{"llama_3.2_1b_shape", true}, HfCase{"qwen3_0.6b_shape", true}),
                         [](const auto& p) {
                           std::string n = p.param.name;
                           for (char& ch : n) {
                             if (ch == '.') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace wgx::models::testing
