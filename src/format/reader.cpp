#include <cstring>
#include <stdexcept>

#include "format/bytes.h"
#include "format/layout.h"
#include "format/mapped_file.h"
#include "format/wgx_file.h"
#include "graph/checked.h"
#include "graph/error.h"
#include "graph/op_schema.h"
#include "graph/text.h"
#include "graph/validate.h"

namespace wgx::format {

using graph::str;

namespace {

// Reads and checks the header against the real file size (`real_size`; for a file that arrives
// as a stream, the size it claims). Sizes are added with overflow checks, so no combination of
// values can point outside the file.
WgxLayout read_header(std::span<const uint8_t> file, uint64_t real_size) {
  if (file.size() < kHeaderSize) {
    throw FormatError(
        {"header", "", "", 0},
        str("the file is ", file.size(), " bytes, shorter than the ", kHeaderSize, "-byte header"));
  }
  Cursor c(file.first(kHeaderSize), 0, "header");
  if (std::memcmp(file.data(), kMagic, 4) != 0)
    c.fail("magic", "not a .wgx file (the magic is not \"WGX\\0\")");
  c.u32("magic");
  WgxLayout h;
  h.version = c.u32("version");
  if (h.version != kVersion) {
    c.fail_at(header::kVersionAt, "version",
              str("version ", h.version, " is not supported (this reader reads ", kVersion, ")"));
  }
  const uint32_t header_size = c.u32("header size");
  if (header_size != kHeaderSize) {
    c.fail_at(header::kHeaderSizeAt, "header size",
              str("header size ", header_size, " is not ", kHeaderSize));
  }
  const uint32_t flags = c.u32("flags");
  if (flags != 0)
    c.fail_at(header::kFlagsAt, "flags", str("unknown flags ", flags, " (version 1 defines none)"));
  h.graph_offset = c.u64("graph offset");
  h.graph_size = c.u64("graph size");
  h.weights_offset = c.u64("weights offset");
  h.weights_size = c.u64("weights size");
  h.file_size = c.u64("file size");
  if (c.u64("reserved") != 0)
    c.fail_at(header::kReservedAt, "reserved", "reserved bytes are not zero");

  if (h.file_size != real_size) {
    c.fail_at(header::kFileSizeAt, "file size",
              str("the header says ", h.file_size, " bytes but the file has ", real_size,
                  " (truncated or appended to?)"));
  }
  if (h.graph_offset != kHeaderSize) {
    c.fail_at(
        header::kGraphOffsetAt, "graph offset",
        str("graph offset ", h.graph_offset, " is not ", kHeaderSize, " (right after the header)"));
  }
  auto graph_end = graph::checked_add_u(h.graph_offset, h.graph_size);
  if (!graph_end || *graph_end > real_size) {
    c.fail_at(header::kGraphSizeAt, "graph size",
              str("graph size ", h.graph_size, " runs past the end of the file"));
  }
  if (h.weights_offset % kWeightSectionAlign != 0) {
    c.fail_at(
        header::kWeightsOffsetAt, "weights offset",
        str("weights offset ", h.weights_offset, " is not a multiple of ", kWeightSectionAlign));
  }
  if (h.weights_offset < *graph_end) {
    c.fail_at(header::kWeightsOffsetAt, "weights offset",
              str("weights offset ", h.weights_offset, " overlaps the graph section (ends at ",
                  *graph_end, ")"));
  }
  auto weights_end = graph::checked_add_u(h.weights_offset, h.weights_size);
  if (!weights_end || *weights_end != real_size) {
    c.fail_at(header::kWeightsSizeAt, "weights size",
              str("the weight section [", h.weights_offset, ", +", h.weights_size,
                  ") does not end at the end of the file (", real_size, ")"));
  }
  return h;
}

// Fills in attribute defaults so that every loaded graph looks like a built one. Problems are
// left for validation, which reports them with the node.
void resolve_attrs(graph::Graph& g) {
  const graph::OpRegistry& registry = graph::OpRegistry::global();
  for (graph::Node& node : g.nodes) {
    const graph::OpSchema* schema = registry.find(node.op);
    if (!schema) continue;
    try {
      node.attrs = schema->resolve_attrs(node.attrs);
    } catch (const graph::GraphError&) {
    }
  }
}

}  // namespace

WgxLayout read_wgx_layout(std::span<const uint8_t> first_bytes) {
  if (first_bytes.size() < kHeaderSize) return read_header(first_bytes, first_bytes.size());  // throws
  uint64_t claimed = 0;  // the file size the header claims (little-endian, as every field)
  for (int i = 7; i >= 0; --i) claimed = (claimed << 8) | first_bytes[header::kFileSizeAt + static_cast<size_t>(i)];
  return read_header(first_bytes, claimed);
}

// The header's and graph section's part of parsing (declared a friend of WgxFile).
WgxFile parse_head(std::span<const uint8_t> bytes, const WgxLayout& h) {
  DecodedGraph decoded =
      decode_graph(bytes.subspan(h.graph_offset, h.graph_size), h.graph_offset, h.weights_size);
  resolve_attrs(decoded.graph);
  try {
    graph::validate(decoded.graph);
  } catch (const graph::GraphError& e) {
    throw FormatError({"graph", "", "", std::nullopt}, str("invalid graph: ", e.what()));
  }
  WgxFile f;
  f.graph_ = std::move(decoded.graph);
  f.metadata_ = std::move(decoded.metadata);
  f.version_ = h.version;
  f.layout_ = h;
  return f;
}

WgxFile parse_wgx(std::span<const uint8_t> bytes) {
  const WgxLayout h = read_header(bytes, bytes.size());
  WgxFile f = parse_head(bytes, h);
  f.weights_.add_view(bytes.subspan(h.weights_offset, h.weights_size));
  return f;
}

WgxFile parse_wgx_head(std::span<const uint8_t> head) {
  const WgxLayout h = read_wgx_layout(head);
  if (head.size() < h.graph_offset + h.graph_size) {
    throw FormatError({"graph", "", "", std::nullopt},
                      str("the graph section ends at byte ", h.graph_offset + h.graph_size, ", past the ",
                          head.size(), " bytes given"));
  }
  return parse_head(head, h);
}

WgxFile open_wgx(const std::string& path) {
  auto mapping = std::make_shared<const MappedFile>(path);
  try {
    WgxFile f = parse_wgx(mapping->bytes());
    f.mapping_ = std::move(mapping);
    return f;
  } catch (const FormatError& e) {
    throw FormatError(e.site(), e.detail(), path);
  }
}

std::span<const uint8_t> WgxFile::constant_data(size_t index) const {
  if (index >= graph_.constants.size()) {
    throw std::out_of_range(
        str("constant ", index, " does not exist (", graph_.constants.size(), " constants)"));
  }
  return weights_.bytes(graph_.constants[index].data);
}

std::span<const uint8_t> WgxFile::constant_data(std::string_view name) const {
  for (size_t i = 0; i < graph_.constants.size(); ++i) {
    if (graph_.constants[i].name == name) return constant_data(i);
  }
  throw std::out_of_range(str("no constant named '", name, "'"));
}

}  // namespace wgx::format
