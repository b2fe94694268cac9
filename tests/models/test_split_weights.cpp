// Models whose embedding is over a device's storage binding limit (runtime/split_constants.h):
// random weights, tied (the lm_head reads the embedding's table), one layer with one head of 64
// and an MLP of 64, built once on a device capped at a lower limit and once without the cap
// (SwiftShader's own: 1 GiB). The same greedy tokens, on the host and on the device, and the
// same logits at every step of a prefill over ids in every chunk and the decode steps after it:
//   f32, vocab 8,500 x hidden 4,096 (139 MB) capped at 128 MiB (a browser's limit): 2 chunks,
//   one decode step (SwiftShader takes ~2 s for one product over the table);
//   q4, vocab 9,001 x hidden 256 (1.3 MB) capped at 512 KiB: 3 chunks, 4 decode steps with the
//   add_rms_norm_linear lm_head of one row;
//   f16, the same geometry (4.6 MB) capped at 2 MiB, every position's logits: 3 chunks, the
//   lm_head a linear over the prefill's 6 rows.
// The q4 and f16 models are also built with their weights written later, in pieces and last
// piece first (Program::LaterWeights, as a streamed .wgx file): the chunks get the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>

#include "model_test_util.h"
#include "models/synthetic.h"
#include "runtime_test_util.h"

