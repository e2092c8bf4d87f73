// Reduce family: SUM_ROWS, ARGSORT and TOP_K on F32 rows.
//
// Rows are split across workers from (n, i) alone and stream through two VTCM slots in the
// binary family's pattern (the DMA FIFO rotates the slots): one 2-D fetch of a block of rows,
// the row-wise work, one 2-D write-back of the block's results.
//
// Orderings are exact and deterministic: a float maps to an unsigned key with the same order
// (-0 and +0 to the same key, as they compare equal), and a stable LSD radix sort over the keys
// (complemented for descending order) gives the reference's stable-sort result, ties in index
// order. TOP_K with a small k (the MoE router) selects in one pass without sorting.
#include "htp/abi/reduce_params.h"
#include "htp/ops/ops.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

namespace {

// Unsigned key with the order of the float: negatives flipped whole, positives above them.
inline uint32_t order_key(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u << 1) == 0) u = 0;  // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

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
  uint32_t n_rows;
  bool descending;  // ARGSORT order (TOP_K is always descending)
  htp_status status[HTP_MAX_THREADS];
};

// Indices of the k largest of x[0..n), largest first, ties by lower index, by one scan that keeps
// the best k sorted: a later element enters only when strictly better than the k-th.
void top_k_select(const float* x, uint32_t n, uint32_t k, int32_t* out) {
  uint32_t key[HTP_TOPK_SELECT_MAX];
  int32_t at[HTP_TOPK_SELECT_MAX];
  uint32_t have = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t kk = ~order_key(x[i]);  // ascending key = descending value
    if (have == k && kk >= key[k - 1]) continue;
    uint32_t j = have < k ? have++ : k - 1;
    for (; j > 0 && key[j - 1] > kk; --j) key[j] = key[j - 1], at[j] = at[j - 1];
    key[j] = kk, at[j] = (int32_t)i;
  }
  htp_memcpy(out, at, (size_t)k * 4);
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

void reduce_worker(unsigned n, unsigned w, void* data) {
  auto* jb = (reduce_job*)data;
  const htp_op_ctx* ctx = jb->ctx;
  const htp_reduce_params& p = jb->p;
  const htp_reduce_layout& lay = p.layout;
  const htp_tensor& ts = ctx->src[0]->t;
  const htp_tensor& td = ctx->dst->t;
  const uint32_t ne0 = ts.ne[0], k_out = td.ne[0];

  uint32_t next_row = (uint32_t)((uint64_t)jb->n_rows * w / n);
  const uint32_t r_end = (uint32_t)((uint64_t)jb->n_rows * (w + 1) / n);
  dma_queue* q = &ctx->dma[w];
  trace_buf* tr = &ctx->trace[w];
  uint8_t* area = ctx->vtcm_base + (uint64_t)w * lay.thread_bytes;
  uint8_t* scratch = area + lay.scratch_offset;
  auto slot_src = [&](uint32_t s) { return area + s * lay.slot_bytes + lay.src_offset; };
  auto slot_dst = [&](uint32_t s) { return area + s * lay.slot_bytes + lay.dst_offset; };
  auto dst_at = [&](const reduce_block& b) {
    return ctx->dst->data + (uint64_t)b.i1 * td.nb[1] + (uint64_t)b.i2 * td.nb[2] + (uint64_t)b.i3 * td.nb[3];
  };

  reduce_block blocks[HTP_REDUCE_SLOTS];
  uint32_t n_fetched = 0;
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    const uint32_t i23 = htp_fastdiv(next_row, p.ne1);
    reduce_block& b = blocks[s];
    b.i1 = next_row - i23 * p.ne1.div;
    b.i2 = htp_fastmod(i23, p.ne2);
    b.i3 = htp_fastdiv(i23, p.ne2);
    b.rows = htp_min(htp_min(p.block_rows, r_end - next_row), p.ne1.div - b.i1);
    next_row += b.rows;
    ++n_fetched;
    const uint8_t* src = ctx->src[0]->data + (uint64_t)b.i1 * ts.nb[1] + (uint64_t)b.i2 * ts.nb[2] +
                         (uint64_t)b.i3 * ts.nb[3];
    ok &= dma_queue_push_2d(q, slot_src(s), lay.src_stride, src, ts.nb[1], p.src_row_bytes, b.rows);
  };

  for (uint32_t s = 0; s < HTP_REDUCE_SLOTS && next_row < r_end; ++s) {
    ok &= dma_queue_push_token(q, nullptr, slot_dst(s));
    fetch(s);
  }
  for (uint32_t k = 0; k < n_fetched && ok; ++k) {
    const uint32_t s = k % HTP_REDUCE_SLOTS;
    const reduce_block b = blocks[s];
    trace_begin(tr, HTP_EV_DMA_WAIT, (uint16_t)k);
    dma_queue_pop(q);  // the slot's output buffer is free
    const dma_ptr in = dma_queue_pop(q);
    trace_end(tr, HTP_EV_DMA_WAIT, (uint16_t)k);

    uint8_t* ddr = dst_at(b);
    const dma_view out = dma_queue_write_target(q, slot_dst(s), lay.dst_stride, ddr, td.nb[1]);
    trace_begin(tr, HTP_EV_COMPUTE, (uint16_t)k);
    for (uint32_t r = 0; r < b.rows; ++r) {
      const float* x = (const float*)(in.data + (uint64_t)r * in.stride);
      uint8_t* y = out.ptr + (uint64_t)r * out.stride;
      if (jb->opcode == HTP_OP_SUM_ROWS) {
        const float sum = jb->vm->sum(x, ne0);
        htp_memcpy(y, &sum, 4);
      } else if (jb->opcode == HTP_OP_TOP_K && !htp_topk_sorts(k_out)) {
        top_k_select(x, ne0, k_out, (int32_t*)y);
      } else {
        sort_row(x, ne0, jb->descending, scratch, (int32_t*)y, k_out);
      }
    }
    trace_end(tr, HTP_EV_COMPUTE, (uint16_t)k);

    ok &= dma_queue_push_2d(q, ddr, td.nb[1], slot_dst(s), lay.dst_stride, p.dst_row_bytes, b.rows);
    if (next_row < r_end) fetch(s);
  }
  trace_begin(tr, HTP_EV_FLUSH, 0);
  dma_queue_flush(q);
  trace_end(tr, HTP_EV_FLUSH, 0);
  jb->status[w] = ok ? HTP_OK : HTP_ERR_INTERNAL;
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
  job.n_rows = (uint32_t)n_rows;
  job.descending = opcode == HTP_OP_TOP_K || params[0] == 1;
  st = htp_reduce_params_check(job.p, opcode, params, td, ts, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  return run_workers(ctx, reduce_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
