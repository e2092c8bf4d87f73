// DMA queue, identically for all three engines: FIFO order, data of 1D and 2D strided copies
// (read through the popped view), tokens, flush, capacity and wrap-around, write targets.
#include "htp/dma_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "htp/platform/platform.h"

namespace hexllm::htp {
namespace {

class DmaQueueTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    q_ = (dma_queue*)platform_mem_map(sizeof(dma_queue), 64);
    ASSERT_EQ(dma_queue_init(q_, GetParam(), 20000, 64 << 10), HTP_OK);
  }
  void TearDown() override {
    dma_queue_destroy(q_);
    platform_mem_unmap(q_, sizeof(dma_queue));
  }
  bool copies() const { return GetParam() != HTP_DMA_ZERO_COPY; }
  dma_queue* q_ = nullptr;
};

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (uint8_t)(i * 131 + seed * 17 + (i >> 8));
  return v;
}

struct pushed {
  void* dst;
  const void* src;
  uint32_t dst_stride, src_stride, row_bytes, n_rows;
};

// Checks one pop against the oldest pushed descriptor: same {dst, src}, and the rows readable
// through {data, stride} equal the source rows (truth: the source buffer itself).
void expect_pop(dma_queue* q, std::deque<pushed>* fifo, bool copies) {
  ASSERT_FALSE(fifo->empty());
  const pushed want = fifo->front();
  fifo->pop_front();
  const dma_ptr got = dma_queue_pop(q);
  ASSERT_EQ(got.dst, want.dst);
  ASSERT_EQ(got.src, want.src);
  ASSERT_EQ(got.data, copies ? (const uint8_t*)want.dst : (const uint8_t*)want.src);
  ASSERT_EQ(got.stride, copies ? want.dst_stride : want.src_stride);
  for (uint32_t r = 0; r < want.n_rows; ++r) {
    const uint8_t* src_row = (const uint8_t*)want.src + (size_t)r * want.src_stride;
    ASSERT_EQ(memcmp(got.data + (size_t)r * got.stride, src_row, want.row_bytes), 0) << "row " << r;
    if (copies) {
      ASSERT_EQ(memcmp((uint8_t*)want.dst + (size_t)r * want.dst_stride, src_row, want.row_bytes), 0);
    }
  }
}

TEST_P(DmaQueueTest, FifoOrderAndData1D) {
  const std::vector<uint8_t> src = pattern(1 << 16, 1);
  std::vector<uint8_t> dst(1 << 17, 0);
  std::deque<pushed> fifo;
  size_t at = 0;
  for (uint32_t k = 0; k < 600; ++k) {
    const uint32_t bytes = 1 + (k * 37) % 200;
    const size_t so = (k * 97) % (src.size() - bytes);
    void* d = dst.data() + at % (dst.size() - 256);
    at += 256;
    ASSERT_TRUE(dma_queue_push(q_, d, src.data() + so, bytes));
    fifo.push_back({d, src.data() + so, bytes, bytes, bytes, 1});
    if (fifo.size() > 24) {
      ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
    }
  }
  while (!fifo.empty()) ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
  EXPECT_TRUE(dma_queue_empty(q_));
}

TEST_P(DmaQueueTest, StridedCopies2D) {
  const std::vector<uint8_t> src = pattern(64 << 10, 2);
  std::vector<uint8_t> dst(64 << 10, 0xee);
  std::deque<pushed> fifo;
  // {row_bytes, n_rows, src_stride, dst_stride}: gaps on either side, equal strides, one row.
  const uint32_t shapes[][4] = {
      {48, 7, 100, 64}, {64, 16, 64, 64}, {3, 30, 7, 3}, {200, 1, 200, 256}, {128, 9, 1024, 128}};
  size_t at = 0;
  for (const auto& s : shapes) {
    void* d = dst.data() + at;
    at += (size_t)s[3] * s[1] + 128;
    ASSERT_TRUE(dma_queue_push_2d(q_, d, s[3], src.data() + 11, s[2], s[0], s[1]));
    fifo.push_back({d, src.data() + 11, s[3], s[2], s[0], s[1]});
  }
  while (!fifo.empty()) ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
  if (copies()) {
    // Bytes between the rows of the first copy are untouched.
    EXPECT_EQ(dst[48], 0xee);
    EXPECT_EQ(dst[63], 0xee);
  } else {
    EXPECT_EQ(dst[0], 0xee);  // zero-copy moves nothing
  }
}

