// Buffers: round trips at sizes WebGPU must round, partial and offset transfers, the pool.
#include "gpu/buffer.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::random_bytes;
using testing::shared_context;

class RoundTrip : public ::testing::TestWithParam<size_t> {};

TEST_P(RoundTrip, UploadThenDownloadGivesTheSameBytes) {
  Context& ctx = shared_context();
  const size_t n = GetParam();
  const std::vector<uint8_t> data = random_bytes(n, static_cast<uint32_t>(n));
  Buffer buf(ctx, n, BufferKind::Storage, "roundtrip");
  EXPECT_EQ(buf.size(), n);
  EXPECT_EQ(buf.allocated() % 4, 0u);
  EXPECT_GE(buf.allocated(), n);
  EXPECT_LT(buf.allocated() - n, 4u);
  upload(ctx, buf, 0, data.data(), n);
  std::vector<uint8_t> back(n, 0xAB);
  download(ctx, buf, 0, n, back.data());
  EXPECT_EQ(back, data);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, RoundTrip,
                         ::testing::Values(size_t{1}, size_t{3}, size_t{4}, size_t{1023},
                                           size_t{(1u << 20) + 7}));

TEST(Buffer, MappedAtCreationHoldsTheInitialBytes) {
  Context& ctx = shared_context();
  const std::vector<uint8_t> data = random_bytes(4099, 7);
  Buffer buf(ctx, data.data(), data.size(), "initialised");
  std::vector<uint8_t> back(data.size());
  download(ctx, buf, 0, back.size(), back.data());
  EXPECT_EQ(back, data);
}

TEST(Buffer, DownloadAtAnyOffsetAndLength) {
  Context& ctx = shared_context();
  const std::vector<uint8_t> data = random_bytes(1001, 11);
  Buffer buf(ctx, data.data(), data.size(), "offsets");
  for (size_t off : {0u, 1u, 2u, 3u, 5u, 997u}) {
    for (size_t len : {1u, 2u, 3u, 4u}) {
      if (off + len > data.size()) continue;
      std::vector<uint8_t> part(len);
      download(ctx, buf, off, len, part.data());
      EXPECT_EQ(part, std::vector<uint8_t>(data.begin() + off, data.begin() + off + len))
          << "offset " << off << " length " << len;
    }
  }
}

TEST(Buffer, UploadAtAnOffsetLeavesTheRestAlone) {
  Context& ctx = shared_context();
  std::vector<uint8_t> data = random_bytes(64, 3);
  Buffer buf(ctx, data.data(), data.size(), "partial");
  const std::vector<uint8_t> patch = random_bytes(8, 4);
  upload(ctx, buf, 16, patch.data(), patch.size());
  std::copy(patch.begin(), patch.end(), data.begin() + 16);
  EXPECT_EQ(download_as<uint8_t>(ctx, buf, data.size()), data);
}

TEST(Buffer, MisalignedOrOverrunningTransfersAreRejected) {
  Context& ctx = shared_context();
  Buffer buf(ctx, 64, BufferKind::Storage, "strict");
  uint8_t bytes[8] = {};
  EXPECT_THROW(upload(ctx, buf, 2, bytes, 4), GpuError);       // offset not a multiple of 4
  EXPECT_THROW(upload(ctx, buf, 60, bytes, 8), GpuError);      // past the end
  EXPECT_THROW(upload(ctx, buf, 0, bytes, 3), GpuError);       // unaligned tail mid-buffer
  EXPECT_THROW(download(ctx, buf, 62, 4, bytes), GpuError);    // past the end
  EXPECT_NO_THROW(upload(ctx, buf, 60, bytes, 4));
}

TEST(Buffer, LargerThanTheDeviceAllowsIsOutOfMemoryNotACrash) {
  Context& ctx = shared_context();
  try {
    Buffer huge(ctx, ctx.limits().max_buffer_size + 4, BufferKind::Storage, "huge");
    FAIL() << "created a buffer beyond maxBufferSize";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_EQ(e.label(), "huge");
  }
  // The context is still healthy afterwards.
  Buffer small(ctx, 16, BufferKind::Storage, "after");
  EXPECT_NO_THROW(ctx.wait_idle());
}

TEST(Buffer, DestroyedBufferIsAnErrorNotGarbage) {
  Context& ctx = shared_context();
  const std::vector<uint8_t> data = random_bytes(64, 5);
  Buffer buf(ctx, data.data(), data.size(), "destroyed");
  buf.destroy();  // frees the device memory now
  uint8_t out[64];
  EXPECT_THROW(download(ctx, buf, 0, sizeof out, out), GpuError);
  EXPECT_NO_THROW(ctx.wait_idle());  // the context stays usable
}

TEST(BufferPool, SizeClassesCoverTheRequestWithBoundedWaste) {
  for (uint64_t n : {1ull, 255ull, 256ull, 257ull, 1000ull, 4096ull, 4097ull, 999999ull, 123456789ull}) {
    const uint64_t c = BufferPool::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 4, 0u);
    if (n > 256) {
      EXPECT_LE(c - n, n / 4 + 4) << n;
    }
  }
}

TEST(BufferPool, ReusesAReturnedBufferOfTheSameClassOnly) {
  Context& ctx = shared_context();
  BufferPool pool(ctx);
  WGPUBuffer first = nullptr;
  {
    BufferPool::Lease a = pool.acquire(1000, BufferKind::Storage, "a");
    first = a->raw();
    EXPECT_GE(a->allocated(), 1000u);
  }
  EXPECT_EQ(pool.idle_bytes(), BufferPool::size_class(1000));
  BufferPool::Lease b = pool.acquire(990, BufferKind::Storage, "b");  // same class
  EXPECT_EQ(b->raw(), first);
  EXPECT_EQ(pool.reused(), 1u);
  BufferPool::Lease c = pool.acquire(1000, BufferKind::Uniform, "c");  // other kind: new
  BufferPool::Lease d = pool.acquire(100000, BufferKind::Storage, "d");  // other class: new
  EXPECT_NE(d->raw(), first);
  EXPECT_EQ(pool.created(), 3u);
  EXPECT_EQ(pool.reused(), 1u);
}

TEST(BufferPool, TrimReleasesIdleBuffers) {
  Context& ctx = shared_context();
  BufferPool pool(ctx);
  { BufferPool::Lease a = pool.acquire(5000, BufferKind::Storage, "a"); }
  EXPECT_GT(pool.idle_bytes(), 0u);
  pool.trim();
  EXPECT_EQ(pool.idle_bytes(), 0u);
}

}  // namespace
}  // namespace wgx::gpu
