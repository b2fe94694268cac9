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
  if (c.full) {  // gigabytes: say how far the conversion is
    o.progress = [](const ProgressEvent& e) {
      if (e.done) std::fprintf(stderr, "%s: done in %.1f s\n", e.stage.c_str(), e.seconds);
    };
  }
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

// The demo model against transformers' greedy continuations of 12 prompts (made by
// tools/hf_reference/make_prompt_reference.py, float32): fed each prompt and its continuation in
// one step, every continuation token is the argmax after the tokens before it, which is what
// greedy decoding needs to reproduce the continuation whole. (tests/api compares the text that
// Session::generate streams for the same prompts.)
TEST(DemoReference, EveryGreedyTokenIsTheArgmaxAfterItsPrefix) {
  std::ifstream in(WGX_DEMO_GREEDY);
  const json ref = json::parse(in);
  LoadOptions o;
  o.weights = WeightFormat::F32;
  o.half_kv_cache = false;
  o.all_logits = true;
  o.max_seq = 128;
  o.max_prefill = 64;
  const BuiltModel built = load_hf(WGX_DEMO_MODEL, o);
  runtime::Program prog(runtime::testing::shared_context(), built.graph, built.weights);
  const auto vocab = static_cast<size_t>(built.config.vocab_size);
  int checked = 0;
  double closest = 1e9;  // the smallest lead of the reference token over the runner-up
  for (const json& c : ref.at("cases")) {
    const auto prompt = c.at("prompt_ids").get<std::vector<int32_t>>();
    const auto generated = c.at("generated_ids").get<std::vector<int32_t>>();
    std::vector<int32_t> ids = prompt;
    ids.insert(ids.end(), generated.begin(), generated.end() - 1);
    prog.reset_state();
    const std::vector<float> logits = gpu_step(prog, ids, 0);
    for (size_t j = 0; j < generated.size(); ++j) {
      const std::vector<float> row = row_of(logits, prompt.size() - 1 + j, vocab);
      const auto pick = greedy(row);
      EXPECT_EQ(pick.token, generated[j]) << c.at("prompt").get<std::string>() << ": token " << j;
      closest = std::min(closest, static_cast<double>(pick.margin));
      ++checked;
    }
  }
  std::printf("[ measured ] demo: %d reference tokens checked, closest lead %.3g\n", checked, closest);
  EXPECT_EQ(ref.at("cases").size(), 12u);
}

}  // namespace
}  // namespace wgx::models::testing
