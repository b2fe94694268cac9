// The generator over the toy model: chunked prefill, eos, stop strings, max tokens, the context
// limit, seeded sampling, streaming, and multi-turn continuation of the KV cache.
#include <gtest/gtest.h>

#include <memory>

#include "gpu/context.h"
#include "llm/generator.h"
#include "tokenizer/utf8.h"
#include "toy_model.h"

namespace wgx::llm {
namespace {

using test::toy_tokenizer;

// One program for the whole suite: building pipelines is the slow part on SwiftShader. Every
// Generator resets its state.
class GeneratorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gpu::ContextOptions o = gpu::ContextOptions::from_env();
    o.announce = false;
    context_ = std::make_unique<gpu::Context>(o);
    test::ToyModel model = test::toy_model();
    limits_ = model_limits(model.graph);
    program_ = std::make_unique<runtime::Program>(*context_, std::move(model.graph), model.weights);
  }
  static void TearDownTestSuite() {
    program_.reset();
    context_.reset();
  }

  Generator make() { return Generator(*program_, toy_tokenizer(), limits_); }

  static GenerationOptions greedy(int64_t n) {
    GenerationOptions o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0;
    return o;
  }

  static std::vector<int32_t> encode(const std::string& text) { return toy_tokenizer().encode(text); }

  static inline std::unique_ptr<gpu::Context> context_;
  static inline std::unique_ptr<runtime::Program> program_;
  static inline ModelLimits limits_;
};

TEST_F(GeneratorTest, LimitsComeFromTheGraph) {
  EXPECT_EQ(limits_.max_seq, test::toy::kMaxSeq);
  EXPECT_EQ(limits_.max_prefill, test::toy::kMaxPrefill);
  EXPECT_EQ(limits_.vocab, test::toy::kVocab);
}

TEST_F(GeneratorTest, PrefillInChunksGivesTheSameTokensAsOneStep) {
  Generator gen = make();
  const auto short_prompt = encode("Chunked prefill!");  // 16 tokens: one step at most
  ASSERT_EQ(short_prompt.size(), 16u);
  GenerationOptions o = greedy(12);
  const GenerationResult whole = gen.generate(short_prompt, o);
  EXPECT_EQ(whole.stats.prefill_steps, 1);
  for (int64_t chunk : {1, 3, 7}) {
    gen.reset();
    o.prefill_chunk = chunk;
    const GenerationResult r = gen.generate(short_prompt, o);
    EXPECT_EQ(r.stats.prefill_steps, (16 + chunk - 1) / chunk);
    EXPECT_EQ(r.tokens, whole.tokens) << "chunks of " << chunk;
  }
  // Longer than max_prefill: 40 tokens in 3 steps of the model's size, or 8 of 5.
  const auto long_prompt = encode("A prompt longer than one prefill step...");
  ASSERT_EQ(long_prompt.size(), 40u);
  gen.reset();
  o.prefill_chunk = 0;
  const GenerationResult a = gen.generate(long_prompt, o);
  EXPECT_EQ(a.stats.prefill_steps, 3);
  gen.reset();
  o.prefill_chunk = 5;
  const GenerationResult b = gen.generate(long_prompt, o);
  EXPECT_EQ(b.stats.prefill_steps, 8);
  EXPECT_EQ(a.tokens, b.tokens);
}

TEST_F(GeneratorTest, AGraphWithEveryPositionsLogitsSamplesFromTheLast) {
  test::ToyModel model = test::toy_model(true);
  const ModelLimits limits = model_limits(model.graph);
  EXPECT_EQ(limits.vocab, test::toy::kVocab);
  runtime::Program program(*context_, std::move(model.graph), model.weights);
  Generator all(program, toy_tokenizer(), limits);
  Generator last = make();
  GenerationOptions o = greedy(6);
  o.prefill_chunk = 5;
  const auto prompt = encode("Every position.");
  EXPECT_EQ(all.generate(prompt, o).tokens, last.generate(prompt, o).tokens);
}

