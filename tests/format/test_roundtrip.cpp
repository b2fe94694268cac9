// Writing and reading .wgx files: identical graphs, byte-identical re-writes, alignment, shared
// weights, atomic writes and file-level errors.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "format_test_util.h"
#include "graph/validate.h"

namespace wgx::format::testing {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(FormatRoundTrip, FileGivesTheSameGraph) {
  FormatModel fm;
  const std::string path = temp_path("roundtrip.wgx");
  write_wgx(path, fm.graph, fm.weights(), fm.metadata);
  const WgxFile f = open_wgx(path);
  EXPECT_EQ(f.version(), kVersion);
  EXPECT_EQ(without_refs(f.graph()), without_refs(fm.graph));
  EXPECT_EQ(f.metadata(), fm.metadata);
  ASSERT_EQ(f.graph().constants.size(), fm.graph.constants.size());
  for (size_t i = 0; i < fm.graph.constants.size(); ++i) {
    SCOPED_TRACE(fm.graph.constants[i].name);
    const auto want = fm.weights().bytes(fm.graph.constants[i].data);
    const auto got = f.constant_data(i);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()));
    // Mapped from a page-aligned section at 256-byte offsets: ready for a zero-copy upload.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data()) % kTensorAlign, 0u);
    EXPECT_EQ(f.graph().constants[i].data.offset % kTensorAlign, 0u);
  }
  EXPECT_EQ(f.constant_data("embed").data(), f.constant_data("embed.alias").data());  // stored once
  EXPECT_THROW(f.constant_data("missing"), std::out_of_range);
  EXPECT_THROW(f.constant_data(99), std::out_of_range);
  EXPECT_NO_THROW(graph::validate(f.graph()));
  ::unlink(path.c_str());
}

TEST(FormatRoundTrip, RewriteIsByteIdentical) {
  FormatModel fm;
  const std::vector<uint8_t> first = write_wgx_bytes(fm.graph, fm.weights(), fm.metadata);
  const WgxFile parsed = parse_wgx(first);
  const std::vector<uint8_t> second =
      write_wgx_bytes(parsed.graph(), parsed.weights(), parsed.metadata());
  EXPECT_EQ(first, second);
  const std::string path = temp_path("identical.wgx");
  write_wgx(path, parsed.graph(), parsed.weights(), parsed.metadata());
  EXPECT_EQ(read_bytes(path), first);
  // And once more from the mapped file.
  const WgxFile mapped = open_wgx(path);
  EXPECT_EQ(write_wgx_bytes(mapped.graph(), mapped.weights(), mapped.metadata()), first);
  ::unlink(path.c_str());
}

TEST(FormatRoundTrip, HeaderLayout) {
  FormatModel fm;
  const std::vector<uint8_t> b = write_wgx_bytes(fm.graph, fm.weights(), fm.metadata);
  EXPECT_EQ(std::memcmp(b.data(), "WGX\0", 4), 0);
  EXPECT_EQ(b[header::kVersionAt], kVersion);
  EXPECT_EQ(get_u64(b, header::kGraphOffsetAt), kHeaderSize);
  const uint64_t graph_end = kHeaderSize + get_u64(b, header::kGraphSizeAt);
  const uint64_t weights_at = get_u64(b, header::kWeightsOffsetAt);
  EXPECT_EQ(weights_at % kWeightSectionAlign, 0u);
  EXPECT_EQ(weights_at, round_up(graph_end, kWeightSectionAlign));
  EXPECT_EQ(get_u64(b, header::kFileSizeAt), b.size());
  EXPECT_EQ(weights_at + get_u64(b, header::kWeightsSizeAt), b.size());
  for (uint64_t i = graph_end; i < weights_at; ++i) ASSERT_EQ(b[i], 0) << i;  // zero padding
}

TEST(FormatRoundTrip, EmptyGraph) {
  GraphBuilder b;
  const std::vector<uint8_t> bytes = write_wgx_bytes(b.build(), b.weights());
  EXPECT_EQ(bytes.size(), kWeightSectionAlign);
  const WgxFile f = parse_wgx(bytes);
  EXPECT_TRUE(f.graph().nodes.empty());
  EXPECT_TRUE(f.weight_section().empty());
}

TEST(FormatWrite, RejectsInvalidGraphsAndMissingWeights) {
  FormatModel fm;
  Graph bad = fm.graph;
  bad.nodes[2].op = "no_such_op";
  const std::string msg = error_of([&] { write_wgx_bytes(bad, fm.weights()); });
  EXPECT_NE(msg.find("graph section"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot write an invalid graph: node 2 'attn.q' (no_such_op): unknown op"),
            std::string::npos)
      << msg;
  Graph moved = fm.graph;
  moved.constants[1].data.offset = 1 << 20;
  const std::string weights = error_of([&] { write_wgx_bytes(moved, fm.weights()); });
  EXPECT_NE(weights.find("weights section, constant 1 'norm.weight'"), std::string::npos)
      << weights;
}

bool has_leftovers(const std::string& dir, const std::string& prefix) {
  DIR* d = ::opendir(dir.c_str());
  bool found = false;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    found = found || (name.rfind(prefix, 0) == 0 && name.find(".tmp.") != std::string::npos);
  }
  ::closedir(d);
  return found;
}

TEST(FormatWrite, AtomicReplaceAndNoLeftovers) {
  FormatModel fm;
  const std::string path = temp_path("atomic.wgx");
  write_bytes(path, {1, 2, 3});
  write_wgx(path, fm.graph, fm.weights(), fm.metadata);
  EXPECT_EQ(read_bytes(path), write_wgx_bytes(fm.graph, fm.weights(), fm.metadata));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  const std::string name = path.substr(path.rfind('/') + 1);
  EXPECT_FALSE(has_leftovers(::testing::TempDir(), name));
  const std::string missing = temp_path("no/such/dir/model.wgx");
  const std::string msg = error_of([&] { write_wgx(missing, fm.graph, fm.weights()); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("file section"), std::string::npos) << msg;
  ::unlink(path.c_str());
}

TEST(FormatOpen, FileLevelErrors) {
  const std::string missing = temp_path("missing.wgx");
  EXPECT_NE(error_of([&] { open_wgx(missing); }).find("cannot open"), std::string::npos);
  EXPECT_NE(error_of([&] { open_wgx(::testing::TempDir()); }).find("not a regular file"),
            std::string::npos);
  const std::string empty = temp_path("empty.wgx");
  write_bytes(empty, {});
  const std::string msg = error_of([&] { open_wgx(empty); });
  EXPECT_NE(msg.find("'" + empty + "': header section"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the file is 0 bytes"), std::string::npos) << msg;
  ::unlink(empty.c_str());
}

}  // namespace
}  // namespace wgx::format::testing