TEST_P(DmaQueueTest, TokensKeepFifoOrder) {
  const std::vector<uint8_t> src = pattern(4096, 3);
  std::vector<uint8_t> dst(4096, 0);
  int slot_a = 0, slot_b = 0;
  std::deque<pushed> fifo;
  for (int round = 0; round < 100; ++round) {
    ASSERT_TRUE(dma_queue_push_token(q_, nullptr, &slot_a));
    fifo.push_back({nullptr, &slot_a, 0, 0, 0, 0});
    ASSERT_TRUE(dma_queue_push(q_, dst.data(), src.data() + round, 1000));
    fifo.push_back({dst.data(), src.data() + round, 1000, 1000, 1000, 1});
    ASSERT_TRUE(dma_queue_push_token(q_, &slot_b, nullptr));
    fifo.push_back({&slot_b, nullptr, 0, 0, 0, 0});
    while (!fifo.empty()) ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
  }
}

TEST_P(DmaQueueTest, FlushCompletesEverything) {
  const std::vector<uint8_t> src = pattern(32 << 10, 4);
  std::vector<uint8_t> dst(32 << 10, 0);
  for (uint32_t k = 0; k < 32; ++k)
    ASSERT_TRUE(dma_queue_push(q_, dst.data() + k * 1024, src.data() + k * 1024, 1024));
  EXPECT_EQ(dma_queue_depth(q_), 32u);
  dma_queue_flush(q_);
  EXPECT_TRUE(dma_queue_empty(q_));
  EXPECT_EQ(dma_queue_depth(q_), 0u);
  if (copies()) {
    EXPECT_EQ(memcmp(dst.data(), src.data(), dst.size()), 0);
  }
  // Popping an empty queue is a bug, but returns nulls instead of hanging.
  const dma_ptr none = dma_queue_pop(q_);
  EXPECT_EQ(none.data, nullptr);
  EXPECT_EQ(none.dst, nullptr);
}

TEST_P(DmaQueueTest, CapacityAndWrapAround) {
  const std::vector<uint8_t> src = pattern(DMA_QUEUE_CAPACITY * 16, 5);
  std::vector<uint8_t> dst(DMA_QUEUE_CAPACITY * 2 * 16, 0);  // refills land in the second half
  std::deque<pushed> fifo;
  for (int round = 0; round < 4; ++round) {
    for (uint32_t k = 0; k < DMA_QUEUE_CAPACITY; ++k) {
      void* d = dst.data() + k * 16;
      const uint8_t* s = src.data() + ((k + round * 7) % DMA_QUEUE_CAPACITY) * 16;
      ASSERT_TRUE(dma_queue_push(q_, d, s, 16)) << k;
      fifo.push_back({d, s, 16, 16, 16, 1});
    }
    EXPECT_EQ(dma_queue_depth(q_), DMA_QUEUE_CAPACITY);
    EXPECT_FALSE(dma_queue_push(q_, dst.data(), src.data(), 16));  // full
    EXPECT_FALSE(dma_queue_push_token(q_, nullptr, nullptr));
    // Pop half, refill half: the ring index wraps mid-stream.
    for (int k = 0; k < 128; ++k) ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
    for (uint32_t k = 0; k < 128; ++k) {
      void* d = dst.data() + (2 * DMA_QUEUE_CAPACITY - 1 - k) * 16;
      ASSERT_TRUE(dma_queue_push(q_, d, src.data() + k * 16, 16));
      fifo.push_back({d, src.data() + k * 16, 16, 16, 16, 1});
    }
    EXPECT_FALSE(dma_queue_push(q_, dst.data(), src.data(), 16));
    while (!fifo.empty()) ASSERT_NO_FATAL_FAILURE(expect_pop(q_, &fifo, copies()));
  }
}