TEST_F(GeneratorTest, MaxNewTokensAndStreaming) {
  Generator gen = make();
  std::vector<int32_t> seen;
  std::string streamed;
  const GenerationResult r = gen.generate(encode("Hello world"), greedy(9), [&](int32_t token, std::string_view text) {
    seen.push_back(token);
    streamed += text;
    return true;
  });
  EXPECT_EQ(r.stop, StopReason::MaxTokens);
  EXPECT_EQ(r.tokens.size(), 9u);
  EXPECT_EQ(seen, r.tokens);  // one call per token
  EXPECT_EQ(streamed, r.text);
  EXPECT_EQ(r.text, toy_tokenizer().decode(r.tokens));
  EXPECT_EQ(r.stats.prompt_tokens, 11);
  EXPECT_EQ(r.stats.generated_tokens, 9);
  EXPECT_GT(r.stats.prefill_tokens_per_second(), 0);
  EXPECT_GT(r.stats.decode_tokens_per_second(), 0);
  EXPECT_GE(r.stats.first_token_seconds, r.stats.prefill_seconds);
}

TEST_F(GeneratorTest, StopsOnEosWithoutEmittingIt) {
  Generator gen = make();
  const auto prompt = encode("Hello world");
  const GenerationResult free_run = gen.generate(prompt, greedy(16));
  // The first token that did not occur before it (past the start) becomes the eos.
  size_t k = 2;
  while (std::find(free_run.tokens.begin(), free_run.tokens.begin() + static_cast<ptrdiff_t>(k), free_run.tokens[k]) !=
         free_run.tokens.begin() + static_cast<ptrdiff_t>(k)) {
    ++k;
  }
  ASSERT_LT(k, free_run.tokens.size());
  gen.reset();
  GenerationOptions o = greedy(16);
  o.eos_ids = {free_run.tokens[k]};
  const GenerationResult r = gen.generate(prompt, o);
  EXPECT_EQ(r.stop, StopReason::Eos);
  EXPECT_EQ(r.tokens,
            std::vector<int32_t>(free_run.tokens.begin(), free_run.tokens.begin() + static_cast<ptrdiff_t>(k) + 1));
  const std::vector<int32_t> before(free_run.tokens.begin(), free_run.tokens.begin() + static_cast<ptrdiff_t>(k));
  EXPECT_EQ(r.text, toy_tokenizer().decode(before));
}

TEST_F(GeneratorTest, StopStringsEndTheTextBeforeThem) {
  Generator gen = make();
  const auto prompt = encode("Hello world");
  const std::string full = gen.generate(prompt, greedy(24)).text;
  // A three-character stop string (three tokens here) first seen at `at`.
  size_t at = 3;
  while (full.find(full.substr(at, 3)) != at) ++at;
  ASSERT_LE(at + 3, full.size());
  const std::string stop = full.substr(at, 3);
  gen.reset();
  GenerationOptions o = greedy(24);
  o.stop_strings = {"never shows up", stop};
  std::string streamed;
  const GenerationResult r = gen.generate(prompt, o, [&](int32_t, std::string_view text) {
    streamed += text;
    return true;
  });
  EXPECT_EQ(r.stop, StopReason::StopString);
  EXPECT_EQ(r.text, full.substr(0, at)) << "stop string '" << stop << "'";
  EXPECT_EQ(streamed, r.text);
  EXPECT_EQ(r.tokens.size(), at + 3);  // one token per character: stopped on the string's last one
  // A stop string that never appears changes nothing.
  gen.reset();
  o.stop_strings = {"never shows up"};
  EXPECT_EQ(gen.generate(prompt, o).text, full);
}

TEST_F(GeneratorTest, CallbackCanCancel) {
  Generator gen = make();
  int calls = 0;
  const GenerationResult r =
      gen.generate(encode("abc"), greedy(20), [&](int32_t, std::string_view) { return ++calls < 4; });
  EXPECT_EQ(r.stop, StopReason::Cancelled);
  EXPECT_EQ(r.tokens.size(), 4u);
}

