// How well a model predicts a text: each token's log-probability given the tokens before it, from
// a rows graph (models::build_rows_decoder) whose "logit_rows" input picks several positions'
// logits a step. The tokens are fed from position 0 of slot 0 in steps of up to the graph's picks
// (every row of a step picked); each row's log-softmax is taken in double on the host.
//
//   const std::vector<double> lp = llm::log_probs(rows_program, batch_limits(graph), ids);
//   // lp[i] = log p(ids[i + 1] | ids[0..i])
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "llm/batch.h"
#include "runtime/program.h"

namespace wgx::llm {

// tokens.size() - 1 values. std::invalid_argument for fewer than 2 tokens or an id outside the
// vocabulary; ContextFullError past a slot's tokens. Uses (and overwrites) slot 0 of the caches.
std::vector<double> log_probs(runtime::Program& rows, const BatchLimits& limits, std::span<const int32_t> tokens);

}  // namespace wgx::llm
