// Fuzzes the .wgx reader, format::parse_wgx, on bytes in memory.
//
// An input that starts with the magic "WGX\0" is a whole file. Any other input is a graph section,
// which the target puts into a file with a well-formed header and a 64 KiB weight section, so that
// mutations reach the graph decoder and graph validation instead of stopping at the header's size
// checks (a graph section cannot start with the magic: as a metadata count it could not fit).
//
// The reader must reject a malformed file with a FormatError. What it accepts must be usable (the
// constants' bytes lie in the file, the graph prints) and must survive a round trip: written back
// and read again, and written once more, it gives the same bytes.
#include <algorithm>
#include <cstring>
#include <optional>

#include "format/layout.h"
#include "format/wgx_file.h"
#include "fuzz_util.h"
#include "graph/print.h"

namespace {

using namespace wgx;

constexpr uint64_t kWeightBytes = 64 * 1024;  // room for the weights of every graph in the seed corpus

void put(std::vector<uint8_t>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A file around `section`, laid out as the writer lays one out; the weights are a byte pattern.
std::vector<uint8_t> wrap_graph_section(std::span<const uint8_t> section) {
  const uint64_t weights_offset = format::round_up(format::kHeaderSize + section.size(), format::kWeightSectionAlign);
  std::vector<uint8_t> file(format::kMagic, format::kMagic + 4);
  put(file, format::kVersion, 4);
  put(file, format::kHeaderSize, 4);
  put(file, 0, 4);  // flags
  put(file, format::kHeaderSize, 8);
  put(file, section.size(), 8);
  put(file, weights_offset, 8);
  put(file, kWeightBytes, 8);
  put(file, weights_offset + kWeightBytes, 8);
  put(file, 0, 8);  // reserved
  file.insert(file.end(), section.begin(), section.end());
  file.resize(weights_offset, 0);
  static const std::vector<uint8_t> weights = [] {
    std::vector<uint8_t> w(kWeightBytes);
    for (uint64_t i = 0; i < kWeightBytes; ++i) w[i] = static_cast<uint8_t>(i * 7 + 1);
    return w;
  }();
  file.insert(file.end(), weights.begin(), weights.end());
  return file;
}

std::vector<uint8_t> write(const format::WgxFile& f, const char* what) {
  try {
    return format::write_wgx_bytes(f.graph(), f.weights(), f.metadata());
  } catch (const format::FormatError& e) {
    fuzz::fail(std::string(what) + ": the writer refuses a graph the reader accepted: " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  std::vector<uint8_t> wrapped;
  std::span<const uint8_t> bytes = input;
  if (size < 4 || std::memcmp(data, format::kMagic, 4) != 0) {
    wrapped = wrap_graph_section(input);
    bytes = wrapped;
  }

  std::optional<format::WgxFile> file;
  try {
    file = format::parse_wgx(bytes);
  } catch (const format::FormatError&) {
    return 0;
  }

  // Every constant's bytes lie inside the weight section, where its WeightRef says.
  const std::span<const uint8_t> section = file->weight_section();
  for (size_t i = 0; i < file->graph().constants.size(); ++i) {
    const std::span<const uint8_t> c = file->constant_data(i);
    const uint64_t offset = file->graph().constants[i].data.offset;
    fuzz::check(offset <= section.size() && c.size() <= section.size() - offset &&
                    std::equal(c.begin(), c.end(), section.begin() + static_cast<ptrdiff_t>(offset)),
                "a constant's bytes are not where its reference says");
  }
  (void)graph::to_string(file->graph());

  const std::vector<uint8_t> first = write(*file, "writing the file read");
  std::optional<format::WgxFile> again;
  try {
    again = format::parse_wgx(first);
  } catch (const format::FormatError& e) {
    fuzz::fail(std::string("the reader refuses what the writer wrote from a file it accepted: ") + e.what());
  }
  fuzz::check(again->metadata() == file->metadata(), "the metadata changed in a round trip");
  fuzz::check(again->graph().nodes.size() == file->graph().nodes.size(), "the node count changed in a round trip");
  const std::vector<uint8_t> second = write(*again, "writing the file written");
  fuzz::check(first == second, "writing a file read back does not give the same bytes");
  return 0;
}
