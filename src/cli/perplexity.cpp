// wgx perplexity: how well a model predicts a text file (as llama.cpp's llama-perplexity): the
// file's tokens in windows of --ctx tokens, one every --stride tokens; a token is scored once,
// in the first window that holds it with context before it (the first window scores all but its
// first token, a later one the tokens past the previous window's end). Each token's negative
// log-likelihood comes from Model::log_probs; the mean over the scored tokens and its exponent,
// the perplexity, are printed last (`perplexity N` the last line).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/llm_common.h"

namespace wgx::cli {

namespace {

constexpr const char* kUsage = R"(usage: wgx perplexity --model PATH FILE [options] [model options]

The model's perplexity on the text of FILE ('-' reads stdin), as llama.cpp's llama-perplexity
reports it: the text's tokens (as the tokenizer encodes the whole file, special tokens' text
included) are scored in windows of --ctx tokens, a window starting every --stride tokens; each
token counts once, in the first window where tokens come before it. Prints the windows as they
go (stderr), then the tokens scored, the mean negative log-likelihood in nats per token, and
`perplexity N` as the last line.

  --ctx N      tokens a window holds (default 512, at most the model's context)
  --stride S   tokens from one window's start to the next (default: half a window); a token
               after the first window is scored with at least ctx - stride tokens before it
  --json       one JSON object on stdout instead

)";

std::string read_all(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("perplexity: cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int run_perplexity(const GlobalOptions& global, const std::vector<std::string>& argv) {
  for (const std::string& arg : argv) {
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(kModelOptionsHelp, stdout);
      return 0;
    }
  }
  ModelArgs model;
  std::string file;
  int64_t window = 512, stride = 0;
  bool json = false;
  ArgWalker args("perplexity", argv);
  while (!args.done()) {
    if (args.take("--ctx")) {
      window = parse_int("--ctx", args.value(), 2, int64_t{1} << 20);
    } else if (take_model_option(args, model)) {
      continue;
    } else if (args.take("--stride")) {
      stride = parse_int("--stride", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--json")) {
      json = true;
    } else if (file.empty() && (args.current() == "-" || args.current().rfind("-", 0) != 0)) {
      file = args.current();
      args.skip();
    } else {
      args.unknown();
    }
  }
  if (model.path.empty()) throw std::invalid_argument("perplexity: name the model with --model PATH");
  if (file.empty()) throw std::invalid_argument("perplexity: name the text file (FILE, or - for stdin)");
  const std::string text = read_all(file);

  const Engine engine = make_engine(global);
  model.load.context = window;
  model.load.parallel = 1;
  const Model m = load_model(engine, model);
  window = std::min(window, m.info().context);
  if (stride == 0) stride = std::max<int64_t>(1, window / 2);
  if (stride > window) {
    throw std::invalid_argument("perplexity: --stride " + std::to_string(stride) + " is more than a window (" +
                                std::to_string(window) + " tokens): tokens between windows would go unscored");
  }
  const std::vector<int32_t> ids = m.tokenizer().encode(text);
  const auto n = static_cast<int64_t>(ids.size());
  if (n < 2) throw std::invalid_argument("perplexity: " + file + " holds " + std::to_string(n) + " token(s); it takes 2 or more");

  const int64_t windows = n <= window ? 1 : 1 + (n - window + stride - 1) / stride;
  double nll = 0;
  int64_t scored = 0, done = 0, w = 0;
  const bool terminal = isatty(STDERR_FILENO) != 0;
  for (int64_t begin = 0; done < n - 1; begin += stride, ++w) {
    const int64_t end = std::min(begin + window, n);
    const std::vector<double> lp = m.log_probs(std::span<const int32_t>(ids).subspan(static_cast<size_t>(begin),
                                                                                       static_cast<size_t>(end - begin)));
    // lp[i] scores token begin + i + 1; count those past what earlier windows scored.
    for (int64_t t = std::max(begin + 1, done + 1); t < end; ++t) {
      nll -= lp[static_cast<size_t>(t - begin - 1)];
      ++scored;
    }
    done = end - 1;
    if (!json) {
      std::fprintf(stderr, "%swgx: window %lld/%lld: %lld tokens scored, perplexity so far %.4f%s",
                   terminal ? "\r" : "", static_cast<long long>(w + 1), static_cast<long long>(windows),
                   static_cast<long long>(scored), std::exp(nll / static_cast<double>(scored)),
                   terminal ? "" : "\n");
    }
  }
  if (terminal && !json) std::fputs("\n", stderr);
  const double mean = nll / static_cast<double>(scored);
  const ModelInfo info = m.info();
  if (json) {
    const nlohmann::json out = {{"model", info.path}, {"description", info.description}, {"tokens", n},
                                {"scored", scored}, {"ctx", window}, {"stride", stride}, {"windows", w},
                                {"mean_nll", mean}, {"perplexity", std::exp(mean)}};
    std::puts(out.dump(2).c_str());
    return 0;
  }
  std::printf("model        %s (%s)\n", info.path.c_str(), info.description.c_str());
  std::printf("text         %s: %lld tokens, %lld scored in %lld window%s of %lld tokens, stride %lld\n",
              file.c_str(), static_cast<long long>(n), static_cast<long long>(scored), static_cast<long long>(w),
              w == 1 ? "" : "s", static_cast<long long>(window), static_cast<long long>(stride));
  std::printf("mean NLL     %.4f nats per token\n", mean);
  std::printf("perplexity %.4f\n", std::exp(mean));
  return 0;
}

}  // namespace wgx::cli
