// A strict FIFO of copy descriptors, one queue per worker thread (docs/DESIGN.md §7).
//
// Every push has its pop, in push order. A pop returns the descriptor's {dst, src} plus where
// the block can be read now (`data`, `stride`): the destination in the copy engines, the source
// itself in zero-copy mode. Kernels therefore always read through the popped `data` and write
// results where dma_queue_write_target says; then one kernel source runs in every mode:
//   HTP_DMA_ASYNC     a copier thread per queue works through the ring while the kernel computes
//   HTP_DMA_INLINE    the copy happens at push time
//   HTP_DMA_ZERO_COPY nothing is copied; kernels read and write DDR directly
// A push with 0 bytes is a token: it completes as soon as everything before it has, and
// pipelines use it to hand buffer slots around in FIFO order.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "htp/abi/htp_hwinfo.h"
#include "htp/abi/htp_status.h"
#include "htp/platform/platform.h"

namespace hexllm::htp {

inline constexpr uint32_t DMA_QUEUE_CAPACITY = 256;  // a power of two: ring index = seq & (cap - 1)

struct dma_desc {
  void* dst;
  const void* src;
  uint32_t dst_stride;
  uint32_t src_stride;
  uint32_t row_bytes;
  uint32_t n_rows;
};

struct dma_ptr {
  void* dst;            // as pushed
  const void* src;      // as pushed
  const uint8_t* data;  // where the block is readable now: dst, or src in zero-copy mode
  uint32_t stride;      // row stride at `data`
};

struct dma_view {
  uint8_t* ptr;
  uint32_t stride;
};

struct dma_queue {
  uint32_t mode;      // htp_dma_mode
  uint32_t spin_ns;   // copier / pop polling time before sleeping (async mode)
  // Sequence numbers count descriptors since init; they wrap, only differences matter.
  uint32_t push_seq;  // written by the producer; futex word the copier sleeps on
  uint32_t done_seq;  // written by the copier; futex word pop sleeps on
  uint32_t pop_seq;   // producer only
  uint32_t copier_sleeping;
  uint32_t popper_sleeping;
  uint32_t stop;
  platform_thread copier;
  dma_desc ring[DMA_QUEUE_CAPACITY];
};

// The queue must be zeroed memory that stays put. Starts the copier thread in async mode.
htp_status dma_queue_init(dma_queue* q, uint32_t mode, uint32_t spin_ns, size_t stack_bytes);
void dma_queue_destroy(dma_queue* q);

// false when the ring is full (a kernel bug: pipelines keep a handful in flight).
bool dma_queue_push_2d(dma_queue* q, void* dst, uint32_t dst_stride, const void* src, uint32_t src_stride,
                       uint32_t row_bytes, uint32_t n_rows);

inline bool dma_queue_push(dma_queue* q, void* dst, const void* src, uint32_t bytes) {
  return dma_queue_push_2d(q, dst, bytes, src, bytes, bytes, 1);
}

// A 0-byte token carrying (dst, src) through the FIFO.
inline bool dma_queue_push_token(dma_queue* q, void* dst, const void* src) {
  return dma_queue_push_2d(q, dst, 0, src, 0, 0, 0);
}

// Waits for the oldest descriptor to complete and retires it. On an empty queue (a kernel
// bug) it returns all-null instead of waiting forever.
dma_ptr dma_queue_pop(dma_queue* q);

// Pops everything still queued.
void dma_queue_flush(dma_queue* q);

inline uint32_t dma_queue_depth(const dma_queue* q) { return q->push_seq - q->pop_seq; }
inline bool dma_queue_empty(const dma_queue* q) { return q->push_seq == q->pop_seq; }

// Where a kernel writes a result block that it will then push from VTCM to DDR: its VTCM slot
// in the copy modes, the DDR destination itself in zero-copy mode (whose push copies nothing).
inline dma_view dma_queue_write_target(const dma_queue* q, uint8_t* vtcm, uint32_t vtcm_stride, uint8_t* ddr,
                                       uint32_t ddr_stride) {
  if (q->mode == HTP_DMA_ZERO_COPY) return {ddr, ddr_stride};
  return {vtcm, vtcm_stride};
}

}  // namespace hexllm::htp
