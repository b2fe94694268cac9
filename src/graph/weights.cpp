#include "graph/weights.h"

#include "graph/error.h"
#include "graph/text.h"

namespace wgx::graph {

uint32_t WeightStore::add(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  std::span<const uint8_t> view(owned->data(), owned->size());
  blobs_.push_back({std::move(owned), view});
  return static_cast<uint32_t>(blobs_.size() - 1);
}

uint32_t WeightStore::add_view(std::span<const uint8_t> bytes) {
  blobs_.push_back({nullptr, bytes});
  return static_cast<uint32_t>(blobs_.size() - 1);
}

std::span<const uint8_t> WeightStore::blob(uint32_t index) const {
  if (index >= blobs_.size()) {
    throw GraphError(str("weight blob ", index, " does not exist (", blobs_.size(), " blobs)"));
  }
  return blobs_[index].view;
}

std::span<const uint8_t> WeightStore::bytes(const WeightRef& ref) const {
  std::span<const uint8_t> b = blob(ref.blob);
  if (ref.offset > b.size() || ref.bytes > b.size() - ref.offset) {
    throw GraphError(str("weight range [", ref.offset, ", +", ref.bytes, ") is outside blob ",
                         ref.blob, " of ", b.size(), " bytes"));
  }
  return b.subspan(ref.offset, ref.bytes);
}

}  // namespace wgx::graph
