// The streaming shared by the row-wise families (unary, act, norm, softmax), for one worker:
// the two modes of htp/abi/rowwise_params.h as blocks of the DMA pipeline (ops/pipeline.h).
// A worker walks its items (a block of whole rows, or one column chunk of one row in pass 0,
// 1 or 2) through HTP_RW_SLOTS slots of its VTCM area; pass-1 items write nothing back (their
// slot's output gets a token instead).
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
#include "htp/ops/pipeline.h"
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

// Unit range of worker i of n (rows, or tiles row * n_chunks + chunk when elementwise) within
// the device's rows (op_device_rows; all rows on a single device).
inline rw_range rw_worker_range(const htp_rw_plan& p, const htp_divisor& chunks, htp_mdev_range rows,
                                bool elementwise, uint32_t n, uint32_t i) {
  const uint64_t total = htp_rw_units(p, rows.count, elementwise);
  const uint64_t first = htp_rw_units(p, rows.start, elementwise);
  const uint64_t begin = first + total * i / n, end = first + total * (i + 1) / n;
  rw_range r{(uint32_t)begin, 0, end - begin};
  if (elementwise && p.n_chunks > 1) {
    r.row = htp_fastdiv((uint32_t)begin, chunks);
    r.chunk = (uint32_t)begin - r.row * p.n_chunks;
  }
  return r;
}

// Worker i's items as blocks of dma_pipeline_run. Only the inputs a pass uses are pushed; the
// policy sees them at their input number, the others null.
template <class P>
struct rw_blocks {
  using block = rw_item;
  static constexpr uint32_t slots = HTP_RW_SLOTS;
  static constexpr uint32_t max_in = HTP_RW_INPUTS;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const htp_op_ctx* ctx;
  const htp_rw_plan* plan;
  P* pol;
  uint8_t* area;
  bool chunked;
  // Cursor over the worker's items.
  uint32_t row, chunk, pass;
  uint64_t units_left;  // rows (whole mode) or tiles / row passes (chunked)
  uint32_t seq;

  uint8_t* slot(uint32_t s) const { return area + s * plan->layout.slot_bytes; }

  bool more() const { return units_left > 0; }
  void next(rw_item* out) {
    const htp_rw_plan& p = *plan;
    const htp_tensor& td = ctx->dst->t;
    rw_item it;
    const uint32_t i23 = htp_fastdiv(row, p.ne1);
    it.row = row;
    it.i1 = row - i23 * p.ne1.div;
    it.i2 = htp_fastmod(i23, p.ne2);
    it.i3 = htp_fastdiv(i23, p.ne2);
    it.pass = pass;
    it.seq = seq++;
    if (!chunked) {
      uint32_t rows = p.block_rows;
      if (units_left < rows) rows = (uint32_t)units_left;
      if (td.ne[1] - it.i1 < rows) rows = td.ne[1] - it.i1;  // stay within the (i2, i3) plane
      it.rows = rows;
      it.col = 0;
      it.cols = td.ne[0];
      row += rows;
      units_left -= rows;
    } else {
      it.rows = 1;
      it.col = chunk * p.chunk_cols;
      it.cols = htp_min(p.chunk_cols, td.ne[0] - it.col);
      --units_left;
      if (++chunk == p.n_chunks) {
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
    *out = it;
  }
  uint32_t push_in(dma_queue* q, const rw_item& it, uint32_t s, bool* ok) const {
    const htp_rw_layout& lay = plan->layout;
    uint32_t n = 0;
    for (uint32_t k = 0; k < HTP_RW_INPUTS; ++k) {
      if (!pol->in_used(k, it.pass)) continue;
      *ok &= dma_queue_push_2d(q, slot(s) + lay.in_offset(k), lay.in_stride[k],
                               pol->in_addr(k, it.i1, it.i2, it.i3, it.col), pol->in_row_stride(k),
                               it.cols * pol->in_elem(k), it.rows);
      ++n;
    }
    return n;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s) + plan->layout.out_offset; }
  void compute(dma_queue* q, const rw_item& it, uint32_t s, const dma_ptr* popped) const {
    dma_ptr in[HTP_RW_INPUTS] = {};
    for (uint32_t k = 0, n = 0; k < HTP_RW_INPUTS; ++k)
      if (pol->in_used(k, it.pass)) in[k] = popped[n++];
    const htp_rw_layout& lay = plan->layout;
    const dma_view out = it.pass == 1 ? dma_view{out_buf(s), lay.out_stride}
                                      : dma_queue_write_target(q, out_buf(s), lay.out_stride, it.dst,
                                                               ctx->dst->t.nb[1]);
    pol->compute(it, in, out);
  }
  uint32_t push_out(dma_queue* q, const rw_item& it, uint32_t s, bool* ok) const {
    if (it.pass == 1)
      *ok &= dma_queue_push_token(q, nullptr, out_buf(s));
    else
      *ok &= dma_queue_push_2d(q, it.dst, ctx->dst->t.nb[1], out_buf(s), plan->layout.out_stride, it.cols * 4,
                               it.rows);
    return 1;
  }
};

// Runs worker `i`'s items. `passes` is 2 for row-reducing families (chunked rows take two
// passes), 1 for elementwise ones. Returns false on a DMA queue failure.
template <class P>
bool rw_stream(const htp_op_ctx* ctx, const htp_rw_plan& plan, const rw_range& range, uint32_t passes, P& pol,
               uint32_t i) {
  const bool chunked = plan.n_chunks > 1;
  rw_blocks<P> k{ctx, &plan, &pol, ctx->vtcm_base + (uint64_t)i * plan.layout.thread_bytes, chunked,
                 range.row, range.chunk, chunked && passes == 2 ? 1u : 0u, range.units, 0};
  if (chunked && passes == 2) k.units_left *= (uint64_t)plan.n_chunks * 2;
  return dma_pipeline_run(&ctx->dma[i], &ctx->trace[i], k);
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

}  // namespace hexllm::htp
