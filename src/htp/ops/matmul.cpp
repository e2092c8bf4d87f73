// Matmul family: MUL_MAT and MUL_MAT_ID with weights repacked into 8-row tiles, F32
// activations and output. The plan (chunks, quantization run, weight units, segments, VTCM) is
// described in htp/abi/matmul_params.h; this file runs it.
//
// Activations are quantized once per chunk into the shared act area (run 1, all quant workers,
// then the barrier of work_queue_run); every matmul worker then streams row tiles through a ring
// of weight units (run 2) and multiplies each unit with the act rows of a segment: GEMV for one
// act row, GEMM otherwise, so prefill reads each weight unit once per chunk while the GEMM
// micro-kernel walks all the segment's act rows over it. When the chunk is one segment of
// whole-K units (decode, plain 2-D prefill) a worker that is done with its own range takes
// units from the back of another's: with a fixed half each, the worker that got less memory
// bandwidth would leave the other idle at the end of every op. Its own units it takes in
// order, as one stream: handing out units round-robin from one counter instead cut decode
// matmuls at 2 threads by 15-30% (Zen 5), each unit a fresh start for the prefetchers.
//
// One worker's DMA queue carries its weight prefetches and output write-backs in one FIFO. The
// compute side needs them in a different order (the unit ring is deeper than the 2 out slots),
// so pops always take the oldest entry and park popped weight units until they are used
// (mm_ring): every push still has its pop, in push order.
//
// MUL_MAT_ID: the caller thread first scans ids (DMA'd into VTCM) into per-expert lists of
// (slot, token) pairs; act rows are those pairs in expert order, so a segment is one expert's
// pairs and its GEMM runs on that expert's slice. Out-of-range ids fail the op before any math.
#include "htp/abi/matmul_fused_params.h"
#include "htp/ops/matmul_impl.h"
#include "htp/util.h"
#include "htp/vec/vec.h"

