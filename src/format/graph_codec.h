// The graph section: the compact binary form of a graph::Graph plus the metadata table.
// docs/file-format.md lists the tables and fields in order.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace wgx::format {

// Model configuration strings (architecture, hyperparameters, tokenizer hints), sorted by key.
using Metadata = std::map<std::string, std::string>;

// Encodes the graph section. Constants' WeightRefs must already point into the weight section
// (blob 0, section-relative offsets).
std::vector<uint8_t> encode_graph(const graph::Graph& graph, const Metadata& metadata);

struct DecodedGraph {
  graph::Graph graph;
  Metadata metadata;
};

// Decodes a graph section found at `file_offset`, checking every code, count, index, string and
// weight range (against `weights_size`) as it goes. Throws FormatError. The result is not yet
// validated as a graph.
DecodedGraph decode_graph(std::span<const uint8_t> section, uint64_t file_offset,
                          uint64_t weights_size);

}  // namespace wgx::format
