// Text form of a graph, for `wgx inspect` and test failures. One line per item:
//   sym seq_len in [1, 128]
//   input %1 "tokens" : i32[1, seq_len]
//   const %2 "embed" : f32[32000, 2048] @ blob 0 [0, +262144000)
//   buffer %3 "k_cache" : f16[1, 8, 2048, 64] init zeros
//   %4 = scalar 0.125 : f32
//   %5 = embedding(%2, %1) : f32[1, seq_len, 2048]
//   %7 = softmax(%6) {dim=-1} : f32[1, 32, seq_len, seq_len]  # layers.0.attn
//   output "logits" = %9
//   mutate "k_cache" <- %8 (also output)
#pragma once

#include <string>

#include "graph/graph.h"

namespace wgx::graph {

std::string to_string(const Graph& graph);
// The node's line alone (without the trailing newline).
std::string node_to_string(const Graph& graph, size_t index);

}  // namespace wgx::graph