namespace hexllm::htp {

namespace {

constexpr uint32_t kQueueMask = DMA_QUEUE_CAPACITY - 1;
constexpr uint8_t kNotWeight = 0xff;
constexpr uint8_t kAddend = 0xfe;  // ring entry: a fused op's addend rows

// The F32 source row of act row r.
inline const uint8_t* act_src_row(const mm_job& j, uint32_t r) {
  const tensor_ref& b = *j.x;
  if (j.s.opcode == HTP_OP_MUL_MAT) {
    const mm_batch x = mm_batch_of(j, r);
    return b.data + (uint64_t)x.n * b.t.nb[1] + (uint64_t)x.i2 * b.t.nb[2] + (uint64_t)x.i3 * b.t.nb[3];
  }
  const mm_pair x = mm_pair_of(j, j.pairs[r]);
  return b.data + (uint64_t)htp_fastmod(x.i, j.p.div[1]) * b.t.nb[1] + (uint64_t)x.t * b.t.nb[2];
}

// The dst row of act row r (a fused FFN part: its VTCM result row).
inline uint8_t* dst_row(const mm_job& j, uint32_t r) {
  if (j.local != nullptr) return j.local + (uint64_t)(r - j.chunk0) * j.local_stride;
  return mm_out_row(j, *j.d, r);
}

// The weight slice MUL_MAT act row r multiplies with.
inline const uint8_t* slice_of(const mm_job& j, uint32_t r) {
  const mm_batch x = mm_batch_of(j, r);
  const uint32_t slice = htp_fastdiv(x.i2, j.p.div[2]) + j.s.b2 * htp_fastdiv(x.i3, j.p.div[3]);
  return j.w->data + slice * j.s.slice_bytes;
}

// ---- run 1: activation quantization -----------------------------------------------------------
// Work units are (act row, piece of quant_blocks K blocks), split evenly over the workers; each
// piece streams DDR -> DMA -> staging slot -> quantizer -> act area.

}  // namespace

void mm_quant_worker(unsigned n, unsigned w, void* data) {
  auto* j = (mm_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_mm_layout& lay = j->p.lay;
  const uint32_t qb = j->p.cfg.quant_blocks, parts = j->q_parts;
  const uint64_t units = (uint64_t)(j->chunk_end - j->chunk0) * parts;
  const uint32_t u_begin = (uint32_t)(units * w / n), u_end = (uint32_t)(units * (w + 1) / n);
  j->status[w] = HTP_OK;
  if (u_begin == u_end) return;

  dma_queue* q = &ctx->dma[w];
  trace_buf* tr = &ctx->trace[w];
  uint8_t* area = ctx->vtcm_base + lay.thread_offset + (uint64_t)w * lay.thread_bytes;
  struct piece {
    uint8_t* act;
    uint32_t k;
    uint32_t row;
  } pieces[HTP_MM_QUANT_SLOTS];
  uint32_t row = u_begin / parts, part = u_begin - row * parts;  // once per worker
  uint32_t next = u_begin, n_fetched = 0;
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    const uint32_t b0 = part * qb, k0 = b0 * j->kblock;
    const uint32_t k = htp_min(qb * j->kblock, j->s.k - k0);
    pieces[s] = {j->act + (uint64_t)row * lay.act_stride + (uint64_t)b0 * j->act_block, k, row};
    ok &= dma_queue_push(q, area + (uint64_t)s * lay.qslot_bytes, act_src_row(*j, j->chunk0 + row) + (uint64_t)k0 * 4,
                         k * 4);
    ++n_fetched;
    if (++next < u_end && ++part == parts) {
      part = 0;
      ++row;
    }
  };
  for (uint32_t s = 0; s < HTP_MM_QUANT_SLOTS && next < u_end; ++s) fetch(s);
  for (uint32_t i = 0; i < n_fetched && ok; ++i) {
    const uint32_t s = i % HTP_MM_QUANT_SLOTS;
    const piece pc = pieces[s];
    trace_begin(tr, HTP_EV_DMA_WAIT, (uint16_t)pc.row);
    const dma_ptr x = dma_queue_pop(q);
    trace_end(tr, HTP_EV_DMA_WAIT, (uint16_t)pc.row);
    trace_begin(tr, HTP_EV_QUANT, (uint16_t)pc.row);
    j->quant((const float*)x.data, pc.act, pc.k);
    trace_end(tr, HTP_EV_QUANT, (uint16_t)pc.row);
    if (next < u_end) fetch(s);
  }
  dma_queue_flush(q);
  j->status[w] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

// ---- run 2: weight streaming ------------------------------------------------------------------

namespace {

// A run of act rows that share one weight slice and (MUL_MAT) one dst row stride.
struct mm_seg {
  const uint8_t* w;  // the slice's first row tile
  uint32_t first;    // first act row
  uint32_t rows;
};

// The segments of the current chunk, in order.
struct seg_iter {
  uint32_t pos;      // MUL_MAT: next act row; ID: next expert
  uint32_t seg_end;  // MUL_MAT: where the current segment ends

  void start(const mm_job& j) {
    if (j.s.opcode == HTP_OP_MUL_MAT) {
      pos = j.chunk0;
      seg_end = (j.chunk0 / j.s.seg_rows + 1) * j.s.seg_rows;  // once per chunk and worker
    } else {
      pos = 0;
      seg_end = 0;
    }
  }

  bool next(const mm_job& j, mm_seg* out) {
    if (j.s.opcode == HTP_OP_MUL_MAT) {
      if (pos >= j.chunk_end) return false;
      const uint32_t end = htp_min(seg_end, j.chunk_end);
      *out = {slice_of(j, pos), pos, end - pos};
      pos = end;
      if (end == seg_end) seg_end += j.s.seg_rows;
      return true;
    }
    for (; pos < j.s.n_slices; ++pos) {
      const uint32_t lo = htp_max(j.offs[pos], j.chunk0), hi = htp_min(j.offs[pos + 1], j.chunk_end);
      if (lo < hi) {
        *out = {j.w->data + pos * j.s.slice_bytes, lo, hi - lo};
        ++pos;
        return true;
      }
    }
    return false;
  }
};

// Weight units in order: segments, then this worker's tile groups, then K chunks.
struct unit_iter {
  seg_iter segs;
  mm_seg seg;
  bool valid;
  uint32_t tile;   // first row tile of the unit's group
  uint32_t tiles;  // row tiles in the group
  uint32_t kc;     // K chunk

  void start(const mm_job& j, uint32_t t_begin, uint32_t t_end) {
    segs.start(j);
    valid = segs.next(j, &seg);
    tile = t_begin;
    tiles = htp_min(j.p.cfg.group_tiles, t_end - tile);
    kc = 0;
  }

  void advance(const mm_job& j, uint32_t t_begin, uint32_t t_end) {
    if (++kc < j.n_kc) return;
    kc = 0;
    tile += j.p.cfg.group_tiles;
    if (tile >= t_end) {
      tile = t_begin;
      valid = segs.next(j, &seg);
    }
    tiles = htp_min(j.p.cfg.group_tiles, t_end - tile);
  }

  // Dynamic split: worker w's next unit, from the front of its own range or else from the back
  // of another worker's (mm_job::spans).
  void claim(mm_job& j, unsigned w) {
    const unsigned n = j.p.cfg.n_threads;
    valid = false;
    for (unsigned i = 0; i < n && !valid; ++i) {
      const unsigned owner = (w + i) % n;
      uint32_t* span = &j.spans[owner];
      for (uint32_t s = atomic_load_seq(span);; s = atomic_load_seq(span)) {
        const uint32_t front = mm_span_front(s), back = mm_span_back(s);
        if (front >= back) break;
        const bool own = i == 0;
        const uint32_t u = own ? front : back - 1;
        if (!atomic_cas(span, s, own ? mm_span_pack(front + 1, back) : mm_span_pack(front, back - 1))) continue;
        const htp_mdev_range r = mm_dynamic_unit(j, owner, u);
        tile = r.start;
        tiles = r.count;
        valid = true;
        break;
      }
    }
  }
};

// The worker's DMA FIFO seen from the compute side: pops retire entries oldest first and park
// the weight units among them in their ring slots until the compute loop takes them.
struct mm_ring {
  dma_queue* q;
  bool ok;
  uint8_t slot_of[DMA_QUEUE_CAPACITY];  // per queue entry: the ring slot it fills, or kNotWeight
  bool parked[HTP_MM_MAX_PREFETCH];
  dma_ptr unit[HTP_MM_MAX_PREFETCH];
  dma_ptr addend;  // where the last addend push can be read

  void pop_one() {
    if (dma_queue_empty(q)) {  // a bookkeeping bug: never wait on an empty queue
      ok = false;
      return;
    }
    const uint8_t slot = slot_of[q->pop_seq & kQueueMask];
    const dma_ptr x = dma_queue_pop(q);
    if (slot == kAddend) {
      addend = x;
    } else if (slot != kNotWeight) {
      unit[slot] = x;
      parked[slot] = true;
    }
  }

  // Returns the queue sequence number of the push.
  uint32_t push(void* dst, uint32_t dst_stride, const void* src, uint32_t src_stride, uint32_t row_bytes,
                uint32_t n_rows, uint8_t slot) {
    while (ok && dma_queue_depth(q) >= DMA_QUEUE_CAPACITY) pop_one();
    const uint32_t seq = q->push_seq;
    slot_of[seq & kQueueMask] = slot;
    ok &= dma_queue_push_2d(q, dst, dst_stride, src, src_stride, row_bytes, n_rows);
    return seq;
  }

  bool take(uint32_t slot, dma_ptr* out) {
    while (ok && !parked[slot]) pop_one();
    parked[slot] = false;
    *out = unit[slot];
    return ok;
  }

  // Until the entry pushed as `seq` has completed.
  void wait(uint32_t seq) {
    while (ok && (int32_t)(q->pop_seq - seq) <= 0) pop_one();
  }
};

// Float weights always take the GEMM kernel: its sums run in the same order for any number of
// act rows (the GEMV kernel's do not), so decode and batched evaluation give the same bits, as
// they do for quantized weights (vec.h). Float matrices are memory-bound, so GEMV's shape buys nothing.
inline void multiply(const mm_job& j, const uint8_t* w, const uint8_t* act, uint32_t n_act, float* out,
                     uint32_t out_stride, uint32_t k, uint32_t nrows) {
  if (n_act == 1 && j.gemv != nullptr && !j.float_weights)
    j.gemv(w, act, out, k, nrows);
  else
    j.gemm(w, act, j.p.lay.act_stride, n_act, out, out_stride / 4, k, nrows);
}

// Fused MUL_MAT_ADD / bias: the addend's rows for this unit come through the worker's FIFO into
// its staging and are added to the final sums (one IEEE add per element, as the ADD op does).
bool add_addend(const mm_job& j, mm_ring* ring, unsigned w, const mm_seg& seg, uint32_t r0, uint32_t nrows,
                const dma_view& out) {
  const tensor_ref& a = *j.addend;
  uint8_t* stage = j.addend_area + (uint64_t)w * j.addend_bytes;
  const uint32_t n_rows = j.addend_bcast ? 1 : seg.rows;
  const uint8_t* src = (j.addend_bcast ? a.data : mm_out_row(j, a, seg.first)) + (uint64_t)r0 * 4;
  ring->wait(ring->push(stage, j.p.lay.out_stride, src, a.t.nb[1], nrows * 4, n_rows, kAddend));
  if (!ring->ok) return false;
  for (uint32_t r = 0; r < seg.rows; ++r) {
    float* o = (float*)(out.ptr + (uint64_t)r * out.stride);
    const float* b = (const float*)(ring->addend.data + (j.addend_bcast ? 0 : (uint64_t)r * ring->addend.stride));
    for (uint32_t i = 0; i < nrows; ++i) o[i] = o[i] + b[i];
  }
  return true;
}

}  // namespace

void mm_worker(unsigned n, unsigned w, void* data) {
  auto* j = (mm_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_mm_config& c = j->p.cfg;
  const htp_mm_layout& lay = j->p.lay;
  // MUL_MAT_ID's dst rows are scattered, so always staged; a fused part's VTCM rows are not.
  const bool scatter = j->s.opcode == HTP_OP_MUL_MAT_ID && j->local == nullptr;
  const bool dyn = j->dynamic;
  const htp_mdev_range part = htp_worker_part({j->tile0, j->tile_end - j->tile0}, w, n);
  const uint32_t t_begin = dyn ? j->tile0 : part.start;
  const uint32_t t_end = dyn ? j->tile_end : part.start + part.count;
  j->status[w] = HTP_OK;
  if (t_begin == t_end) return;

  const uint32_t dst_stride = j->local != nullptr ? j->local_stride : j->d->t.nb[1];
  dma_queue* q = &ctx->dma[w];
  trace_buf* tr = &ctx->trace[w];
  uint8_t* area = ctx->vtcm_base + j->area_offset + (uint64_t)w * j->area_stride;
  float* partial = (float*)(area + lay.out_offset + (uint64_t)HTP_MM_OUT_SLOTS * lay.out_slot_bytes);
  const bool split = j->n_kc > 1;
  const uint32_t kc_elems = c.k_blocks * j->kblock;

  mm_ring ring;
  ring.q = q;
  ring.ok = true;
  for (uint32_t s = 0; s < HTP_MM_MAX_PREFETCH; ++s) ring.parked[s] = false;

  auto push_unit = [&](const unit_iter& u, uint32_t slot) {
    const uint32_t gt = u.tiles;
    const uint8_t* src = u.seg.w + u.tile * j->row_bytes;
    uint32_t bytes = (uint32_t)(gt * j->row_bytes);
    if (split) {
      src += (uint64_t)u.kc * c.k_blocks * j->block_bytes;
      bytes = htp_min(c.k_blocks, j->s.n_blocks - u.kc * c.k_blocks) * j->block_bytes;
    }
    ring.push(area + (uint64_t)slot * lay.slot_bytes, bytes, src, bytes, bytes, 1, (uint8_t)slot);
  };

  // Dynamic: comp takes the groups in the order fetch claimed them (slot_tile per ring slot).
  uint32_t slot_tile[HTP_MM_MAX_PREFETCH] = {}, slot_tiles[HTP_MM_MAX_PREFETCH] = {};
  uint32_t n_claimed = 0, n_done = 0;
  unit_iter fetch, comp;
  fetch.start(*j, t_begin, t_end);
  if (dyn) fetch.claim(*j, w);
  comp = fetch;
  auto next_fetch = [&] {
    if (dyn) fetch.claim(*j, w);
    else fetch.advance(*j, t_begin, t_end);
  };
  for (uint32_t s = 0; s < c.n_prefetch && fetch.valid; ++s) {
    push_unit(fetch, s);
    slot_tile[s] = fetch.tile;
    slot_tiles[s] = fetch.tiles;
    ++n_claimed;
    next_fetch();
  }

  uint32_t slot = 0, out_slot = 0;
  bool wb_pending[HTP_MM_OUT_SLOTS] = {};
  uint32_t wb_seq[HTP_MM_OUT_SLOTS] = {};
  if (dyn) comp.valid = n_claimed > 0;
  while (comp.valid && ring.ok) {
    if (dyn) {
      comp.tile = slot_tile[slot];
      comp.tiles = slot_tiles[slot];
    }
    const mm_seg& seg = comp.seg;
    const uint16_t info = (uint16_t)comp.tile;
    trace_begin(tr, HTP_EV_DMA_WAIT, info);
    dma_ptr wp;
    if (!ring.take(slot, &wp)) break;
    if (comp.kc == 0 && wb_pending[out_slot]) ring.wait(wb_seq[out_slot]);  // the out slot is free
    trace_end(tr, HTP_EV_DMA_WAIT, info);

    const uint32_t gt = comp.tiles;
    const uint32_t r0 = comp.tile * kHtpTileRows;
    const uint32_t nrows = htp_min(gt * kHtpTileRows, j->s.m - r0);
    uint8_t* slot_out = area + lay.out_offset + (uint64_t)out_slot * lay.out_slot_bytes;
    // Contiguous dst rows are written in place in zero-copy mode; scattered ones always staged.
    const dma_view out = scatter ? dma_view{slot_out, lay.out_stride}
                                 : dma_queue_write_target(q, slot_out, lay.out_stride,
                                                          dst_row(*j, seg.first) + (uint64_t)r0 * 4, dst_stride);
    const uint8_t* act = j->act + (uint64_t)(seg.first - j->chunk0) * lay.act_stride +
                         (uint64_t)comp.kc * c.k_blocks * j->act_block;
    const uint32_t k = htp_min(kc_elems, j->s.k - comp.kc * kc_elems);

    trace_begin(tr, HTP_EV_COMPUTE, info);
    if (comp.kc == 0) {
      multiply(*j, wp.data, act, seg.rows, (float*)out.ptr, out.stride, k, nrows);
    } else {  // K split: this chunk's partial sums into the scratch, then added
      multiply(*j, wp.data, act, seg.rows, partial, lay.out_stride, k, nrows);
      for (uint32_t a = 0; a < seg.rows; ++a) {
        float* o = (float*)(out.ptr + (uint64_t)a * out.stride);
        const float* pp = partial + (uint64_t)a * (lay.out_stride / 4);
        for (uint32_t r = 0; r < nrows; ++r) o[r] += pp[r];
      }
    }
    trace_end(tr, HTP_EV_COMPUTE, info);

    if (comp.kc + 1 == j->n_kc) {  // the group's outputs are final: write back
      if (j->addend != nullptr && !add_addend(*j, &ring, w, seg, r0, nrows, out)) break;
      if (!scatter) {
        wb_seq[out_slot] = ring.push(dst_row(*j, seg.first) + (uint64_t)r0 * 4, dst_stride, slot_out, lay.out_stride,
                                     nrows * 4, seg.rows, kNotWeight);
      } else {
        for (uint32_t a = 0; a < seg.rows; ++a) {
          uint8_t* d = dst_row(*j, seg.first + a) + (uint64_t)r0 * 4;
          const uint8_t* s = slot_out + (uint64_t)a * lay.out_stride;
          // Zero-copy queues move nothing; scattered rows are then copied here.
          if (q->mode == HTP_DMA_ZERO_COPY) htp_memcpy(d, s, nrows * 4);
          wb_seq[out_slot] = ring.push(d, nrows * 4, s, nrows * 4, nrows * 4, 1, kNotWeight);
        }
      }
      wb_pending[out_slot] = true;
      out_slot ^= 1;
    }
    if (fetch.valid) {  // refill the slot just consumed
      push_unit(fetch, slot);
      slot_tile[slot] = fetch.tile;
      slot_tiles[slot] = fetch.tiles;
      ++n_claimed;
      next_fetch();
    }
    slot = slot + 1 == c.n_prefetch ? 0 : slot + 1;
    if (dyn) comp.valid = ++n_done < n_claimed;
    else comp.advance(*j, t_begin, t_end);
  }
  trace_begin(tr, HTP_EV_FLUSH, (uint16_t)t_end);
  dma_queue_flush(q);
  trace_end(tr, HTP_EV_FLUSH, (uint16_t)t_end);
  j->status[w] = ring.ok && !comp.valid ? HTP_OK : HTP_ERR_INTERNAL;
}

// ---- MUL_MAT_ID routing -------------------------------------------------------------------------

// Sorts the pairs (i, t) by expert ids[i, t] (stable) into j->pairs with ranges j->offs. Runs on
// the calling thread (worker 0) before any other work.
htp_status mm_route_ids(mm_job* j) {
  const htp_op_ctx* ctx = j->ctx;
  const tensor_ref& ids = *j->ids;
  const htp_mm_aux a = htp_mm_aux_layout(j->p.lay.aux_offset, j->s);
  auto* offs = (uint32_t*)(ctx->vtcm_base + a.offs);
  auto* pairs = (uint32_t*)(ctx->vtcm_base + a.pairs);
  const uint32_t n_used = j->p.div[0].div, n_tok = j->s.rows / n_used, n_exp = j->s.n_slices;
  dma_queue* q = &ctx->dma[0];
  trace_buf* tr = &ctx->trace[0];

  trace_begin(tr, HTP_EV_DMA_WAIT, 0xffff);
  if (!dma_queue_push_2d(q, ctx->vtcm_base + a.ids, n_used * 4, ids.data, ids.t.nb[1], n_used * 4, n_tok))
    return HTP_ERR_INTERNAL;
  const dma_ptr x = dma_queue_pop(q);
  trace_end(tr, HTP_EV_DMA_WAIT, 0xffff);
  // The ids are read twice (validate, then route), so both reads must see one private copy:
  // in zero-copy mode the popped block is the host's shared memory, which may change between.
  auto* ids_copy = ctx->vtcm_base + a.ids;
  const uint32_t row_bytes = n_used * 4;
  if (x.data != ids_copy)
    for (uint32_t t = 0; t < n_tok; ++t) htp_memcpy(ids_copy + (uint64_t)t * row_bytes, x.data + (uint64_t)t * x.stride, row_bytes);

  for (uint32_t e = 0; e <= n_exp; ++e) offs[e] = 0;
  for (uint32_t t = 0; t < n_tok; ++t) {
    const int32_t* row = (const int32_t*)(ids_copy + (uint64_t)t * row_bytes);
    for (uint32_t i = 0; i < n_used; ++i) {
      const int32_t e = row[i];
      if (e < 0 || (uint32_t)e >= n_exp) return HTP_ERR_INVALID_PARAMS;
      offs[e + 1]++;
    }
  }
  for (uint32_t e = 0; e < n_exp; ++e) offs[e + 1] += offs[e];  // offs[e] = start of expert e
  for (uint32_t t = 0, pq = 0; t < n_tok; ++t) {
    const int32_t* row = (const int32_t*)(ids_copy + (uint64_t)t * row_bytes);
    for (uint32_t i = 0; i < n_used; ++i, ++pq) pairs[offs[row[i]]++] = pq;  // offs[e] -> end of e
  }
  for (uint32_t e = n_exp; e > 0; --e) offs[e] = offs[e - 1];
  offs[0] = 0;
  j->offs = offs;
  j->pairs = pairs;
  return HTP_OK;
}


void mm_job_chunk(mm_job* j, uint32_t c0) {
  j->chunk0 = c0;
  j->chunk_end = c0 + htp_min(j->p.cfg.act_rows, j->s.rows - c0);
  j->dynamic = j->s.opcode == HTP_OP_MUL_MAT && j->n_kc == 1 && j->p.cfg.n_threads > 1 &&
               c0 / j->s.seg_rows == (j->chunk_end - 1) / j->s.seg_rows && j->tile_end - j->tile0 < kMmSpanLimit;
  if (!j->dynamic) return;
  // Tail units: a quarter group, but at least the smallest unit that amortizes its overhead,
  // in whole 4-tile steps (the zmm GEMV's 4 weight streams; see htp_mm_params_build).
  const uint32_t g = j->p.cfg.group_tiles;
  const uint32_t floor_tiles = (uint32_t)((HTP_MM_GEMV_MIN_UNIT_BYTES + j->row_bytes - 1) / j->row_bytes);
  j->tail_tiles = htp_min(g, (htp_max((g + 3) / 4, floor_tiles) + 3) & ~3u);
  for (uint32_t w = 0; w < j->p.cfg.n_threads; ++w)
    j->spans[w] = mm_span_pack(0, mm_dynamic_units(*j, w));
}

htp_status op_matmul(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (htp_mmf_is_fused(opcode)) return op_matmul_fused(ctx);
  if (opcode != HTP_OP_MUL_MAT && opcode != HTP_OP_MUL_MAT_ID) return HTP_ERR_NO_SUPPORT;
  const bool is_id = opcode == HTP_OP_MUL_MAT_ID;
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr || (is_id && ctx->src[2] == nullptr))
    return HTP_ERR_INVALID_PARAMS;

  htp_mm_shape s{};
  htp_status st = htp_mm_shape_build(opcode, ctx->dst->t, ctx->src[0]->t, ctx->src[1]->t,
                                     is_id ? &ctx->src[2]->t : nullptr, &s);
  if (st != HTP_OK) return st;
  if (htp_mm_shape_empty(s)) return HTP_OK;
  const htp_mm_params p = htp_kparams_get<htp_mm_params>(*ctx->op);
  st = htp_mm_params_check(p, s, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;

  mm_job job;
  st = mm_job_init(&job, ctx, s, p, ctx->src[0], ctx->src[1], ctx->dst, is_id ? ctx->src[2] : nullptr);
  if (st != HTP_OK) return st;
  if (is_id) {
    st = mm_route_ids(&job);
    if (st != HTP_OK) return st;
  }
  // Devices split the output columns in tiles of whole 128-byte lines of every dst row.
  if (ctx->mdev.count > 1) {
    const htp_mdev_range tiles =
        htp_mdev_partition(s.n_tiles, htp_mdev_cols_per_chunk(ctx->dst->t, kHtpTileRows), ctx->mdev);
    if (tiles.count == 0) return HTP_OK;
    job.tile0 = tiles.start;
    job.tile_end = tiles.start + tiles.count;
  }
  for (uint32_t c0 = 0; c0 < s.rows; c0 += p.cfg.act_rows) {
    mm_job_chunk(&job, c0);
    st = run_workers(ctx, mm_quant_worker, &job, job.status, p.cfg.quant_threads);
    if (st == HTP_OK) st = run_workers(ctx, mm_worker, &job, job.status, p.cfg.n_threads);
    if (st != HTP_OK) return st;
  }
  return HTP_OK;
}

}  // namespace hexllm::htp
