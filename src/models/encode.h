// Checkpoint tensors -> the bytes and graph type a constant takes: f32 or f16 dense, or q4gsw
// through ops::quantize_q4gsw. Checks that fail (a value f16 cannot hold, K not a multiple of
// the q4 group, a non-finite weight) throw ModelError naming the tensor and its file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "models/model.h"

namespace wgx::models {

struct Encoded {
  graph::TensorType type;
  std::vector<uint8_t> bytes;
};

// A source weight, read a block of rows at a time as f32 (rows: its first dimension, or 1 for a
// vector; cols: the elements of a row), so that a matrix is converted and quantized block by
// block on every core without the whole of it ever existing in f32. `read` may be called from
// several threads at once, for disjoint rows. `file` names where it came from, for messages.
struct SourceTensor {
  int64_t rows = 0;
  int64_t cols = 0;
  std::function<void(int64_t first_row, int64_t count, float* out)> read;
  std::string file;

  std::vector<float> values() const;  // every row, read on the host's cores
};

// Where a tensor came from, for messages: "model.layers.0.self_attn.q_proj.weight" and its file.
struct Origin {
  std::string tensor;
  std::string file;
};

// Dense f32 or f16 elements with `shape`.
Encoded encode_dense(const std::vector<float>& values, std::vector<int64_t> shape, graph::DType dtype,
                     const Origin& origin);

// The type encode_matrix gives a [rows, cols] matrix, or its ModelError for one it cannot take.
graph::TensorType matrix_type(int64_t rows, int64_t cols, const LoadOptions& options, graph::DType dense_dtype,
                              const Origin& origin);

// A [rows, cols] matrix (product weight or embedding table): q4gsw when the options say Q4
// (quantized from blocks of rows as they are read), otherwise dense in `dense_dtype`.
Encoded encode_matrix(const SourceTensor& matrix, const LoadOptions& options, graph::DType dense_dtype,
                      const Origin& origin);

}  // namespace wgx::models
