// Checkpoint tensors -> the bytes and graph type a constant takes: f32 or f16 dense, or q4gsw
// through ops::quantize_q4gsw. Checks that fail (a value f16 cannot hold, K not a multiple of
// the q4 group, a non-finite weight) throw ModelError naming the tensor and its file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "models/model.h"

namespace wgx::models {

struct Encoded {
  graph::TensorType type;
  std::vector<uint8_t> bytes;
};

// Where a tensor came from, for messages: "model.layers.0.self_attn.q_proj.weight" and its file.
struct Origin {
  std::string tensor;
  std::string file;
};

// Dense f32 or f16 elements with `shape`.
Encoded encode_dense(const std::vector<float>& values, std::vector<int64_t> shape, graph::DType dtype,
                     const Origin& origin);

// A [rows, cols] matrix (product weight or embedding table): q4gsw when the options say Q4,
// otherwise dense in `dense_dtype`.
Encoded encode_matrix(const std::vector<float>& values, int64_t rows, int64_t cols, const LoadOptions& options,
                      graph::DType dense_dtype, const Origin& origin);

}  // namespace wgx::models