namespace wgx::models::testing {
namespace {

ModelConfig wide_vocab(int64_t vocab, int64_t hidden) {
  ModelConfig c = *synthetic_config("demo-tiny");
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.intermediate_size = 64;
  c.num_layers = 1;
  c.num_heads = 1;
  c.num_kv_heads = 1;
  c.head_dim = 64;
  return c;
}

struct Generation {
  std::vector<int32_t> tokens;             // greedy, from the logits on the host
  std::vector<int32_t> device_tokens;      // next_token, picked on the device
  std::vector<std::vector<float>> logits;  // per step
  std::vector<runtime::ConstantSplit> splits;
  std::vector<runtime::RouteChoice> routes;
  size_t decode_dispatches = 0;
};

// The program, with its weights given or written later in pieces of `piece` bytes, last first.
std::unique_ptr<runtime::Program> program(gpu::Context& gpu, const BuiltModel& m, bool later) {
  if (!later) return std::make_unique<runtime::Program>(gpu, m.graph, m.weights);
  auto prog = std::make_unique<runtime::Program>(gpu, m.graph, runtime::Program::LaterWeights{});
  constexpr size_t piece = 4 * 333;
  for (size_t c = 0; c < m.graph.constants.size(); ++c) {
    const std::span<const uint8_t> bytes = m.weights.bytes(m.graph.constants[c].data);
    for (size_t at = (bytes.size() - 1) / piece * piece;; at -= piece) {
      prog->write_constant(c, at, bytes.subspan(at, std::min(piece, bytes.size() - at)));
      if (at == 0) break;
    }
  }
  prog->check_constants_written();
  return prog;
}

Generation generate(gpu::Context& gpu, const BuiltModel& m, const std::vector<int32_t>& prompt, int decode_steps,
                    bool later = false) {
  const std::unique_ptr<runtime::Program> owned = program(gpu, m, later);
  runtime::Program& prog = *owned;
  const auto vocab = static_cast<ptrdiff_t>(m.config.vocab_size);
  Generation g;
  g.splits = prog.splits();
  g.routes = prog.routes();
  std::vector<int32_t> in = prompt;
  int64_t pos = 0;
  for (int step = 0; step <= decode_steps; ++step) {
    std::vector<float> logits = gpu_step(prog, in, pos);
    pos += static_cast<int64_t>(in.size());
    const auto last = logits.end() - vocab;
    const auto token = static_cast<int32_t>(std::max_element(last, logits.end()) - last);
    g.tokens.push_back(token);
    g.device_tokens.push_back(static_cast<int32_t>(prog.read_f32("next_token").at(0)));
    g.logits.push_back(std::move(logits));
    in = {token};
  }
  g.decode_dispatches = prog.dispatches_per_execute();
  return g;
}

// The route of the node labelled `label`, with its one-token route.
std::string route_of(const Generation& g, const std::string& label) {
  for (const runtime::RouteChoice& r : g.routes) {
    if (r.label == label) return r.route + (r.small_route.empty() ? "" : ", " + r.small_route);
  }
  return "(no node " + label + ")";
}

struct Case {
  WeightFormat format;
  int64_t vocab, hidden;
  uint64_t cap;
  size_t chunks;
  bool all_logits;
  int decode_steps;
  bool later_too;  // also with the weights written later
};

void check(const Case& c) {
  LoadOptions o;
  o.weights = c.format;
  o.max_seq = 16;
  o.max_prefill = 8;
  o.all_logits = c.all_logits;
  const BuiltModel m = build_decoder(wide_vocab(c.vocab, c.hidden), synthetic_weights(7), o);
  const auto v = static_cast<int32_t>(c.vocab);
  const std::vector<int32_t> prompt = {5, v / 3 + 7, v - 1, v / 7, 2 * v / 3 + 11, 2};
  const Generation whole = generate(runtime::testing::shared_context(), m, prompt, c.decode_steps);
  const Generation split = generate(runtime::testing::device_like(true, 0, c.cap), m, prompt, c.decode_steps);

  ASSERT_TRUE(whole.splits.empty());
  ASSERT_EQ(split.splits.size(), 1u);
  const runtime::ConstantSplit& s = split.splits[0];
  EXPECT_EQ(s.name, "model.embed_tokens.weight");
  EXPECT_EQ(s.rows.size(), c.chunks);
  EXPECT_GT(s.bytes, c.cap);
  // The prompt reads rows of every chunk.
  int64_t first = 0;
  for (int64_t rows : s.rows) {
    EXPECT_TRUE(std::any_of(prompt.begin(), prompt.end(), [&](int32_t id) { return id >= first && id < first + rows; }))
        << "no id in [" << first << ":" << first + rows << "]";
    first += rows;
  }
  // The chunks' nodes take the whole's routes.
  const std::string chunk0 = "[0:" + std::to_string(s.rows[0]) + "]";
  EXPECT_EQ(route_of(split, "embed" + chunk0), route_of(whole, "embed"));
  EXPECT_EQ(route_of(split, "lm_head" + chunk0), route_of(whole, "lm_head"));

  EXPECT_EQ(split.tokens, whole.tokens);
  EXPECT_EQ(split.device_tokens, whole.tokens);
  EXPECT_EQ(whole.device_tokens, whole.tokens);
  double max_abs = 0;
  for (size_t i = 0; i < whole.logits.size(); ++i) {
    EXPECT_TRUE(runtime::testing::close(split.logits[i], whole.logits[i])) << "step " << i;
    for (size_t j = 0; j < whole.logits[i].size() && j < split.logits[i].size(); ++j) {
      max_abs = std::max(max_abs, double{std::abs(split.logits[i][j] - whole.logits[i][j])});
    }
  }
  if (c.later_too) {
    const Generation later = generate(runtime::testing::device_like(true, 0, c.cap), m, prompt, c.decode_steps, true);
    ASSERT_EQ(later.splits.size(), 1u);
    EXPECT_EQ(later.tokens, whole.tokens);
    for (size_t i = 0; i < whole.logits.size(); ++i) {
      EXPECT_EQ(later.logits[i], split.logits[i]) << "written later, step " << i;
    }
  }
  std::printf("[ measured ] %s, %zu chunks: logits max abs difference %.3g; %zu dispatches per decode step "
              "(%zu unsplit)\n",
              graph::to_string(s.type).c_str(), s.rows.size(), max_abs, split.decode_dispatches,
              whole.decode_dispatches);
}

TEST(SplitWeights, F32EmbeddingOverABrowsersBindingLimit) {
  check({WeightFormat::F32, 8500, 4096, uint64_t{128} << 20, 2, false, 1, false});
}

TEST(SplitWeights, Q4EmbeddingOverALowerLimit) { check({WeightFormat::Q4, 9001, 256, 512 << 10, 3, false, 4, true}); }

TEST(SplitWeights, F16EmbeddingWithEveryPositionsLogits) {
  check({WeightFormat::F16, 9001, 256, 2 << 20, 3, true, 4, true});
}

}  // namespace
}  // namespace wgx::models::testing
