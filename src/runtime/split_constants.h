// Weights larger than one storage binding, read in row chunks. WebGPU lets one binding span at
// most maxStorageBufferBindingSize bytes (128 MiB in many browsers), and a vocabulary's table is
// often larger (Llama-3.2-1B's embedding: 147 MB in q4, 525 MB in f16). Such a constant becomes
// chunks of its rows, each a constant of its own that fits one binding, and the nodes that read
// it read the chunks instead:
//   embedding(T, ids)                     e_0 + e_1 + ..., e_c = embedding(T_c, ids - first_c):
//                                         an id outside a chunk gives a zero row, so each id's
//                                         row comes from one chunk and the others add zeros;
//   linear(x, W[, b])                     cat(linear(x, W_c[, b_c]) ..., dim -1);
//   add_rms_norm_linear(x, r, w, W[, b])  the same per chunk; x + r is the first chunk's.
// Chunk c of a constant named N is the constant "N[first:end]", and its nodes are labelled
// "<label>[first:end]"; the node that combines them keeps the original label and output. Each
// chunk node takes the routes the whole would take (the same kernels at a smaller size). A graph
// with no constant over the limit is left as it is: nothing is added where nothing is needed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/weights.h"

namespace wgx::runtime {

struct ConstantSplit {
  uint32_t constant = 0;      // index in Graph::constants (the first chunk keeps it)
  std::string name;           // the constant's name before the split
  graph::TensorType type;     // its type before the split ([rows, cols])
  uint64_t bytes = 0;         // its storage on the device
  uint64_t limit = 0;         // the binding limit it was over
  std::vector<int64_t> rows;  // rows of each chunk, in order
};

// Device bytes of a constant of `type` (a static shape): what Program allocates for it.
uint64_t constant_storage_bytes(const graph::TensorType& type, bool shader_f16);

// The constants of a validated graph whose storage is over `limit` bytes, each with as few
// chunks as fit under it, of equal rows (a multiple of 256: whole column tiles of every product
// kernel) but the last. Where one cannot be read in chunks (not a matrix, one row over the
// limit, a reader other than those above), throws an OutOfMemory gpu::GpuError naming it.
std::vector<ConstantSplit> plan_splits(const graph::Graph& graph, uint64_t limit, bool shader_f16);

// Rewrites `graph` so that each split's constant is read in its chunks (`rows` may be any
// positive counts that add up to the constant's rows). Returns `weights` with what the chunks
// need: a chunk of a dense constant is a range of its blob; one of a q4gsw constant is a new
// blob, as its nibbles and its scales are two ranges.
graph::WeightStore split_constants(graph::Graph& graph, const graph::WeightStore& weights,
                                   std::span<const ConstantSplit> splits);

// The same rewrite for weights that come later (Program::LaterWeights): each chunk constant's
// data ref holds only its size, and chunk_pieces() says where its bytes come from. Chunk 0 keeps
// the constant's index; the other chunks are appended to Graph::constants in the order of
// `splits` and of their rows (in both forms).
void split_constants(graph::Graph& graph, std::span<const ConstantSplit> splits);

// Bytes [from, from + size) of a whole constant of `type` are bytes [to, to + size) of its chunk of
// rows [first, first + rows): one piece for a dense constant, two (nibbles, scales) for q4gsw.
struct ChunkPiece {
  uint64_t from = 0, to = 0, size = 0;
};
std::vector<ChunkPiece> chunk_pieces(const graph::TensorType& type, int64_t first, int64_t rows);

// "model.embed_tokens.weight q4gsw<g32,f16>[128256, 2048] (141.0 MiB, over the 128.0 MiB
// binding limit): 2 row chunks [0:64256] [64256:128256]"
std::string describe(const ConstantSplit& split);

}  // namespace wgx::runtime
