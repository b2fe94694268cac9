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
