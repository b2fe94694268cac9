#include "llm/score.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "llm/generator.h"

namespace wgx::llm {

std::vector<double> log_probs(runtime::Program& rows, const BatchLimits& limits, std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < 2) throw std::invalid_argument("scoring needs at least 2 tokens (the first has nothing before it)");
  if (n > limits.max_seq) {
    throw ContextFullError("the context holds " + std::to_string(limits.max_seq) + " tokens; " + std::to_string(n) +
                           " were given to score");
  }
  for (const int32_t id : tokens) {
    if (id < 0 || id >= limits.vocab) {
      throw std::invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                                  std::to_string(limits.vocab) + ")");
    }
  }
  const int64_t per_step = std::max<int64_t>(1, std::min(limits.max_rows, limits.picks));
  const auto vocab = static_cast<size_t>(limits.vocab);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n - 1));
  // The last token is only a target: its own row is never fed.
  for (int64_t from = 0; from < n - 1; from += per_step) {
    const int64_t count = std::min(per_step, n - 1 - from);
    std::vector<int32_t> ids(tokens.begin() + from, tokens.begin() + from + count), where, picks;
    for (int64_t i = 0; i < count; ++i) {
      where.push_back(0);
      where.push_back(static_cast<int32_t>(from + i));
      picks.push_back(static_cast<int32_t>(i));
    }
    rows.set_input<int32_t>("tokens", ids, {1, count});
    rows.set_input<int32_t>("rows", where, {count, 2});
    rows.set_input<int32_t>("logit_rows", picks, {count});
    // The next tokens are picked greedily on the way, unused.
    rows.set_input<int32_t>("sampling", std::vector<int32_t>(static_cast<size_t>(8 * count), 0), {count, 8});
    rows.set_input<int32_t>("counters", std::vector<int32_t>(static_cast<size_t>(count), 0), {count});
    rows.set_input<int32_t>("pick_slots", std::vector<int32_t>(static_cast<size_t>(count), -1), {count});  // no seen set
    rows.execute();
    const std::vector<float> logits = rows.read_f32("logits");
    for (int64_t i = 0; i < count; ++i) {
      const std::span<const float> row(logits.data() + static_cast<size_t>(i) * vocab, vocab);
      const double top = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (const float v : row) sum += std::exp(static_cast<double>(v) - top);
      const int32_t target = tokens[static_cast<size_t>(from + i + 1)];
      const double lp = static_cast<double>(row[static_cast<size_t>(target)]) - top - std::log(sum);
      if (!std::isfinite(lp)) {
        throw std::runtime_error("the model's logits at position " + std::to_string(from + i) +
                                 " are not finite: were they NaN?");
      }
      out.push_back(lp);
    }
  }
  return out;
}

}  // namespace wgx::llm
