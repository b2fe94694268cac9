// The corruption corpus: truncations, byte flips, huge values and targeted bad fields, generated
// deterministically from one valid file. Every damaged file must be rejected with a FormatError
// that has a message, or (when the damage happens to leave a valid file, e.g. in a name) load as
// a graph that passes validation. No crash, and no allocation sized by a damaged count: this
// binary counts the largest allocation it makes.
#include <gtest/gtest.h>

#include "allocation_probe.h"
#include "format/graph_codec.h"
#include "format_test_util.h"
#include "graph/validate.h"

namespace wgx::format::testing {
namespace {

enum class Outcome { Rejected, Accepted };

// Parses `bytes`; a rejection must carry a message, an acceptance must be a valid graph that
// survives another write and read.
Outcome check(const std::vector<uint8_t>& bytes, const std::string& what) {
  try {
    const WgxFile f = parse_wgx(bytes);
    graph::validate(f.graph());
    const std::vector<uint8_t> again = write_wgx_bytes(f.graph(), f.weights(), f.metadata());
    parse_wgx(again);
    return Outcome::Accepted;
  } catch (const FormatError& e) {
    EXPECT_GT(std::string(e.what()).size(), 20u) << what;
    EXPECT_FALSE(e.detail().empty()) << what;
    return Outcome::Rejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a FormatError: " << e.what();
    return Outcome::Rejected;
  }
}

// The message of the expected rejection.
std::string reject(const std::vector<uint8_t>& bytes) {
  try {
    parse_wgx(bytes);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "<accepted>";
}

class FormatCorruption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    FormatModel fm;
    base_ = new std::vector<uint8_t>(write_wgx_bytes(fm.graph, fm.weights(), fm.metadata));
  }
  static void TearDownTestSuite() { delete base_; }
  void TearDown() override {
    // The valid file is ~40 KB; nothing may allocate more than a few times that.
    EXPECT_LT(largest_allocation(), size_t{1} << 20);
  }

  const std::vector<uint8_t>& base() const { return *base_; }
  uint64_t graph_end() const { return kHeaderSize + get_u64(base(), header::kGraphSizeAt); }
  uint64_t weights_at() const { return get_u64(base(), header::kWeightsOffsetAt); }

  static std::vector<uint8_t>* base_;
};
std::vector<uint8_t>* FormatCorruption::base_ = nullptr;

TEST_F(FormatCorruption, BaseFileIsValid) { EXPECT_EQ(check(base(), "base"), Outcome::Accepted); }

TEST_F(FormatCorruption, EveryTruncation) {
  for (size_t len = 0; len < base().size(); ++len) {
    std::vector<uint8_t> cut(base().begin(), base().begin() + static_cast<ptrdiff_t>(len));
    ASSERT_EQ(check(cut, "truncated to " + std::to_string(len)), Outcome::Rejected) << len;
  }
}

TEST_F(FormatCorruption, GraphSectionCutAtEveryLength) {
  // The header agrees with the shorter section, so the decoder itself meets the end early.
  for (uint64_t len = 0; len + kHeaderSize < graph_end(); ++len) {
    std::vector<uint8_t> b = base();
    put_u64(b, header::kGraphSizeAt, len);
    ASSERT_EQ(check(b, "graph size " + std::to_string(len)), Outcome::Rejected) << len;
  }
}

TEST_F(FormatCorruption, WeightSectionCut) {
  const uint64_t weights_size = get_u64(base(), header::kWeightsSizeAt);
  for (uint64_t len = 0; len < weights_size; len += 97) {
    std::vector<uint8_t> b(base().begin(),
                           base().begin() + static_cast<ptrdiff_t>(weights_at() + len));
    put_u64(b, header::kWeightsSizeAt, len);
    put_u64(b, header::kFileSizeAt, b.size());
    const std::string msg = reject(b);
    ASSERT_NE(msg.find("is outside the " + std::to_string(len) + "-byte weight section"),
              std::string::npos)
        << msg;
  }
}

TEST_F(FormatCorruption, ByteFlipsInHeaderAndGraph) {
  size_t accepted = 0;
  for (uint64_t at = 0; at < graph_end(); ++at) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> b = base();
      b[at] ^= mask;
      if (check(b, "flip " + std::to_string(mask) + " at " + std::to_string(at)) ==
          Outcome::Accepted)
        ++accepted;
    }
  }
  // Only flips inside names, labels, metadata and float attributes can leave a valid file.
  EXPECT_LT(accepted, graph_end());
}

TEST_F(FormatCorruption, HugeValuesEverywhere) {
  for (uint64_t at = 0; at + 4 <= graph_end(); ++at) {
    for (uint32_t v : {0xffffffffu, 0x80000000u, 0x7fffffffu}) {
      std::vector<uint8_t> b = base();
      put_u32(b, at, v);
      check(b, "u32 " + std::to_string(v) + " at " + std::to_string(at));
    }
  }
  for (uint64_t at = 0; at + 8 <= graph_end(); at += 1) {
    std::vector<uint8_t> b = base();
    put_u64(b, at, UINT64_MAX);
    check(b, "u64 max at " + std::to_string(at));
  }
}

