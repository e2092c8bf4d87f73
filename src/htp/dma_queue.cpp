#include "htp/dma_queue.h"

#include "htp/util.h"

namespace hexllm::htp {

namespace {

constexpr uint32_t kMask = DMA_QUEUE_CAPACITY - 1;
static_assert((DMA_QUEUE_CAPACITY & kMask) == 0, "capacity must be a power of two");

void copy_desc(const dma_desc& d) {
  if (d.row_bytes == 0 || d.n_rows == 0) return;
  if (d.dst_stride == d.row_bytes && d.src_stride == d.row_bytes) {
    htp_memcpy(d.dst, d.src, (size_t)d.row_bytes * d.n_rows);
    return;
  }
  auto* dst = (uint8_t*)d.dst;
  auto* src = (const uint8_t*)d.src;
  for (uint32_t r = 0; r < d.n_rows; ++r)
    htp_memcpy(dst + (size_t)r * d.dst_stride, src + (size_t)r * d.src_stride, d.row_bytes);
}

// Polls *word until it differs from `seen` (bounded by spin_ns), then sleeps on it. `sleeping`
// pairs with the waker as in Dekker's algorithm: the waker stores the word and then reads
// `sleeping`; we set `sleeping` and then re-read the word (all sequentially consistent).
void wait_change(uint32_t* word, uint32_t seen, uint32_t* sleeping, const uint32_t* stop, uint32_t spin_ns) {
  uint64_t spin_until = 0;
  for (uint32_t spins = 0;; ++spins) {
    if (atomic_load_acquire(word) != seen || atomic_load_relaxed(stop)) return;
    if (spins % 64 != 0) {
      platform_pause();
      continue;
    }
    if (spins != 0) platform_yield();  // the thread we wait for may be waiting for a core
    const uint64_t now = platform_time_ns();
    if (spin_until == 0) spin_until = now + spin_ns;
    if (now < spin_until) {
      platform_pause();
      continue;
    }
    atomic_store_seq(sleeping, 1u);
    if (atomic_load_seq(word) == seen && !atomic_load_seq(stop)) platform_futex_wait(word, seen);
    atomic_store_seq(sleeping, 0u);
    spin_until = 0;
  }
}

void copier_main(void* arg) {
  auto* q = (dma_queue*)arg;
  uint32_t done = 0;
  for (;;) {
    wait_change(&q->push_seq, done, &q->copier_sleeping, &q->stop, q->spin_ns);
    if (atomic_load_acquire(&q->stop)) return;
    const uint32_t pushed = atomic_load_acquire(&q->push_seq);
    for (; done != pushed; ++done) {
      copy_desc(q->ring[done & kMask]);
      atomic_store_seq(&q->done_seq, done + 1);  // publishes the copied bytes to the popper
      if (atomic_load_seq(&q->popper_sleeping)) platform_futex_wake(&q->done_seq, 1);
    }
  }
}

}  // namespace

htp_status dma_queue_init(dma_queue* q, uint32_t mode, uint32_t spin_ns, size_t stack_bytes) {
  if (mode >= HTP_DMA_MODE_COUNT) return HTP_ERR_INVALID_PARAMS;
  q->mode = mode;
  q->spin_ns = spin_ns;
  q->push_seq = q->done_seq = q->pop_seq = 0;
  q->copier_sleeping = q->popper_sleeping = q->stop = 0;
  if (mode == HTP_DMA_ASYNC && !platform_thread_create(&q->copier, copier_main, q, stack_bytes))
    return HTP_ERR_INTERNAL;
  return HTP_OK;
}

void dma_queue_destroy(dma_queue* q) {
  if (q->mode == HTP_DMA_ASYNC) {
    // Changing the futex word as well makes a copier between its check of `stop` and its
    // futex_wait return at once instead of sleeping through this wake-up.
    atomic_store_seq(&q->stop, 1u);
    atomic_fetch_add(&q->push_seq, 1u);
    platform_futex_wake(&q->push_seq, PLATFORM_WAKE_ALL);
    platform_thread_join(&q->copier);
  }
}

bool dma_queue_push_2d(dma_queue* q, void* dst, uint32_t dst_stride, const void* src, uint32_t src_stride,
                       uint32_t row_bytes, uint32_t n_rows) {
  if (q->push_seq - q->pop_seq >= DMA_QUEUE_CAPACITY) return false;
  dma_desc& d = q->ring[q->push_seq & kMask];
  d = {dst, src, dst_stride, src_stride, row_bytes, n_rows};
  switch (q->mode) {
    case HTP_DMA_ASYNC:
      atomic_store_seq(&q->push_seq, q->push_seq + 1);  // hands the descriptor to the copier
      if (atomic_load_seq(&q->copier_sleeping)) platform_futex_wake(&q->push_seq, 1);
      return true;
    case HTP_DMA_INLINE:
      copy_desc(d);
      break;
    default:  // zero-copy: nothing moves
      break;
  }
  q->push_seq++;
  q->done_seq = q->push_seq;
  return true;
}

dma_ptr dma_queue_pop(dma_queue* q) {
  const uint32_t seq = q->pop_seq;
  if (seq == q->push_seq) return {nullptr, nullptr, nullptr, 0};  // a kernel bug; waiting would hang
  if (q->mode == HTP_DMA_ASYNC && atomic_load_acquire(&q->done_seq) == seq)
    wait_change(&q->done_seq, seq, &q->popper_sleeping, &q->stop, q->spin_ns);
  const dma_desc& d = q->ring[seq & kMask];
  q->pop_seq = seq + 1;
  if (q->mode == HTP_DMA_ZERO_COPY) return {d.dst, d.src, (const uint8_t*)d.src, d.src_stride};
  return {d.dst, d.src, (const uint8_t*)d.dst, d.dst_stride};
}

void dma_queue_flush(dma_queue* q) {
  while (!dma_queue_empty(q)) dma_queue_pop(q);
}

}  // namespace hexllm::htp
