// Binary family: dst = src0 (op) src1 for ADD, SUB, MUL, DIV on F32, src1 broadcast over rows
// (ne11/ne12/ne13 dividing dst's) and within a row (ne10 dividing ne0); and ADD_ID (src1 rows
// chosen by an index tensor), at the end of the file.
//
// A device's rows (whole 128-byte lines of dst, ops/ops.h) are split across its workers; each worker streams blocks of rows, a run strided alike in
// src0, src1 and dst, through the DMA pipeline of ops/pipeline.h.
#include "htp/abi/binary_params.h"
#include "htp/ops/ops.h"
#include "htp/ops/pipeline.h"
#include "htp/util.h"

namespace hexllm::htp {

namespace {

struct binary_job {
  const htp_op_ctx* ctx;
  htp_binary_params p;
  uint32_t opcode;
  htp_mdev_range rows;  // this device's flattened rows of dst (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

// A run of rows that is strided in src0, src1 and dst alike: within one (i2, i3) plane, and
// within one period of src1's rows so that its rows are consecutive too.
struct row_block {
  const uint8_t* src0;
  const uint8_t* src1;
  uint8_t* dst;
  uint32_t rows;
};

row_block block_at(const binary_job& j, uint32_t r, uint32_t r_end) {
  const htp_binary_params& p = j.p;
  const htp_tensor& t0 = j.ctx->src[0]->t;
  const htp_tensor& t1 = j.ctx->src[1]->t;
  const htp_tensor& td = j.ctx->dst->t;
  const uint32_t i1 = htp_fastmod(r, p.ne1);
  const uint32_t i23 = htp_fastdiv(r, p.ne1);
  const uint32_t i2 = htp_fastmod(i23, p.ne2);
  const uint32_t i3 = htp_fastdiv(i23, p.ne2);
  const uint32_t i11 = htp_fastmod(i1, p.ne11);
  const uint32_t i12 = htp_fastmod(i2, p.ne12);
  const uint32_t i13 = htp_fastmod(i3, p.ne13);
  const uint32_t run = p.ne11.div == 1 ? p.ne1.div - i1 : p.ne11.div - i11;
  row_block b;
  b.rows = htp_min(htp_min(p.block_rows, r_end - r), run);
  b.src0 = j.ctx->src[0]->data + (uint64_t)i1 * t0.nb[1] + (uint64_t)i2 * t0.nb[2] + (uint64_t)i3 * t0.nb[3];
  b.src1 = j.ctx->src[1]->data + (uint64_t)i11 * t1.nb[1] + (uint64_t)i12 * t1.nb[2] + (uint64_t)i13 * t1.nb[3];
  b.dst = j.ctx->dst->data + (uint64_t)i1 * td.nb[1] + (uint64_t)i2 * td.nb[2] + (uint64_t)i3 * td.nb[3];
  return b;
}

template <uint32_t OP> inline float apply(float a, float b) {
  if constexpr (OP == HTP_OP_ADD) return a + b;
  if constexpr (OP == HTP_OP_SUB) return a - b;
  if constexpr (OP == HTP_OP_MUL) return a * b;
  return a / b;
}

// `stride1` is 0 when one src1 row serves every row of the block.
template <uint32_t OP>
void compute_rows(const uint8_t* src0, uint32_t stride0, const uint8_t* src1, uint32_t stride1, uint8_t* dst,
                  uint32_t stride_d, uint32_t rows, uint32_t ne0, uint32_t ne10) {
  for (uint32_t r = 0; r < rows; ++r) {
    const float* a = (const float*)(src0 + (uint64_t)r * stride0);
    const float* b = (const float*)(src1 + (uint64_t)r * stride1);
    float* d = (float*)(dst + (uint64_t)r * stride_d);
    for (uint32_t c0 = 0; c0 < ne0; c0 += ne10)
      for (uint32_t c = 0; c < ne10; ++c) d[c0 + c] = apply<OP>(a[c0 + c], b[c]);
  }
}

void compute_block(uint32_t opcode, const dma_ptr& a, const dma_ptr& b, uint32_t stride1, const dma_view& out,
             uint32_t rows, uint32_t ne0, uint32_t ne10) {
  auto* fn = compute_rows<HTP_OP_DIV>;
  if (opcode == HTP_OP_ADD) fn = compute_rows<HTP_OP_ADD>;
  if (opcode == HTP_OP_SUB) fn = compute_rows<HTP_OP_SUB>;
  if (opcode == HTP_OP_MUL) fn = compute_rows<HTP_OP_MUL>;
  fn(a.data, a.stride, b.data, stride1, out.ptr, out.stride, rows, ne0, ne10);
}

// One worker's blocks for dma_pipeline_run: src0 and src1 rows in, dst rows out.
struct binary_blocks {
  using block = row_block;
  static constexpr uint32_t slots = HTP_BINARY_SLOTS;
  static constexpr uint32_t max_in = 2;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const binary_job* j;
  uint8_t* area;
  uint32_t next_row, r_end;

