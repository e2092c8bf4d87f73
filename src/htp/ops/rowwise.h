// The DMA pipeline shared by the row-wise families (unary, act, norm, softmax), for one worker.
//
// The pattern of ops/binary.cpp, generalized to the two modes of htp/abi/rowwise_params.h:
// a worker walks its items (a block of whole rows, or one column chunk of one row in pass 0,
// 1 or 2) through HTP_RW_SLOTS slots of its VTCM area. The DMA FIFO is the slot rotation: the
// prologue pushes, per slot, a token for the output buffer and the item's inputs; each
// iteration pops {output token, inputs}, computes, pushes the write-back (a token for pass-1
// items, which write nothing) and the prefetch of the item two ahead into the slot it just
// used; the epilogue drains. Kernels read through the popped pointers and write where
// dma_queue_write_target says, so the same code runs in every DMA mode.
//
// A family supplies a policy P:
//   const uint8_t* in_addr(k, i1, i2, i3, col)  DDR address of input k at row (i1, i2, i3), column col
//   uint32_t in_row_stride(k)                   DDR stride between consecutive rows of input k
//   uint32_t in_elem(k)                         bytes per element of input k
//   bool in_used(k, pass)                       whether input k streams with items of this pass
//   void compute(const rw_item&, const dma_ptr* in, const dma_view& out)
// Items of pass 1 get the slot's VTCM output buffer as scratch (never DDR, even in zero-copy mode).
#pragma once

#include <stdint.h>

#include "htp/abi/rowwise_params.h"
#include "htp/ops/ops.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

struct rw_item {
  uint32_t row;         // flattened index of the first row
  uint32_t i1, i2, i3;  // its coordinates
  uint32_t rows;        // rows in the block (1 when chunked)
  uint32_t col, cols;   // columns [col, col + cols)
  uint32_t pass;        // 0: the only pass; 1, 2: first / second pass over a chunked row
  uint32_t seq;         // item number within the worker (trace info)
  uint8_t* dst;         // DDR address of the output block
};

// Where a worker starts: its first unit and how many units it has.
struct rw_range {
  uint32_t row, chunk;  // first row and, for elementwise tiles, its first chunk
  uint64_t units;       // elementwise: tiles; otherwise rows
};

// Unit range of worker i of n (rows, or tiles row * n_chunks + chunk when elementwise).
inline rw_range rw_worker_range(const htp_rw_plan& p, const htp_divisor& chunks, uint64_t n_rows,
                                bool elementwise, uint32_t n, uint32_t i) {
  const uint64_t total = htp_rw_units(p, n_rows, elementwise);
  const uint64_t begin = total * i / n, end = total * (i + 1) / n;
  rw_range r{(uint32_t)begin, 0, end - begin};
  if (elementwise && p.n_chunks > 1) {
    r.row = htp_fastdiv((uint32_t)begin, chunks);
    r.chunk = (uint32_t)begin - r.row * p.n_chunks;
  }
  return r;
}

