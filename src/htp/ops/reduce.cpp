// Reduce family: SUM_ROWS, ARGSORT and TOP_K on F32 rows.
//
// Rows are split across devices by output rows (whole 128-byte lines of dst), then across
// workers from (n, i) alone and stream through the DMA pipeline of
// ops/pipeline.h: one 2-D fetch of a block of rows, the row-wise work, one 2-D write-back of
// the block's results.
//
// Orderings are exact and deterministic: a float maps to an unsigned key with the same order
// (-0 and +0 to the same key, as they compare equal), and a stable LSD radix sort over the keys
// (complemented for descending order) gives the reference's stable-sort result, ties in index
// order. TOP_K with a small k (the MoE router) selects in one pass without sorting.
#include "htp/abi/reduce_params.h"
#include "htp/ops/ops.h"
#include "htp/ops/pipeline.h"
#include "htp/ops/top_k_select.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

namespace {

// Stable sort of (key, idx) pairs by key. Small rows: insertion sort in place. Larger: LSD radix
// sort, 8 bits a pass, ping-ponging with key2/idx2 and skipping passes where every key has the
// same byte. Returns where the sorted indices ended up (idx or idx2).
const uint32_t* stable_sort(uint32_t* key, uint32_t* idx, uint32_t* key2, uint32_t* idx2, uint32_t n) {
  if (n <= 32) {
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t k = key[i], v = idx[i];
      uint32_t j = i;
      for (; j > 0 && key[j - 1] > k; --j) key[j] = key[j - 1], idx[j] = idx[j - 1];
      key[j] = k, idx[j] = v;
    }
    return idx;
  }
  uint32_t count[256];
  for (uint32_t shift = 0; shift < 32; shift += 8) {
    for (uint32_t b = 0; b < 256; ++b) count[b] = 0;
    for (uint32_t i = 0; i < n; ++i) ++count[(key[i] >> shift) & 0xff];
    if (count[(key[0] >> shift) & 0xff] == n) continue;  // one bucket: the pass would not move anything
    uint32_t sum = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t at = count[(key[i] >> shift) & 0xff]++;
      key2[at] = key[i];
      idx2[at] = idx[i];
    }
    uint32_t* t = key;
    key = key2, key2 = t;
    t = idx;
    idx = idx2, idx2 = t;
  }
  return idx;
}

struct reduce_job {
  const htp_op_ctx* ctx;
  const vmath_ops* vm;
  htp_reduce_params p;
  uint32_t opcode;
  htp_mdev_range rows;  // this device's rows (one output row per source row)
  bool descending;  // ARGSORT order (TOP_K is always descending)
  htp_status status[HTP_MAX_THREADS];
};

// Indices of the k largest of x[0..n), largest first, ties by lower index.
void top_k_select(const float* x, uint32_t n, uint32_t k, int32_t* out) {
  topk_selection sel;
  sel.k = k;
  sel.offer(x, n, 0);
  htp_memcpy(out, sel.at, (size_t)k * 4);
}

// ARGSORT of a row, or TOP_K by a full sort (first k of the descending order).
void sort_row(const float* x, uint32_t n, bool descending, uint8_t* scratch, int32_t* out, uint32_t n_out) {
  auto* key = (uint32_t*)scratch;
  uint32_t* idx = key + n;
  uint32_t* key2 = idx + n;
  uint32_t* idx2 = key2 + n;
  const uint32_t flip = descending ? 0xffffffffu : 0u;
  for (uint32_t i = 0; i < n; ++i) {
    key[i] = order_key(x[i]) ^ flip;
    idx[i] = i;
  }
  const uint32_t* sorted = stable_sort(key, idx, key2, idx2, n);
  htp_memcpy(out, sorted, (size_t)n_out * 4);
}

struct reduce_block {
  uint32_t i1, i2, i3;
  uint32_t rows;
};

// One worker's blocks for dma_pipeline_run: src rows in, one result row per src row out.
struct reduce_blocks {
  using block = reduce_block;
  static constexpr uint32_t slots = HTP_REDUCE_SLOTS;
  static constexpr uint32_t max_in = 1;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const reduce_job* j;
  uint8_t* area;
  uint32_t next_row, r_end;

  uint8_t* slot(uint32_t s, uint32_t offset) const { return area + s * j->p.layout.slot_bytes + offset; }
  uint8_t* dst_at(const block& b) const {
    const htp_tensor& td = j->ctx->dst->t;
    return j->ctx->dst->data + (uint64_t)b.i1 * td.nb[1] + (uint64_t)b.i2 * td.nb[2] + (uint64_t)b.i3 * td.nb[3];
  }