TEST_F(FormatCorruption, HeaderFields) {
  auto patched = [&](uint64_t at, uint64_t v, int width = 8) {
    std::vector<uint8_t> b = base();
    if (width == 8)
      put_u64(b, at, v);
    else
      put_u32(b, at, static_cast<uint32_t>(v));
    return reject(b);
  };
  EXPECT_NE(patched(header::kMagicAt, 0x46445025, 4).find("not a .wgx file"), std::string::npos);
  EXPECT_NE(patched(header::kVersionAt, 2, 4)
                .find("field 'version' (byte 4): version 2 is not supported"),
            std::string::npos);
  EXPECT_NE(patched(header::kHeaderSizeAt, 128, 4).find("header size 128"), std::string::npos);
  EXPECT_NE(patched(header::kFlagsAt, 1, 4).find("unknown flags 1"), std::string::npos);
  EXPECT_NE(patched(header::kGraphOffsetAt, 128).find("graph offset 128"), std::string::npos);
  EXPECT_NE(patched(header::kGraphSizeAt, UINT64_MAX).find("runs past the end"), std::string::npos);
  EXPECT_NE(patched(header::kGraphSizeAt, UINT64_MAX - kHeaderSize + 1).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(patched(header::kWeightsOffsetAt, weights_at() + 1).find("is not a multiple of 4096"),
            std::string::npos);
  EXPECT_NE(patched(header::kWeightsOffsetAt, 0).find("overlaps the graph section"),
            std::string::npos);
  EXPECT_NE(patched(header::kWeightsOffsetAt, UINT64_MAX - 4095)
                .find("does not end at the end of the file"),
            std::string::npos);
  EXPECT_NE(patched(header::kWeightsSizeAt, UINT64_MAX).find("does not end at the end"),
            std::string::npos);
  EXPECT_NE(patched(header::kFileSizeAt, base().size() + 4096).find("truncated or appended"),
            std::string::npos);
  EXPECT_NE(patched(header::kReservedAt, 1).find("reserved bytes are not zero"), std::string::npos);
  std::vector<uint8_t> longer = base();
  longer.push_back(0);
  EXPECT_NE(reject(longer).find("the header says"), std::string::npos);
}

TEST_F(FormatCorruption, TargetedGraphFields) {
  // A value's dtype byte sits two bytes before its name.
  const uint64_t tokens = find_name(base(), "tokens");
  for (uint8_t code : {0, 9, 200}) {
    std::vector<uint8_t> b = base();
    b[tokens - 2] = code;
    const std::string msg = reject(b);
    EXPECT_NE(
        msg.find("graph section, value %2, field 'dtype' (byte " + std::to_string(tokens - 2) +
                 "): unknown dtype code " + std::to_string(code)),
        std::string::npos)
        << msg;
  }
  std::vector<uint8_t> kind = base();
  kind[tokens - 3] = 4;
  EXPECT_NE(reject(kind).find("field 'kind'"), std::string::npos);
  std::vector<uint8_t> rank = base();
  rank[tokens - 1] = 9;
  EXPECT_NE(reject(rank).find("rank 9 exceeds 8"), std::string::npos);
  std::vector<uint8_t> name = base();
  put_u32(name, tokens, 0xfffffff0u);
  EXPECT_NE(reject(name).find("field 'name'"), std::string::npos);

  // A constant's entry: name, value id, offset, byte count.
  const uint64_t wk = find_name(base(), "wk", true) + 4 + 2;
  auto constant_with = [&](uint64_t offset, uint64_t bytes) {
    std::vector<uint8_t> b = base();
    put_u64(b, wk + 4, offset);
    put_u64(b, wk + 12, bytes);
    return reject(b);
  };
  const uint64_t weights_size = get_u64(base(), header::kWeightsSizeAt);
  const uint64_t wk_bytes = get_u64(base(), wk + 12);
  EXPECT_NE(constant_with(weights_size + 256, wk_bytes).find("constant 3 'wk', field 'offset'"),
            std::string::npos);
  EXPECT_NE(constant_with(1, wk_bytes).find("weight offset 1 is not a multiple of 256"),
            std::string::npos);
  EXPECT_NE(constant_with(0, UINT64_MAX).find("is outside the"), std::string::npos);
  EXPECT_NE(constant_with(UINT64_MAX - 255, 512).find("is outside the"), std::string::npos);
  EXPECT_NE(constant_with(0, wk_bytes - 4)
                .find("constant 3 'wk': 16380 bytes of data but f32[64, 64] is 16384"),
            std::string::npos);
  std::vector<uint8_t> value_id = base();
  put_u32(value_id, wk, 0x7fffffff);
  EXPECT_NE(reject(value_id).find("value 2147483647 is out of range"), std::string::npos);
}

TEST_F(FormatCorruption, HugeCounts) {
  // The value table's count follows the metadata and sym tables; find it by encoding those alone.
  FormatModel fm;
  graph::Graph syms_only;
  syms_only.syms = fm.graph.syms;
  const uint64_t empty_tables =
      7 * 4;  // values, nodes, inputs, outputs, constants, buffers, mutations
  const uint64_t at = kHeaderSize + encode_graph(syms_only, fm.metadata).size() - empty_tables;
  for (uint32_t count : {0xffffffffu, 0x10000000u, 100000u}) {
    std::vector<uint8_t> b = base();
    put_u32(b, at, count);
    const std::string msg = reject(b);
    EXPECT_NE(msg.find("value table, field 'count' (byte " + std::to_string(at) + "): count " +
                       std::to_string(count) + " cannot fit"),
              std::string::npos)
        << msg;
  }
  std::vector<uint8_t> metadata = base();
  put_u32(metadata, kHeaderSize, 0xffffffffu);
  EXPECT_NE(reject(metadata).find("metadata table, field 'count'"), std::string::npos);
}

}  // namespace
}  // namespace wgx::format::testing
