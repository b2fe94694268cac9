// Asynchronous readbacks: copies recorded into the same command buffer as the work, mapped at
// submit without waiting, collected later with several submissions in flight; the buffer's states
// and the errors of misuse.
#include "gpu/readback.h"
#include "gpu/recorder.h"
#include "gpu_test_util.h"

namespace wgx::gpu {
namespace {

using testing::random_bytes;
using testing::shared_context;

TEST(AsyncReadback, SeveralSubmissionsInFlightEachGiveTheirOwnBytes) {
  Context& ctx = shared_context();
  Buffer src(ctx, 64, BufferKind::Storage, "changing source");
  constexpr int kSteps = 5;
  std::vector<std::unique_ptr<AsyncReadback>> slots;
  std::vector<std::vector<uint8_t>> written;
  for (int i = 0; i < kSteps; ++i) {
    // The source changes between submissions (a queue write, ordered after the last submit), so
    // each readback must hold the bytes of its own submission.
    written.push_back(random_bytes(64, static_cast<uint32_t>(i)));
    upload(ctx, src, 0, written.back().data(), 64);
    slots.push_back(std::make_unique<AsyncReadback>(ctx, 48, "slot " + std::to_string(i)));
    Recorder rec(ctx, "step " + std::to_string(i));
    rec.readback(src, 16, 48, *slots.back());
    EXPECT_EQ(slots.back()->state(), AsyncReadback::State::Recorded);
    EXPECT_FALSE(slots.back()->ready());
    rec.submit();
    EXPECT_NE(slots.back()->state(), AsyncReadback::State::Recorded);
  }
  for (int i = kSteps; i-- > 0;) {  // collected newest first: order does not matter
    std::vector<uint8_t> got(48);
    slots[i]->take(got.data(), got.size());
    EXPECT_EQ(got, std::vector<uint8_t>(written[i].begin() + 16, written[i].end())) << "step " << i;
    EXPECT_EQ(slots[i]->state(), AsyncReadback::State::Idle);
  }
}

TEST(AsyncReadback, ReadyTurnsTrueByPollingAndTheBufferIsReusable) {
  Context& ctx = shared_context();
  const std::vector<uint8_t> data = random_bytes(16, 9);
  Buffer src(ctx, data.data(), data.size(), "source");
  AsyncReadback slot(ctx, 16, "reused");
  for (int round = 0; round < 3; ++round) {
    Recorder rec(ctx, "round");
    rec.readback(src, 0, 16, slot);
    rec.submit();
    for (int polls = 0; !slot.ready(); ++polls) ASSERT_LT(polls, 10000000) << "never became ready";
    EXPECT_EQ(slot.state(), AsyncReadback::State::Mapped);
    std::vector<uint8_t> got(8);
    slot.take(got.data(), 8, 8);
    EXPECT_EQ(got, std::vector<uint8_t>(data.begin() + 8, data.end()));
  }
}

// Spans of two buffers land back to back, in one staging buffer (a readback) or one host array
// (a download), each from its own offset; a misaligned span is a validation error.
TEST(AsyncReadback, SpansOfSeveralBuffersLandBackToBack) {
  Context& ctx = shared_context();
  Buffer a(ctx, 64, BufferKind::Storage, "a"), b(ctx, 32, BufferKind::Storage, "b");
  const std::vector<uint8_t> in_a = random_bytes(64, 1), in_b = random_bytes(32, 2);
  upload(ctx, a, 0, in_a.data(), 64);
  upload(ctx, b, 0, in_b.data(), 32);
  const std::vector<Span> spans{{&a, 8, 24}, {&b, 16, 16}, {&a, 0, 4}};
  std::vector<uint8_t> want(in_a.begin() + 8, in_a.begin() + 32);
  want.insert(want.end(), in_b.begin() + 16, in_b.end());
  want.insert(want.end(), in_a.begin(), in_a.begin() + 4);
  AsyncReadback slot(ctx, 64, "spans");
  Recorder rec(ctx, "spans");
  rec.readback(spans, slot);
  rec.submit();
  std::vector<uint8_t> got(want.size());
  slot.take(got.data(), got.size());
  EXPECT_EQ(got, want);
  std::vector<uint8_t> downloaded(want.size());
  download(ctx, spans, downloaded.data());
  EXPECT_EQ(downloaded, want);
  const std::vector<Span> odd{{&a, 0, 8}, {&b, 2, 4}};
  EXPECT_THROW(download(ctx, odd, downloaded.data()), GpuError);
  Recorder odd_rec(ctx, "odd");
  EXPECT_THROW(odd_rec.readback(odd, slot), GpuError);
}

TEST(AsyncReadback, MisuseIsAValidationError) {
  Context& ctx = shared_context();
  Buffer src(ctx, 64, BufferKind::Storage, "source");
  AsyncReadback slot(ctx, 16, "strict");
  uint8_t out[16];
  auto validation = [](auto&& body) {
    try {
      body();
      return false;
    } catch (const GpuError& e) {
      return e.kind() == ErrorKind::Validation;
    }
  };
  EXPECT_TRUE(validation([&] { slot.wait(); }));  // nothing recorded
  {
    Recorder rec(ctx, "misuse");
    EXPECT_TRUE(validation([&] { rec.readback(src, 2, 4, slot); }));   // unaligned offset
    EXPECT_TRUE(validation([&] { rec.readback(src, 0, 32, slot); }));  // larger than the slot
    EXPECT_TRUE(validation([&] { rec.readback(src, 60, 8, slot); }));  // past the source
    rec.readback(src, 0, 16, slot);
    EXPECT_TRUE(validation([&] { rec.readback(src, 0, 16, slot); }));  // already in use
    EXPECT_TRUE(validation([&] { slot.take(out, 16); }));              // not submitted yet
  }  // destroyed unsubmitted: the slot is free again
  EXPECT_EQ(slot.state(), AsyncReadback::State::Idle);
  Recorder rec(ctx, "after");
  rec.readback(src, 0, 16, slot);
  rec.submit();
  slot.release();  // dropped while mapping: cancelled, and free
  EXPECT_EQ(slot.state(), AsyncReadback::State::Idle);
  EXPECT_TRUE(validation([&] { slot.take(out, 32); }));  // more than the slot holds
}

}  // namespace
}  // namespace wgx::gpu