  bool more() const { return next_row < r_end; }
  void next(block* b) {
    const htp_reduce_params& p = j->p;
    const uint32_t i23 = htp_fastdiv(next_row, p.ne1);
    b->i1 = next_row - i23 * p.ne1.div;
    b->i2 = htp_fastmod(i23, p.ne2);
    b->i3 = htp_fastdiv(i23, p.ne2);
    b->rows = htp_min(htp_min(p.block_rows, r_end - next_row), p.ne1.div - b->i1);
    next_row += b->rows;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_reduce_params& p = j->p;
    const htp_tensor& ts = j->ctx->src[0]->t;
    const uint8_t* src = j->ctx->src[0]->data + (uint64_t)b.i1 * ts.nb[1] + (uint64_t)b.i2 * ts.nb[2] +
                         (uint64_t)b.i3 * ts.nb[3];
    *ok &= dma_queue_push_2d(q, slot(s, p.layout.src_offset), p.layout.src_stride, src, ts.nb[1], p.src_row_bytes,
                             b.rows);
    return 1;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s, j->p.layout.dst_offset); }
  void compute(dma_queue* q, const block& b, uint32_t s, const dma_ptr* in) const {
    const uint32_t ne0 = j->ctx->src[0]->t.ne[0], k_out = j->ctx->dst->t.ne[0];
    uint8_t* scratch = area + j->p.layout.scratch_offset;
    const dma_view out = dma_queue_write_target(q, out_buf(s), j->p.layout.dst_stride, dst_at(b), j->ctx->dst->t.nb[1]);
    for (uint32_t r = 0; r < b.rows; ++r) {
      const float* x = (const float*)(in[0].data + (uint64_t)r * in[0].stride);
      uint8_t* y = out.ptr + (uint64_t)r * out.stride;
      if (j->opcode == HTP_OP_SUM_ROWS) {
        const float sum = j->vm->sum(x, ne0);
        htp_memcpy(y, &sum, 4);
      } else if (j->opcode == HTP_OP_TOP_K && !htp_topk_sorts(k_out)) {
        top_k_select(x, ne0, k_out, (int32_t*)y);
      } else {
        sort_row(x, ne0, j->descending, scratch, (int32_t*)y, k_out);
      }
    }
  }
  uint32_t push_out(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_reduce_params& p = j->p;
    *ok &= dma_queue_push_2d(q, dst_at(b), j->ctx->dst->t.nb[1], out_buf(s), p.layout.dst_stride, p.dst_row_bytes,
                             b.rows);
    return 1;
  }
};

void reduce_worker(unsigned n, unsigned w, void* data) {
  auto* j = (reduce_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_mdev_range part = htp_worker_part(j->rows, w, n);
  reduce_blocks k{j, ctx->vtcm_base + (uint64_t)w * j->p.layout.thread_bytes, part.start, part.start + part.count};
  j->status[w] = dma_pipeline_run(&ctx->dma[w], &ctx->trace[w], k) ? HTP_OK : HTP_ERR_INTERNAL;
}

// Streaming mode (htp_topk_streams: one long row under a selecting TOP_K). Worker w's piece of the
// row streams through the pipeline in blocks of piece_block elements into one selection, whose
// list then lies in the worker's scratch: k keys, then k indices.
struct topk_piece_block {
  uint32_t first, n;  // elements [first, first + n) of the row
};

struct topk_piece_blocks {
  using block = topk_piece_block;
  static constexpr uint32_t slots = HTP_REDUCE_SLOTS;
  static constexpr uint32_t max_in = 1;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const reduce_job* j;
  uint8_t* area;
  uint32_t cursor, end;
  topk_selection sel;

  uint8_t* slot(uint32_t s) const { return area + s * j->p.layout.slot_bytes; }
  bool more() const { return cursor < end; }
  void next(block* b) {
    b->first = cursor;
    b->n = htp_min(j->p.piece_block, end - cursor);
    cursor += b->n;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const uint8_t* src = j->ctx->src[0]->data + (uint64_t)b.first * 4;
    *ok &= dma_queue_push_2d(q, slot(s) + j->p.layout.src_offset, j->p.layout.src_stride, src, b.n * 4, b.n * 4, 1);
    return 1;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s) + j->p.layout.dst_offset; }
  void compute(dma_queue*, const block& b, uint32_t, const dma_ptr* in) { sel.offer((const float*)in[0].data, b.n, b.first); }
  uint32_t push_out(dma_queue* q, const block&, uint32_t s, bool* ok) const {
    *ok &= dma_queue_push_token(q, nullptr, out_buf(s));  // nothing to write back: the slot is free again
    return 1;
  }
};

