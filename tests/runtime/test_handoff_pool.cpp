// HandoffPool: every node binds one buffer (its words first, then the node's own bytes), grown by
// replacement when a node needs more; check() passes words that are all 0 and throws, naming the
// users, on a fault word or on counts left unfinished; clear() sets them back to 0.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/recorder.h"
#include "runtime/handoff_pool.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

constexpr uint64_t kWordBytes = HandoffPool::kWords * 4;

// check()'s message for these words of the pool's one buffer, or "" when it passes.
std::string check_message(const HandoffPool& pool, std::vector<uint32_t> words) {
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  try {
    pool.check(bytes.data());
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(HandoffPool, NodesShareOneBufferAndGrowByReplacement) {
  HandoffPool pool(testing::shared_context());
  EXPECT_TRUE(pool.words().empty());
  EXPECT_EQ(pool.word_bytes(), 0u);
  const gpu::BufferBinding a = pool.get(100, "route r", "node a"), b = pool.get(40, "route r", "node b");
  EXPECT_EQ(a.buffer, b.buffer);
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(a.size, kWordBytes + 112) << "the words, then the bytes rounded up to 16";
  ASSERT_EQ(pool.words().size(), 1u);
  EXPECT_EQ(pool.words()[0].buffer, a.buffer);
  EXPECT_EQ(pool.words()[0].bytes, kWordBytes);
  const gpu::BufferBinding c = pool.get(200000, "route s", "node c");  // more than 64 KiB
  EXPECT_NE(c.buffer, a.buffer);
  EXPECT_EQ(pool.get(16, "route s", "node d").buffer, c.buffer);
  EXPECT_EQ(pool.words().size(), 2u) << "both buffers' words are checked";
  EXPECT_EQ(pool.word_bytes(), 2 * kWordBytes);
}

TEST(HandoffPool, CheckNamesTheUsersOfAFaultOrUnfinishedCounts) {
  HandoffPool pool(testing::shared_context());
  pool.get(16, "route r (off: r=off)", "layers.0.mlp");
  pool.get(16, "route r (off: r=off)", "layers.1.mlp");
  pool.get(16, "route r (off: r=off)", "layers.2.mlp");
  EXPECT_EQ(check_message(pool, {0, 0, 0, 0}), "");
  const std::string fault = check_message(pool, {0, 0, 1, 0});
  EXPECT_NE(fault.find("a wait for them gave up"), std::string::npos) << fault;
  EXPECT_NE(fault.find("route r (off: r=off) in layers.0.mlp and 2 more nodes"), std::string::npos) << fault;
  for (uint32_t count : {0u, 1u, 3u}) {
    std::vector<uint32_t> words(4, 0);
    words[count] = 7;
    const std::string counts = check_message(pool, words);
    EXPECT_NE(counts.find("left its counts unfinished"), std::string::npos) << "word " << count << ": " << counts;
  }
}

TEST(HandoffPool, ClearSetsTheWordsBackToZero) {
  gpu::Context& ctx = testing::shared_context();
  HandoffPool pool(ctx);
  const gpu::BufferBinding b = pool.get(16, "route r", "node");
  const uint32_t faulted[4] = {1, 2, 3, 4};
  gpu::upload(ctx, *b.buffer, 0, faulted, sizeof(faulted));
  std::vector<uint8_t> words(kWordBytes);
  gpu::download(ctx, pool.words(), words.data());
  EXPECT_THROW(pool.check(words.data()), std::runtime_error);
  gpu::Recorder rec(ctx, "clear");
  pool.clear(rec);
  rec.submit();
  gpu::download(ctx, pool.words(), words.data());
  EXPECT_NO_THROW(pool.check(words.data()));
}

}  // namespace
}  // namespace wgx::runtime