// Runs worker `i`'s items. `passes` is 2 for row-reducing families (chunked rows take two
// passes), 1 for elementwise ones. Returns false on a DMA queue failure.
template <class P>
bool rw_stream(const htp_op_ctx* ctx, const htp_rw_plan& plan, const rw_range& range, uint32_t passes, P& pol,
               uint32_t i) {
  const htp_rw_layout& lay = plan.layout;
  const htp_tensor& td = ctx->dst->t;
  const uint32_t ne0 = td.ne[0];
  const bool chunked = plan.n_chunks > 1;
  dma_queue* q = &ctx->dma[i];
  trace_buf* tr = &ctx->trace[i];
  uint8_t* area = ctx->vtcm_base + (uint64_t)i * lay.thread_bytes;

  // Cursor over this worker's items.
  uint32_t row = range.row, chunk = range.chunk, pass = chunked && passes == 2 ? 1 : 0;
  uint64_t units_left = range.units;  // rows (whole mode) or tiles / row passes (chunked)
  if (chunked && passes == 2) units_left *= (uint64_t)plan.n_chunks * 2;
  uint32_t seq = 0;

  rw_item items[HTP_RW_SLOTS];
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    rw_item it;
    const uint32_t i23 = htp_fastdiv(row, plan.ne1);
    it.row = row;
    it.i1 = row - i23 * plan.ne1.div;
    it.i2 = htp_fastmod(i23, plan.ne2);
    it.i3 = htp_fastdiv(i23, plan.ne2);
    it.pass = pass;
    it.seq = seq++;
    if (!chunked) {
      uint32_t rows = plan.block_rows;
      if (units_left < rows) rows = (uint32_t)units_left;
      if (td.ne[1] - it.i1 < rows) rows = td.ne[1] - it.i1;  // stay within the (i2, i3) plane
      it.rows = rows;
      it.col = 0;
      it.cols = ne0;
      row += rows;
      units_left -= rows;
    } else {
      it.rows = 1;
      it.col = chunk * plan.chunk_cols;
      it.cols = htp_min(plan.chunk_cols, ne0 - it.col);
      --units_left;
      if (++chunk == plan.n_chunks) {
        chunk = 0;
        if (pass == 1) {
          pass = 2;
        } else {
          pass = pass == 2 ? 1 : 0;
          ++row;
        }
      }
    }
    it.dst = ctx->dst->data + (uint64_t)it.i1 * td.nb[1] + (uint64_t)it.i2 * td.nb[2] +
             (uint64_t)it.i3 * td.nb[3] + (uint64_t)it.col * 4;
    items[s] = it;
    uint8_t* slot = area + s * lay.slot_bytes;
    for (uint32_t k = 0; k < HTP_RW_INPUTS; ++k) {
      if (!pol.in_used(k, it.pass)) continue;
      ok &= dma_queue_push_2d(q, slot + lay.in_offset(k), lay.in_stride[k],
                              pol.in_addr(k, it.i1, it.i2, it.i3, it.col), pol.in_row_stride(k),
                              it.cols * pol.in_elem(k), it.rows);
    }
  };

  // Prologue: each slot gets an output token, then its first inputs.
  for (uint32_t s = 0; s < HTP_RW_SLOTS && units_left > 0; ++s) {
    ok &= dma_queue_push_token(q, nullptr, area + s * lay.slot_bytes + lay.out_offset);
    fetch(s);
  }
  for (uint32_t k = 0; k < seq && ok; ++k) {  // seq grows as the loop fetches
    const uint32_t s = k % HTP_RW_SLOTS;
    const rw_item it = items[s];
    uint8_t* slot = area + s * lay.slot_bytes;
    trace_begin(tr, HTP_EV_DMA_WAIT, (uint16_t)it.seq);
    dma_queue_pop(q);  // the slot's output buffer is free (token or previous write-back done)
    dma_ptr in[HTP_RW_INPUTS] = {};
    for (uint32_t j = 0; j < HTP_RW_INPUTS; ++j)
      if (pol.in_used(j, it.pass)) in[j] = dma_queue_pop(q);
    trace_end(tr, HTP_EV_DMA_WAIT, (uint16_t)it.seq);

    uint8_t* out_vtcm = slot + lay.out_offset;
    const dma_view out = it.pass == 1 ? dma_view{out_vtcm, lay.out_stride}
                                      : dma_queue_write_target(q, out_vtcm, lay.out_stride, it.dst, td.nb[1]);
    trace_begin(tr, HTP_EV_COMPUTE, (uint16_t)it.seq);
    pol.compute(it, in, out);
    trace_end(tr, HTP_EV_COMPUTE, (uint16_t)it.seq);

    if (it.pass == 1)
      ok &= dma_queue_push_token(q, nullptr, out_vtcm);
    else
      ok &= dma_queue_push_2d(q, it.dst, td.nb[1], out_vtcm, lay.out_stride, it.cols * 4, it.rows);
    if (units_left > 0) fetch(s);
  }
  // Epilogue: the last write-backs.
  trace_begin(tr, HTP_EV_FLUSH, 0);
  dma_queue_flush(q);
  trace_end(tr, HTP_EV_FLUSH, 0);
  return ok;
}

// Loads `bytes` from DDR into the worker's VTCM at `vtcm` before streaming (sinks, a weight
// row) and returns where to read them: the VTCM copy, or the DDR source in zero-copy mode.
inline const uint8_t* rw_preload(dma_queue* q, uint8_t* vtcm, const uint8_t* src, uint32_t bytes, bool* ok) {
  *ok &= dma_queue_push(q, vtcm, src, bytes);
  return dma_queue_pop(q).data;
}

// Float op params are bit-cast int32 (graph/ops.h).
inline float rw_param_f(const htp_op_desc& op, uint32_t i) {
  float f;
  __builtin_memcpy(&f, &op.params[i], 4);
  return f;
}

// Per-worker status collection, shared by the family jobs.
struct rw_status {
  htp_status s[HTP_MAX_THREADS];
  void reset() {
    for (htp_status& v : s) v = HTP_OK;
  }
  htp_status first(uint32_t n) const {
    for (uint32_t i = 0; i < n; ++i)
      if (s[i] != HTP_OK) return s[i];
    return HTP_OK;
  }
};

}  // namespace hexllm::htp
