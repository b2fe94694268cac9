// wgx bench: prefill and decode speed of a model, end to end (host sampling included): a
// synthetic prompt of -p tokens, then -n tokens decoded greedily with eos ignored, after one
// warm-up run of the same shape.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/llm_common.h"

namespace wgx::cli {

namespace {

constexpr const char* kBenchUsage = R"(usage: wgx bench --model PATH [-p N] [-n N] [--json] [model options]

Times the prefill of an N-token prompt and the decoding of N new tokens (greedy, eos ignored,
sampling on the host included), after one warm-up run of the same shape.

  -p, --prompt-tokens N   prompt length (default 128)
  -n, --max-tokens N      tokens to decode (default 128)
  --json                  one JSON object on stdout instead of text

)";

constexpr const char* kFiller =
    "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. ";

std::vector<int32_t> synthetic_prompt(const tokenizer::Tokenizer& tok, int64_t n) {
  const std::vector<int32_t> piece = tok.encode(kFiller);
  std::vector<int32_t> ids;
  while (static_cast<int64_t>(ids.size()) < n) ids.insert(ids.end(), piece.begin(), piece.end());
  ids.resize(static_cast<size_t>(n));
  return ids;
}

}  // namespace

int run_bench(const GlobalOptions& global, const std::vector<std::string>& argv) {
  ModelArgs model;
  int64_t prompt_tokens = 128, new_tokens = 128;
  bool json = false;
  ArgWalker args("bench", argv);
  while (!args.done()) {
    if (take_model_option(args, model)) continue;
    if (args.take("--help", "-h")) {
      std::fputs(kBenchUsage, stdout);
      std::fputs(kModelOptionsHelp, stdout);
      return 0;
    }
    if (args.take("--prompt-tokens", "-p")) {
      prompt_tokens = parse_int("-p", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--max-tokens", "-n")) {
      new_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--json")) {
      json = true;
    } else {
      args.unknown();
    }
  }
  if (prompt_tokens + new_tokens > model.context) {
    throw std::invalid_argument("bench: -p " + std::to_string(prompt_tokens) + " plus -n " +
                                std::to_string(new_tokens) + " exceed the context of " + std::to_string(model.context) +
                                " tokens; raise --ctx");
  }
  LoadedModel m = load_model(global, model);
  llm::Generator gen(*m.program, *m.tokenizer, m.limits);
  const std::vector<int32_t> prompt = synthetic_prompt(*m.tokenizer, prompt_tokens);
  llm::GenerationOptions options;
  options.sampling.temperature = 0;
  options.max_new_tokens = std::min<int64_t>(new_tokens, 4);
  gen.generate(prompt, options);  // warm-up: first executions of each shape
  gen.reset();
  options.max_new_tokens = new_tokens;
  const llm::GenerationResult r = gen.generate(prompt, options);
  const llm::GenerationStats& s = r.stats;
  if (json) {
    const nlohmann::json out = {{"model", model.path},
                                {"description", m.description},
                                {"adapter", m.gpu->adapter().device},
                                {"load_s", m.load_seconds},
                                {"prompt_tokens", s.prompt_tokens},
                                {"generated_tokens", s.generated_tokens},
                                {"prefill_s", s.prefill_seconds},
                                {"prefill_tok_s", s.prefill_tokens_per_second()},
                                {"first_token_s", s.first_token_seconds},
                                {"decode_s", s.decode_seconds},
                                {"decode_tok_s", s.decode_tokens_per_second()}};
    std::puts(out.dump(2).c_str());
    return 0;
  }
  std::printf("model        %s (%s), ready in %.1f s\n", model.path.c_str(), m.description.c_str(), m.load_seconds);
  std::printf("prefill      %lld tokens in %.3f s: %.1f tok/s (%lld steps)\n", static_cast<long long>(s.prompt_tokens),
              s.prefill_seconds, s.prefill_tokens_per_second(), static_cast<long long>(s.prefill_steps));
  std::printf("first token  %.3f s\n", s.first_token_seconds);
  std::printf("decode       %lld tokens in %.3f s: %.1f tok/s\n", static_cast<long long>(s.generated_tokens),
              s.decode_seconds, s.decode_tokens_per_second());
  return 0;
}

}  // namespace wgx::cli