void topk_piece_worker(unsigned n, unsigned w, void* data) {
  auto* j = (reduce_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const uint32_t ne0 = (uint32_t)ctx->src[0]->t.ne[0], k = (uint32_t)ctx->dst->t.ne[0];
  topk_piece_blocks b{j, ctx->vtcm_base + (uint64_t)w * j->p.layout.thread_bytes,
                      (uint32_t)((uint64_t)ne0 * w / n), (uint32_t)((uint64_t)ne0 * (w + 1) / n), {}};
  b.sel.k = k;
  j->status[w] = dma_pipeline_run(&ctx->dma[w], &ctx->trace[w], b) ? HTP_OK : HTP_ERR_INTERNAL;
  auto* keys = (uint32_t*)(b.area + j->p.layout.scratch_offset);
  auto* at = (int32_t*)(keys + k);
  for (uint32_t i = 0; i < k; ++i) {  // a piece holds at least HTP_TOPK_PIECE_MIN > k elements: full
    keys[i] = b.sel.key[i];
    at[i] = b.sel.at[i];
  }
}

// The row's k from the workers' lists: each is sorted by (key, index) and the pieces are in
// index order, so taking the smallest (key, index) head k times gives the one-pass result.
htp_status topk_pieces_merge(const reduce_job& j) {
  const htp_op_ctx* ctx = j.ctx;
  const uint32_t n = j.p.n_threads, k = (uint32_t)ctx->dst->t.ne[0];
  uint32_t head[HTP_MAX_THREADS] = {};
  dma_queue* q = &ctx->dma[0];
  uint8_t* vtcm_out = ctx->vtcm_base + j.p.layout.dst_offset;  // worker 0's first slot, free now
  const dma_view out = dma_queue_write_target(q, vtcm_out, j.p.layout.dst_stride, ctx->dst->data, ctx->dst->t.nb[1]);
  auto* y = (int32_t*)out.ptr;
  for (uint32_t r = 0; r < k; ++r) {
    uint32_t best = n;
    uint32_t best_key = 0;
    int32_t best_at = 0;
    for (uint32_t w = 0; w < n; ++w) {
      if (head[w] == k) continue;
      const auto* keys = (const uint32_t*)(ctx->vtcm_base + (uint64_t)w * j.p.layout.thread_bytes + j.p.layout.scratch_offset);
      const uint32_t kk = keys[head[w]];
      const int32_t at = ((const int32_t*)(keys + k))[head[w]];
      if (best == n || kk < best_key || (kk == best_key && at < best_at)) best = w, best_key = kk, best_at = at;
    }
    y[r] = best_at;
    ++head[best];
  }
  const bool ok = dma_queue_push_2d(q, ctx->dst->data, ctx->dst->t.nb[1], vtcm_out, j.p.layout.dst_stride, k * 4, 1);
  dma_queue_flush(q);
  return ok ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_reduce(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (opcode != HTP_OP_SUM_ROWS && opcode != HTP_OP_ARGSORT && opcode != HTP_OP_TOP_K) return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor& ts = ctx->src[0]->t;
  const int32_t* params = ctx->op->params;
  htp_status st = htp_reduce_supported(opcode, params, td, ts);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(ts);
  if (n_rows == 0 || ts.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  reduce_job job;
  job.ctx = ctx;
  job.vm = &vmath_select();
  job.p = htp_kparams_get<htp_reduce_params>(*ctx->op);
  job.opcode = opcode;
  job.descending = opcode == HTP_OP_TOP_K || params[0] == 1;
  st = htp_reduce_params_check(job.p, opcode, params, td, ts, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  // Devices split by output rows (SUM_ROWS: 4 bytes each, so 32 rows make a line); one long
  // row streaming for TOP_K is a single row: device 0 alone.
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, job.p.dst_row_bytes);
  if (job.rows.count == 0) return HTP_OK;
  if (job.p.piece_block != 0) {
    st = run_workers(ctx, topk_piece_worker, &job, job.status, job.p.n_threads);
    return st != HTP_OK ? st : topk_pieces_merge(job);
  }
  return run_workers(ctx, reduce_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