  uint8_t* slot(uint32_t s, uint32_t offset) const { return area + s * j->p.layout.slot_bytes + offset; }
  bool one_src1_row() const { return j->ctx->src[1]->t.ne[1] == 1; }

  bool more() const { return next_row < r_end; }
  void next(block* b) {
    *b = block_at(*j, next_row, r_end);
    next_row += b->rows;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_binary_layout& lay = j->p.layout;
    const htp_tensor& t0 = j->ctx->src[0]->t;
    const htp_tensor& t1 = j->ctx->src[1]->t;
    *ok &= dma_queue_push_2d(q, slot(s, lay.src0_offset), lay.row_stride0, b.src0, t0.nb[1], t0.ne[0] * 4, b.rows);
    *ok &= dma_queue_push_2d(q, slot(s, lay.src1_offset), lay.row_stride1, b.src1, t1.nb[1], t1.ne[0] * 4,
                             one_src1_row() ? 1 : b.rows);
    return 2;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s, j->p.layout.dst_offset); }
  void compute(dma_queue* q, const block& b, uint32_t s, const dma_ptr* in) const {
    const htp_tensor& td = j->ctx->dst->t;
    const dma_view out = dma_queue_write_target(q, out_buf(s), j->p.layout.row_stride0, b.dst, td.nb[1]);
    compute_block(j->opcode, in[0], in[1], one_src1_row() ? 0 : in[1].stride, out, b.rows, td.ne[0],
                  j->ctx->src[1]->t.ne[0]);
  }
  uint32_t push_out(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_tensor& td = j->ctx->dst->t;
    *ok &= dma_queue_push_2d(q, b.dst, td.nb[1], out_buf(s), j->p.layout.row_stride0, td.ne[0] * 4, b.rows);
    return 1;
  }
};

void binary_worker(unsigned n, unsigned i, void* data) {
  auto* j = (binary_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  // This worker's rows, from i alone.
  const htp_mdev_range part = htp_worker_part(j->rows, i, n);
  binary_blocks k{j, ctx->vtcm_base + (uint64_t)i * j->p.layout.thread_bytes, part.start, part.start + part.count};
  j->status[i] = dma_pipeline_run(&ctx->dma[i], &ctx->trace[i], k) ? HTP_OK : HTP_ERR_INTERNAL;
}

// ---- ADD_ID: dst[:, i, t] = src0[:, i, t] + src1[:, ids[i, t]] ----------------------------------
// Same pipeline; per block one 2-D fetch of src0's rows and one descriptor per gathered src1 row.
// Every id of a worker's rows is checked before its first DMA: a bad one fails the op.

struct add_id_job {
  const htp_op_ctx* ctx;
  htp_add_id_params p;
  htp_mdev_range rows;  // this device's flattened rows of dst
  htp_status status[HTP_MAX_THREADS];
};

int32_t id_at(const tensor_ref& ids, uint32_t i, uint32_t t) {
  int32_t v;
  htp_memcpy(&v, ids.data + (uint64_t)i * ids.t.nb[0] + (uint64_t)t * ids.t.nb[1], 4);
  return v;
}

// One worker's blocks for dma_pipeline_run: src0 rows and one gathered src1 row per dst row in.
struct add_id_blocks {
  struct block {
    uint8_t* dst;
    uint32_t i, t;  // first row (i, token t)
    uint32_t rows;
  };
  static constexpr uint32_t slots = HTP_BINARY_SLOTS;
  static constexpr uint32_t max_in = 1 + HTP_ADD_ID_MAX_BLOCK;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const add_id_job* j;
  uint8_t* area;
  uint32_t next_row, r_end;
  bool bad_id;

  uint8_t* slot(uint32_t s, uint32_t offset) const { return area + s * j->p.layout.slot_bytes + offset; }
  // Ids are re-checked where used: the op may write over its own ids (a hostile batch).
  const uint8_t* bias_row(uint32_t i, uint32_t t) {
    const tensor_ref& b = *j->ctx->src[1];
    const int32_t e = id_at(*j->ctx->src[2], i, t);
    bad_id |= e < 0 || (uint32_t)e >= b.t.ne[1];
    return b.data + (uint64_t)(bad_id ? 0 : e) * b.t.nb[1];
  }

  bool more() const { return next_row < r_end; }
  void next(block* b) {
    const htp_add_id_params& p = j->p;
    const htp_tensor& td = j->ctx->dst->t;
    b->t = htp_fastdiv(next_row, p.ne1);
    b->i = next_row - b->t * p.ne1.div;
    b->rows = htp_min(htp_min(p.block_rows, r_end - next_row), p.ne1.div - b->i);
    b->dst = j->ctx->dst->data + (uint64_t)b->i * td.nb[1] + (uint64_t)b->t * td.nb[2];
    next_row += b->rows;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) {
    const htp_binary_layout& lay = j->p.layout;
    const tensor_ref& a = *j->ctx->src[0];
    const uint32_t row_bytes = j->ctx->dst->t.ne[0] * 4;
    *ok &= dma_queue_push_2d(q, slot(s, lay.src0_offset), lay.row_stride0,
                             a.data + (uint64_t)b.i * a.t.nb[1] + (uint64_t)b.t * a.t.nb[2], a.t.nb[1], row_bytes,
                             b.rows);
    for (uint32_t r = 0; r < b.rows; ++r)
      *ok &= dma_queue_push(q, slot(s, lay.src1_offset) + (uint64_t)r * lay.row_stride1, bias_row(b.i + r, b.t),
                            row_bytes);
    return 1 + b.rows;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s, j->p.layout.dst_offset); }
  void compute(dma_queue* q, const block& b, uint32_t s, const dma_ptr* in) const {
    const htp_tensor& td = j->ctx->dst->t;
    const uint32_t ne0 = td.ne[0];
    const dma_view out = dma_queue_write_target(q, out_buf(s), j->p.layout.row_stride0, b.dst, td.nb[1]);
    for (uint32_t r = 0; r < b.rows; ++r) {
      const float* xr = (const float*)(in[0].data + (uint64_t)r * in[0].stride);
      const float* bias = (const float*)in[1 + r].data;
      float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
      for (uint32_t c = 0; c < ne0; ++c) y[c] = xr[c] + bias[c];
    }
  }
  uint32_t push_out(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_tensor& td = j->ctx->dst->t;
    *ok &= dma_queue_push_2d(q, b.dst, td.nb[1], out_buf(s), j->p.layout.row_stride0, td.ne[0] * 4, b.rows);
    return 1;
  }
};

void add_id_worker(unsigned n, unsigned w, void* data) {
  auto* j = (add_id_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_add_id_params& p = j->p;
  const htp_mdev_range part = htp_worker_part(j->rows, w, n);
  const uint32_t r_begin = part.start, r_end = part.start + part.count;
  for (uint32_t r = r_begin; r < r_end; ++r) {
    const uint32_t t = htp_fastdiv(r, p.ne1);
    const int32_t e = id_at(*ctx->src[2], r - t * p.ne1.div, t);
    if (e < 0 || (uint32_t)e >= ctx->src[1]->t.ne[1]) {
      j->status[w] = HTP_ERR_INVALID_PARAMS;
      return;
    }
  }
  add_id_blocks k{j, ctx->vtcm_base + (uint64_t)w * p.layout.thread_bytes, r_begin, r_end, false};
  const bool ok = dma_pipeline_run(&ctx->dma[w], &ctx->trace[w], k);
  j->status[w] = k.bad_id ? HTP_ERR_INVALID_PARAMS : ok ? HTP_OK : HTP_ERR_INTERNAL;
}

htp_status op_add_id(htp_op_ctx* ctx) {
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr || ctx->src[2] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor& t0 = ctx->src[0]->t;
  const htp_tensor& t1 = ctx->src[1]->t;
  const htp_tensor& ti = ctx->src[2]->t;
  htp_status st = htp_add_id_supported(td, t0, t1, ti);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  add_id_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_add_id_params>(*ctx->op);
  st = htp_add_id_params_check(job.p, td, t0, t1, ti, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, add_id_worker, &job, job.status, job.p.n_threads);
}

}  // namespace

htp_status op_binary(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (opcode == HTP_OP_ADD_ID) return op_add_id(ctx);
  if (opcode != HTP_OP_ADD && opcode != HTP_OP_SUB && opcode != HTP_OP_MUL && opcode != HTP_OP_DIV)
    return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor& t1 = ctx->src[1]->t;
  htp_status st = htp_binary_supported(td, ctx->src[0]->t, t1);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;  // only stride-0 views get here

  binary_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_binary_params>(*ctx->op);
  job.opcode = opcode;
  st = htp_binary_params_check(job.p, td, ctx->src[0]->t, t1, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, binary_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
