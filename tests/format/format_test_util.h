// Helpers for the .wgx tests: a model that uses every part of the format (the tiny attention
// block plus a node carrying every attribute kind, a shared weight and metadata), byte patching
// and locating fields by the names next to them.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../graph/tiny_model.h"
#include "format/layout.h"
#include "format/wgx_file.h"
#include "graph/op_schema.h"

namespace wgx::format::testing {

using namespace wgx::graph;

// An identity op whose attributes cover every kind, registered once per process.
inline void register_attr_op() {
  if (OpRegistry::global().find("test.all_attrs")) return;
  OpSchema s;
  s.name = "test.all_attrs";
  s.inputs = {{.name = "x"}};
  s.attrs = {AttrSpec::required("i", AttrKind::Int),     AttrSpec::required("f", AttrKind::Float),
             AttrSpec::required("s", AttrKind::String),  AttrSpec::required("is", AttrKind::Ints),
             AttrSpec::required("fs", AttrKind::Floats), AttrSpec::required("b", AttrKind::Bool),
             AttrSpec::required("d", AttrKind::Dims)};
  s.infer = [](const InferContext& ctx) { return InferResult::success(ctx.type(0)); };
  OpRegistry::global().add(std::move(s));
}

struct FormatModel {
  graph::testing::TinyModel m;
  graph::Graph graph;
  Metadata metadata = {{"arch", "tiny"}, {"vocab_size", "37"}, {"empty", ""}};

  FormatModel() {
    register_attr_op();
    GraphBuilder& b = m.b;
    const ValueId tagged = b.op1("test.all_attrs", {m.logits},
                                 {{"i", -7},
                                  {"f", 0.25},
                                  {"s", "text"},
                                  {"is", {3, -1, 4}},
                                  {"fs", std::vector<double>{1.5, -2.0}},
                                  {"b", true},
                                  {"d", Shape{1, m.seq, Dim::affine(2, m.pos, 1)}}},
                                 "tagged");
    b.output("tagged", tagged);
    // A second constant naming the same bytes as "embed": the file stores them once.
    b.constant("embed.alias", b.type(m.embed), b.graph().constants[0].data);
    graph = b.build();
  }
  const WeightStore& weights() const { return m.b.weights(); }
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A fresh path under the test temp folder.
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "wgx_" + std::to_string(::getpid()) + "_" + name;
}

inline uint64_t get_u64(const std::vector<uint8_t>& b, uint64_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}
inline void put_u64(std::vector<uint8_t>& b, uint64_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u32(std::vector<uint8_t>& b, uint64_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Position of the length prefix of the first (or last) encoded string `name` in the graph section.
inline uint64_t find_name(const std::vector<uint8_t>& file, const std::string& name,
                          bool last = false) {
  std::vector<uint8_t> pattern(4 + name.size());
  put_u32(pattern, 0, static_cast<uint32_t>(name.size()));
  std::memcpy(pattern.data() + 4, name.data(), name.size());
  const uint64_t end = kHeaderSize + get_u64(file, header::kGraphSizeAt);
  uint64_t found = UINT64_MAX;
  for (uint64_t at = kHeaderSize; at + pattern.size() <= end; ++at) {
    if (std::memcmp(file.data() + at, pattern.data(), pattern.size()) == 0) {
      found = at;
      if (!last) break;
    }
  }
  if (found == UINT64_MAX) throw std::runtime_error("name not found: " + name);
  return found;
}

// The graph with constant data refs cleared, to compare graphs whose weights live elsewhere.
inline Graph without_refs(Graph g) {
  for (Constant& c : g.constants) c.data = {};
  return g;
}

}  // namespace wgx::format::testing