TEST_P(DmaQueueTest, WriteTargetThenWriteBackReachesDdr) {
  // The kernel-side idiom for results: write where write_target says, push the write-back,
  // pop it. In every engine the DDR destination ends up with the values.
  alignas(128) uint8_t vtcm[4 * 256] = {};
  std::vector<uint8_t> ddr(4 * 1000, 0);
  const dma_view out = dma_queue_write_target(q_, vtcm, 256, ddr.data(), 1000);
  if (copies()) {
    EXPECT_EQ(out.ptr, vtcm);
    EXPECT_EQ(out.stride, 256u);
  } else {
    EXPECT_EQ(out.ptr, ddr.data());
    EXPECT_EQ(out.stride, 1000u);
  }
  for (uint32_t r = 0; r < 4; ++r)
    for (uint32_t c = 0; c < 100; ++c) out.ptr[r * out.stride + c] = (uint8_t)(r * 100 + c);
  ASSERT_TRUE(dma_queue_push_2d(q_, ddr.data(), 1000, vtcm, 256, 100, 4));
  dma_queue_pop(q_);
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint32_t c = 0; c < 100; ++c) ASSERT_EQ(ddr[r * 1000 + c], (uint8_t)(r * 100 + c));
    EXPECT_EQ(ddr[r * 1000 + 100], 0);  // nothing past the row
  }
}

std::string engine_name(const ::testing::TestParamInfo<uint32_t>& p) {
  const char* const names[] = {"Async", "Inline", "ZeroCopy"};
  return names[p.param];
}

INSTANTIATE_TEST_SUITE_P(Engines, DmaQueueTest,
                         ::testing::Values((uint32_t)HTP_DMA_ASYNC, (uint32_t)HTP_DMA_INLINE,
                                           (uint32_t)HTP_DMA_ZERO_COPY),
                         engine_name);

TEST(HtpDmaQueue, AsyncCopierSleepsAndWakes) {
  // spin_ns = 0: the copier sleeps whenever the ring is empty, so every push must wake it.
  auto* q = (dma_queue*)platform_mem_map(sizeof(dma_queue), 64);
  ASSERT_EQ(dma_queue_init(q, HTP_DMA_ASYNC, 0, 64 << 10), HTP_OK);
  const std::vector<uint8_t> src = pattern(4096, 6);
  for (int k = 0; k < 500; ++k) {
    std::vector<uint8_t> dst(64, 0);
    ASSERT_TRUE(dma_queue_push(q, dst.data(), src.data() + k, 64));
    dma_queue_pop(q);
    ASSERT_EQ(memcmp(dst.data(), src.data() + k, 64), 0) << k;
  }
  dma_queue_destroy(q);
  platform_mem_unmap(q, sizeof(dma_queue));
}

TEST(HtpDmaQueue, DestroyWakesASleepingCopier) {
  // Regression: a stop request that lands between the copier's last check and its futex_wait
  // must still end the thread (destroy hung otherwise). The window is narrow: without the fix
  // this loop hung in about one run of five.
  auto* q = (dma_queue*)platform_mem_map(sizeof(dma_queue), 64);
  for (int k = 0; k < 5000; ++k) {
    memset((void*)q, 0, sizeof(dma_queue));
    ASSERT_EQ(dma_queue_init(q, HTP_DMA_ASYNC, 0, 64 << 10), HTP_OK);
    if (k % 2 == 0) {
      uint8_t a = 1, b = 0;
      ASSERT_TRUE(dma_queue_push(q, &b, &a, 1));
      dma_queue_pop(q);
      ASSERT_EQ(b, 1);
    }
    dma_queue_destroy(q);
  }
  platform_mem_unmap(q, sizeof(dma_queue));
}

TEST(HtpDmaQueue, RejectsUnknownMode) {
  auto* q = (dma_queue*)platform_mem_map(sizeof(dma_queue), 64);
  EXPECT_EQ(dma_queue_init(q, HTP_DMA_MODE_COUNT, 0, 64 << 10), HTP_ERR_INVALID_PARAMS);
  platform_mem_unmap(q, sizeof(dma_queue));
}

}  // namespace
}  // namespace hexllm::htp
