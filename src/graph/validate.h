// Graph validation: everything the runtime relies on, checked once, with an error that names the
// node (index, op, label) or the graph part (input, constant, buffer, mutation) and what is wrong.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/op_schema.h"

namespace wgx::graph {

// Throws GraphError on the first problem:
//  - syms: empty or repeated names, bad ranges;
//  - values: bad kind/dtype/rank, dims outside [0, 2^31-1] over their sym's range, bad quant
//    params, tensors whose byte size overflows;
//  - definitions: an input, constant or buffer naming a bad or already defined value, repeated
//    names, constants whose byte size differs from dtype * shape, symbolic constant or buffer
//    shapes;
//  - nodes: unknown op, a value used before its definition or never defined, a value defined twice,
//    output types that differ from what the op's schema infers (dtype or shape);
//  - outputs naming nothing; mutations whose target is not a mutable buffer, whose value has
//    another type or is not a node output, a buffer mutated twice, an also_output flag that
//    disagrees with Graph::outputs, or a read of the buffer's old value after the mutating node;
//  - a tensor value that nothing defines, even if nothing uses it (the runtime plans memory for
//    every tensor value).
void validate(const Graph& graph, const OpRegistry& registry = OpRegistry::global());

// "node 5 'layers.0.attn.q_proj' (linear)", or "node 5 (linear)" without a label.
std::string describe_node(const Graph& graph, size_t index);
std::string describe_node(size_t index, std::string_view op, std::string_view label);

}  // namespace wgx::graph
