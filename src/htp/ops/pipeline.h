// The DMA pipeline of DESIGN §5.1 for one worker, shared by every family that streams blocks
// DDR -> DMA -> VTCM -> compute -> VTCM -> DMA -> DDR through the slots of its VTCM area.
//
// The DMA FIFO is the slot rotation. The prologue pushes, per slot, a token for the slot's
// output buffer and the inputs of the slot's first block. Each iteration pops the descriptors
// that free the slot's output (the token, or the previous write-back), then the block's
// inputs; computes; pushes the write-back, which frees the slot for its next block; and
// pushes the inputs of the block two ahead into the slot it just used. The epilogue drains
// the queue. Kernels read through the popped pointers and write where dma_queue_write_target
// says, so the same code runs in every DMA mode.
//
// A kernel describes its blocks with a type K:
//   using block = ...;                       one block: where it comes from and goes to
//   static constexpr uint32_t slots;         slots in its VTCM area
//   static constexpr uint32_t max_in;        input descriptors of a block at most
//   static constexpr uint16_t compute_event; trace event of the block's math
//   bool more() const;                       whether the worker has blocks left
//   void next(block* b);                     the worker's next block (advances the cursor)
//   uint32_t push_in(dma_queue*, block&, uint32_t slot, bool* ok);
//                                            pushes the block's inputs into the slot (and may
//                                            note in the block what it read); returns how many
//                                            descriptors it pushed
//   uint8_t* out_buf(uint32_t slot) const;   the slot's VTCM output buffer
//   void compute(dma_queue*, const block&, uint32_t slot, const dma_ptr* in);
//                                            the math, over the popped inputs in push order
//   uint32_t push_out(dma_queue*, const block&, uint32_t slot, bool* ok);
//                                            the write-back (or a token); returns how many
//                                            descriptors it pushed: they free the slot again
// Trace: DMA_WAIT and the compute event carry the worker's block number, FLUSH 0.
#pragma once

#include <stdint.h>

#include "htp/dma_queue.h"
#include "htp/trace.h"

namespace hexllm::htp {

// Runs worker's blocks through the pipeline; false on a DMA queue failure (then the
// remaining blocks are skipped and the queue is drained).
template <class K>
bool dma_pipeline_run(dma_queue* q, trace_buf* tr, K& k) {
  struct slot_state {
    typename K::block b;
    uint32_t n_in;         // input descriptors of b
    uint32_t out_pending;  // descriptors that free the slot's output buffer
  };
  slot_state st[K::slots];
  uint32_t n_fetched = 0;
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    k.next(&st[s].b);
    st[s].n_in = k.push_in(q, st[s].b, s, &ok);
    ++n_fetched;
  };

  // Prologue: each slot gets an output token, then its first inputs.
  for (uint32_t s = 0; s < K::slots && k.more(); ++s) {
    ok &= dma_queue_push_token(q, nullptr, k.out_buf(s));
    st[s].out_pending = 1;
    fetch(s);
  }
  dma_ptr in[K::max_in];
  for (uint32_t i = 0; i < n_fetched && ok; ++i) {  // n_fetched grows as the loop fetches
    const uint32_t s = i % K::slots;
    slot_state& ss = st[s];
    trace_begin(tr, HTP_EV_DMA_WAIT, (uint16_t)i);
    for (uint32_t d = 0; d < ss.out_pending; ++d) dma_queue_pop(q);  // the slot's output is free
    for (uint32_t d = 0; d < ss.n_in; ++d) in[d] = dma_queue_pop(q);
    trace_end(tr, HTP_EV_DMA_WAIT, (uint16_t)i);

    trace_begin(tr, K::compute_event, (uint16_t)i);
    k.compute(q, ss.b, s, in);
    trace_end(tr, K::compute_event, (uint16_t)i);

    ss.out_pending = k.push_out(q, ss.b, s, &ok);
    if (k.more()) fetch(s);
  }
  // Epilogue: the last write-backs.
  trace_begin(tr, HTP_EV_FLUSH, 0);
  dma_queue_flush(q);
  trace_end(tr, HTP_EV_FLUSH, 0);
  return ok;
}

}  // namespace hexllm::htp
