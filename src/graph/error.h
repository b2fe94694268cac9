// The graph layer's one error type. Everything that rejects a graph (a builder call, an op schema,
// validation) throws GraphError; the message names the node (index, op, label) where there is one.
#pragma once

#include <stdexcept>
#include <string>

namespace wgx::graph {

class GraphError : public std::runtime_error {
 public:
  explicit GraphError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace wgx::graph