TEST_F(GeneratorTest, ContextOverflowIsAClearErrorAndChangesNothing) {
  Generator gen = make();
  const auto prompt = encode("0123456789");
  try {
    gen.generate(prompt, greedy(test::toy::kMaxSeq - 9));
    FAIL() << "expected ContextFullError";
  } catch (const ContextFullError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 128 tokens"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the prompt has 10"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(gen.context().empty());
  // Exactly full is fine.
  const GenerationResult r = gen.generate(prompt, greedy(test::toy::kMaxSeq - 10));
  EXPECT_EQ(r.tokens.size(), static_cast<size_t>(test::toy::kMaxSeq - 10));
  EXPECT_EQ(gen.remaining(), 0);
  EXPECT_THROW(gen.generate(encode("x"), greedy(1)), ContextFullError);
}

TEST_F(GeneratorTest, BadPromptsAreErrors) {
  Generator gen = make();
  EXPECT_THROW(gen.generate(std::vector<int32_t>{5, test::toy::kVocab}, greedy(1)), std::invalid_argument);
  EXPECT_THROW(gen.generate(std::vector<int32_t>{-1}, greedy(1)), std::invalid_argument);
  EXPECT_THROW(gen.generate(std::vector<int32_t>{}, greedy(1)), std::invalid_argument);
}

TEST_F(GeneratorTest, SeededSamplingIsReproducible) {
  Generator gen = make();
  GenerationOptions o;
  o.max_new_tokens = 20;
  o.sampling.temperature = 1.0f;
  o.sampling.top_k = 40;
  o.sampling.seed = 7;
  const auto prompt = encode("Once upon a time");
  const auto first = gen.generate(prompt, o).tokens;
  gen.reset();
  EXPECT_EQ(gen.generate(prompt, o).tokens, first);
  gen.reset();
  o.sampling.seed = 8;
  EXPECT_NE(gen.generate(prompt, o).tokens, first);
}

TEST_F(GeneratorTest, StreamedTextIsValidUtf8WhenACharacterIsSplit) {
  // Hot sampling over many tokens draws the lone bytes of "é": held until complete, U+FFFD when
  // they do not form a character. Every piece is valid UTF-8 and the pieces add up to decode().
  Generator gen = make();
  GenerationOptions o;
  o.max_new_tokens = 100;
  o.sampling.temperature = 10.0f;
  o.sampling.seed = 1;
  std::string streamed;
  int held = 0;  // tokens whose text was held back
  const GenerationResult r = gen.generate(encode("bytes"), o, [&](int32_t, std::string_view text) {
    EXPECT_FALSE(tokenizer::find_invalid_utf8(text).has_value());
    held += text.empty();
    streamed += text;
    return true;
  });
  EXPECT_GT(std::count(r.tokens.begin(), r.tokens.end(), test::toy::e_acute_lead), 0) << "pick another seed";
  EXPECT_GT(held, 0);
  EXPECT_EQ(streamed, toy_tokenizer().decode(r.tokens));
}

TEST_F(GeneratorTest, ResetClearsTheCache) {
  Generator gen = make();
  const auto prompt = encode("Hello world");
  const auto first = gen.generate(prompt, greedy(10)).tokens;
  // The same prompt again continues the sequence: the cache holds the first run, so the tokens
  // differ (this is what makes the continuation test below meaningful).
  EXPECT_NE(gen.generate(prompt, greedy(10)).tokens, first);
  EXPECT_EQ(gen.context().size(), 2 * (prompt.size() + 10));
  gen.reset();
  EXPECT_TRUE(gen.context().empty());
  EXPECT_EQ(gen.generate(prompt, greedy(10)).tokens, first);
}

TEST_F(GeneratorTest, ContinuationEqualsAFreshRunOverTheConcatenation) {
  Generator gen = make();
  const auto turn1 = encode("First turn.");
  const auto turn2 = encode(" Second one?");
  const GenerationResult r1 = gen.generate(turn1, greedy(8));
  const GenerationResult r2 = gen.generate(turn2, greedy(8));
  // The second call fed the first reply's last token and the new prompt only.
  EXPECT_EQ(r2.stats.prompt_tokens, static_cast<int64_t>(turn2.size()) + 1);
  std::vector<int32_t> all = turn1;
  all.insert(all.end(), r1.tokens.begin(), r1.tokens.end());
  all.insert(all.end(), turn2.begin(), turn2.end());
  gen.reset();
  GenerationOptions o = greedy(8);
  o.prefill_chunk = 6;  // a different chunking as well
  EXPECT_EQ(gen.generate(all, o).tokens, r2.tokens);
}

}  // namespace
}  // namespace wgx::llm
