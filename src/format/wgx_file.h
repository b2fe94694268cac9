// Reading and writing .wgx model files: a header, a graph section (the IR and a metadata table)
// and a page-aligned weight section that is memory-mapped, so weights reach the GPU without a
// copy through the heap. docs/file-format.md describes the layout.
//
//   format::write_wgx("model.wgx", builder.build(), builder.weights(), {{"arch", "llama"}});
//   format::WgxFile f = format::open_wgx("model.wgx");
//   f.graph();            // validated graph::Graph
//   f.constant_data(3);   // the bytes of constant 3, inside the mapping
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/error.h"
#include "format/graph_codec.h"
#include "graph/graph.h"
#include "graph/weights.h"

namespace wgx::format {

class MappedFile;

// Where a .wgx file's sections are, from its header.
struct WgxLayout {
  uint32_t version = 0;
  uint64_t graph_offset = 0;
  uint64_t graph_size = 0;
  uint64_t weights_offset = 0;
  uint64_t weights_size = 0;
  uint64_t file_size = 0;
  uint64_t head_size() const { return graph_offset + graph_size; }  // the bytes parse_wgx_head needs
};

// A loaded .wgx file. Copies share the mapping, which lives as long as the last copy.
class WgxFile {
 public:
  const graph::Graph& graph() const { return graph_; }
  const Metadata& metadata() const { return metadata_; }
  uint32_t version() const { return version_; }

  const WgxLayout& layout() const { return layout_; }
  // The weight section; every constant's WeightRef points into it as blob 0 of weights() (empty
  // for a file parsed by parse_wgx_head: the weights have not arrived).
  std::span<const uint8_t> weight_section() const { return weights_.blob(0); }
  const graph::WeightStore& weights() const { return weights_; }
  // The bytes of constant `index` (in graph().constants order), or of the constant named `name`.
  std::span<const uint8_t> constant_data(size_t index) const;
  std::span<const uint8_t> constant_data(std::string_view name) const;

 private:
  friend WgxFile parse_head(std::span<const uint8_t> bytes, const WgxLayout& layout);
  friend WgxFile parse_wgx(std::span<const uint8_t> bytes);
  friend WgxFile open_wgx(const std::string& path);

  std::shared_ptr<const MappedFile> mapping_;  // null when parsed from caller-owned bytes
  graph::Graph graph_;
  Metadata metadata_;
  graph::WeightStore weights_;
  uint32_t version_ = 0;
  WgxLayout layout_;
};

// Maps `path` read-only and parses it. Checks everything (header, every count, offset, size,
// code, index and alignment, then graph validation) and throws FormatError naming the file, the
// section, the item and the field that are wrong. The file must not be truncated while mapped.
WgxFile open_wgx(const std::string& path);
// The same for bytes in memory, which must outlive the result.
WgxFile parse_wgx(std::span<const uint8_t> bytes);

// For a file that arrives as a stream (a download): the layout from its first 64 bytes, checked
// as far as they allow (the sizes against the file size they claim), and then the header and graph
// section alone (at least layout.head_size() bytes), checked as parse_wgx checks them, without
// the weights: they are written to the GPU as they arrive (runtime::Program::write_constant).
WgxLayout read_wgx_layout(std::span<const uint8_t> first_bytes);
WgxFile parse_wgx_head(std::span<const uint8_t> head);

// Validates `graph` and writes it with the constants' bytes (looked up in `weights`) to `path`
// atomically: a temporary file in the same folder, flushed, then renamed over `path`. Constants
// with the same WeightRef share one copy. The output depends only on the arguments, so writing
// a file read back with open_wgx gives identical bytes. Throws FormatError.
void write_wgx(const std::string& path, const graph::Graph& graph,
               const graph::WeightStore& weights, const Metadata& metadata = {});
// The whole file in memory (for tests and small models).
std::vector<uint8_t> write_wgx_bytes(const graph::Graph& graph, const graph::WeightStore& weights,
                                     const Metadata& metadata = {});

}  // namespace wgx::format
