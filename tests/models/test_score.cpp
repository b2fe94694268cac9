// llm::log_probs (Model::log_probs, wgx perplexity) against transformers: for the tiny
// checkpoints of data/hf/ (tools/hf_reference/make_tiny.py: float32 logits at every prompt
// position), the log-probability of each prompt token after the ones before it is the
// log-softmax of Hugging Face's logits at the position before, within 1e-3; an 11-token prompt
// takes two steps of the rows program (8 rows a step, all picked). Negative control: the ids with two
// tokens swapped do not match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llm/generator.h"
#include "llm/score.h"
#include "models/decoder.h"
#include "runtime_test_util.h"

namespace wgx::models::testing {
namespace {

using nlohmann::json;

constexpr double kTol = 1e-3;

// log p(next | before) from one position's logits.
double log_softmax_at(const std::vector<double>& logits, int32_t next) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double v : logits) sum += std::exp(v - top);
  return logits[static_cast<size_t>(next)] - top - std::log(sum);
}

// The largest distance between `got` and Hugging Face's log-probabilities of `ids`.
double distance(const std::vector<double>& got, const json& prompt, const std::vector<int32_t>& ids) {
  double worst = 0;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    const double want = log_softmax_at(prompt.at("logits").at(t).get<std::vector<double>>(), ids[t + 1]);
    worst = std::max(worst, std::abs(got.at(t) - want));
  }
  return worst;
}

class Score : public ::testing::TestWithParam<const char*> {};

TEST_P(Score, LogProbsMatchTransformers) {
  const std::filesystem::path dir = std::filesystem::path(WGX_MODELS_TEST_DATA) / "hf" / GetParam();
  ASSERT_TRUE(std::filesystem::exists(dir / "reference.json")) << dir;
  std::ifstream in(dir / "reference.json");
  const json ref = json::parse(in);
  LoadOptions o;
  o.weights = WeightFormat::F32;
  o.half_kv_cache = false;
  o.max_seq = 128;
  o.max_prefill = 8;  // steps of 8 rows, all picked
  const BuiltModel single = load_hf(dir, o);
  const BuiltModel rows = build_rows_decoder(single, 1);
  runtime::Program base(runtime::testing::shared_context(), single.graph, single.weights);
  runtime::Program prog(runtime::testing::shared_context(), rows.graph, rows.weights, base);
  const llm::BatchLimits limits = llm::batch_limits(rows.graph);
  ASSERT_EQ(limits.picks, 8);
  int scored = 0;
  for (const json& p : ref.at("prompts")) {
    std::vector<int32_t> ids = p.at("ids").get<std::vector<int32_t>>();
    if (ids.size() < 2) {
      EXPECT_THROW(llm::log_probs(prog, limits, ids), std::invalid_argument);
      continue;
    }
    const std::vector<double> got = llm::log_probs(prog, limits, ids);
    ASSERT_EQ(got.size(), ids.size() - 1);
    const double d = distance(got, p, ids);
    std::printf("[ measured ] %s, %zu tokens: max abs %.3g against transformers\n", GetParam(), ids.size(), d);
    EXPECT_LE(d, kTol);
    scored += static_cast<int>(got.size());
    if (ids.size() >= 4 && ids[1] != ids[3]) {
      std::swap(ids[1], ids[3]);
      EXPECT_GT(distance(llm::log_probs(prog, limits, ids), p, p.at("ids").get<std::vector<int32_t>>()), 10 * kTol)
          << "swapped tokens scored as the prompt's: the comparison shows nothing";
    }
  }
  EXPECT_GE(scored, 16);
  std::vector<int32_t> too_long(129, 1);
  EXPECT_THROW(llm::log_probs(prog, limits, too_long), llm::ContextFullError);
  EXPECT_THROW(llm::log_probs(prog, limits, std::vector<int32_t>{1, -1}), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Hf, Score, ::testing::Values("tiny_llama", "tiny_qwen3"));

}  // namespace
}  // namespace wgx::models::testing
