// ScratchPool: the i-th scratch of every node is one shared buffer (slot i), grown by replacement
// when a node needs more, and the pool counts what it holds.
#include <gtest/gtest.h>

#include "runtime/scratch_pool.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

TEST(ScratchPool, NodesShareSlotsAndGrowByReplacement) {
  ScratchPool pool(testing::shared_context());
  const gpu::BufferBinding a0 = pool.get(0, 100), a1 = pool.get(0, 200);
  EXPECT_NE(a0.buffer, a1.buffer) << "two scratches of one node must not alias";
  const gpu::BufferBinding b0 = pool.get(1, 300), b1 = pool.get(1, 50);
  EXPECT_EQ(b0.buffer, a0.buffer) << "node 1's first scratch is slot 0";
  EXPECT_EQ(b1.buffer, a1.buffer);
  EXPECT_EQ(pool.bytes(), 2u << 20) << "two slots of 1 MiB";
  EXPECT_EQ(b0.size, 304u) << "bindings round up to 16 bytes";
  // A node needing more than slot 0 holds gets a new buffer; the next node binds that one.
  const gpu::BufferBinding c0 = pool.get(2, (3u << 20) + 1);
  EXPECT_NE(c0.buffer, a0.buffer);
  EXPECT_GE(c0.buffer->size(), (3u << 20) + 1);
  EXPECT_EQ(pool.get(3, 16).buffer, c0.buffer);
  EXPECT_EQ(pool.bytes(), (2u << 20) + (4u << 20));
}

}  // namespace
}  // namespace wgx::runtime
