// Where constants' bytes live while a model is built or loaded: a list of blobs, each either owned
// (a vector the store keeps) or borrowed (a span the caller keeps alive, e.g. a memory-mapped
// checkpoint or .wgx file). A Constant's WeightRef names a blob and a byte range in it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/graph.h"

namespace wgx::graph {

class WeightStore {
 public:
  // Returns the new blob's index.
  uint32_t add(std::vector<uint8_t> bytes);
  uint32_t add_view(std::span<const uint8_t> bytes);

  size_t blob_count() const { return blobs_.size(); }
  std::span<const uint8_t> blob(uint32_t index) const;
  // The bytes `ref` names; throws GraphError when the blob or the range does not exist.
  std::span<const uint8_t> bytes(const WeightRef& ref) const;

 private:
  struct Blob {
    std::shared_ptr<const std::vector<uint8_t>> owned;  // shared: copying a store stays cheap
    std::span<const uint8_t> view;
  };
  std::vector<Blob> blobs_;
};

}  // namespace wgx::graph
