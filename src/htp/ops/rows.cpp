// Rows family: GET_ROWS (gather rows by index and dequantize them to F32: token embeddings,
// from plain GGUF rows or from weights repacked into 8-row tiles) and SET_ROWS (scatter F32
// rows into an F32/F16/BF16 tensor by index: the KV-cache write).
//
// Work rows are split across workers from (n, i) alone. Each worker first checks every index
// of its range (a bad index fails the op before any access), then streams blocks of rows
// through two VTCM slots in the binary family's pattern: the DMA FIFO rotates the slots.
//   GET_ROWS: one descriptor per gathered source row (rows are scattered) and one 2-D
//             write-back of the block (output rows are consecutive);
//   SET_ROWS: one 2-D fetch of the block (source rows are consecutive) and one write-back
//             descriptor per row (destinations are scattered).
// Dequantization is this file's own freestanding code; it applies the reference formulas in
// the same operation order, so plain and tiled sources give the reference's floats bit for bit.
#include "base/fp16.h"
#include "htp/abi/rows_params.h"
#include "htp/ops/ops.h"
#include "htp/util.h"
#include "htp/vec/repack.h"
#include "htp/vmath/vmath.h"
#include "quant/blocks.h"
#include "quant/dequant_blocks.h"

namespace hexllm::htp {

namespace {

namespace q = hexllm::quant;

inline float h2f(uint16_t h) { return fp16_to_fp32(h); }


// ---- tiles -> F32 ----------------------------------------------------------------------------

// One decoded block (vec_tile_decode's logical form) of GGUF type `type` -> kblock floats.
void qblock_to_f32(Type type, const vec_qblock& b, float* y) {
  const float d = h2f(b.d), m = h2f(b.m);
  switch (type) {
    case Type::Q4_0: for (int l = 0; l < 32; ++l) y[l] = (float)((int)b.q[l] - 8) * d; break;
    case Type::Q4_1:
    case Type::Q5_1: for (int l = 0; l < 32; ++l) y[l] = (float)b.q[l] * d + m; break;
    case Type::Q5_0: for (int l = 0; l < 32; ++l) y[l] = (float)((int)b.q[l] - 16) * d; break;
    case Type::Q8_0: for (int l = 0; l < 32; ++l) y[l] = (float)(int8_t)b.q[l] * d; break;
    case Type::IQ4_NL: for (int l = 0; l < 32; ++l) y[l] = d * (float)q::kIq4nlValues[b.q[l] & 0xF]; break;
    case Type::MXFP4: {
      const float e = q::e8m0_to_fp32_half(b.e);
      for (int l = 0; l < 32; ++l) y[l] = (float)q::kMxfp4Values[b.q[l] & 0xF] * e;
      break;
    }
    case Type::Q4_K:
    case Type::Q5_K:  // m holds dmin; sub-block s covers elements 32s..32s+31
      for (int s = 0; s < 8; ++s) {
        const float dl = d * (float)b.sc[s], ml = m * (float)b.mn[s];
        for (int l = 0; l < 32; ++l) y[32 * s + l] = dl * (float)b.q[32 * s + l] - ml;
      }
      break;
    case Type::Q6_K:  // int8 scales per 16 elements, codes 0..63 around 32
      for (int u = 0; u < 16; ++u)
        for (int l = 0; l < 16; ++l)
          y[16 * u + l] = d * (float)(int8_t)b.sc[u] * (float)((int)b.q[16 * u + l] - 32);
      break;
    default: break;
  }
}

// Row `sub` (0..7) of the row tile at `tile` (all K-blocks of 8 rows) -> k floats.
void tile_row_to_f32(uint32_t tile_type, const uint8_t* tile, uint32_t sub, uint32_t k, float* y) {
  const htp_tile_desc& desc = htp_tile_info(tile_type);
  if (htp_tile_is_float(tile_type)) {
    // [k][8 rows] elements across the block tiles: row `sub` is every 8th element.
    const uint32_t es = desc.src_block_bytes;
    const uint8_t* p = tile + (uint64_t)sub * es;
    const uint32_t step = kHtpTileRows * es;
    if (desc.src == Type::F32) {
      for (uint32_t c = 0; c < k; ++c, p += step) htp_memcpy(&y[c], p, 4);
    } else {
      const bool bf = desc.src == Type::BF16;
      for (uint32_t c = 0; c < k; ++c, p += step) {
        const uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
        y[c] = bf ? bf16_to_fp32(h) : h2f(h);
      }
    }
    return;
  }
  vec_qblock rows[kHtpTileRows];
  for (uint32_t b = 0; b < k / desc.kblock; ++b) {
    vec_tile_decode(tile_type, tile + (uint64_t)b * desc.block_bytes, rows);
    qblock_to_f32(desc.src, rows[sub], y + (uint64_t)b * desc.kblock);
  }
}

// ---- the op ----------------------------------------------------------------------------------

struct rows_job {
  const htp_op_ctx* ctx;
  const vmath_ops* vm;
  htp_rows_params p;
  uint32_t n_rows;  // work rows
  uint32_t limit;   // valid index values are [0, limit)
  htp_status status[HTP_MAX_THREADS];
};

struct row_pos {
  uint32_t i, j, k;
};

row_pos pos_of(const htp_rows_params& p, uint32_t r) {
  const uint32_t jk = htp_fastdiv(r, p.ne1);
  return {r - jk * p.ne1.div, htp_fastmod(jk, p.ne2), htp_fastdiv(jk, p.ne2)};
}

// Index of work row (i, j, k): idx[i, j % idx_ne1, k % idx_ne2] (ij, ik already reduced).
int64_t index_at(const tensor_ref& idx, uint32_t i, uint32_t ij, uint32_t ik) {
  const uint8_t* p = idx.data + (uint64_t)i * idx.t.nb[0] + (uint64_t)ij * idx.t.nb[1] + (uint64_t)ik * idx.t.nb[2];
  if (idx.t.type == HTP_TYPE_I32) {
    int32_t v;
    htp_memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  htp_memcpy(&v, p, 8);
  return v;
}

// Every index of work rows [r0, r1) in range; checked before any access they steer.
bool indices_ok(const rows_job& jb, uint32_t r0, uint32_t r1) {
  const htp_rows_params& p = jb.p;
  const tensor_ref& idx = *jb.ctx->src[1];
  row_pos c = pos_of(p, r0);
  uint32_t ij = htp_fastmod(c.j, p.idx_ne1), ik = htp_fastmod(c.k, p.idx_ne2);
  for (uint32_t r = r0; r < r1; ++r) {
    const int64_t v = index_at(idx, c.i, ij, ik);
    if (v < 0 || v >= (int64_t)jb.limit) return false;
    if (++c.i == p.ne1.div) {
      c.i = 0;
      if (++c.j == p.ne2.div) c.j = 0, ++c.k;
      ij = htp_fastmod(c.j, p.idx_ne1);
      ik = htp_fastmod(c.k, p.idx_ne2);
    }
  }
  return true;
}

// Consecutive work rows within one (j, k) plane.
struct rows_block {
  row_pos at;
  uint32_t rows;
  uint8_t* dst;                               // GET_ROWS: first output row
  uint8_t* dst_rows[HTP_ROWS_MAX_BLOCK];      // SET_ROWS: each row's destination
  uint8_t sub[HTP_ROWS_MAX_BLOCK];            // GET_ROWS from tiles: the row within its tile
};

// The per-worker part shared by both ops: rows, DMA queue, trace, VTCM slots.
struct rows_worker {
  const htp_op_ctx* ctx;
  const htp_rows_params* p;
  uint32_t limit;
  uint32_t next_row, r_end;
  bool bad_index;  // an index changed after the check (the op writes over its own index tensor)
  dma_queue* q;
  trace_buf* tr;
  uint8_t* area;

  uint8_t* slot_src(uint32_t s) const { return area + s * p->layout.slot_bytes + p->layout.src_offset; }
  uint8_t* slot_dst(uint32_t s) const { return area + s * p->layout.slot_bytes + p->layout.dst_offset; }

  // Index of work row (i, ij, ik), in range even if the tensor changed since indices_ok.
  uint64_t index(const tensor_ref& idx, uint32_t i, uint32_t ij, uint32_t ik) {
    const int64_t v = index_at(idx, i, ij, ik);
    if (v >= 0 && v < (int64_t)limit) return (uint64_t)v;
    bad_index = true;
    return 0;
  }

  htp_status status(bool ok) const { return bad_index ? HTP_ERR_INVALID_PARAMS : ok ? HTP_OK : HTP_ERR_INTERNAL; }

  rows_block take_block() {
    rows_block b;
    b.at = pos_of(*p, next_row);
    b.rows = htp_min(htp_min(p->block_rows, r_end - next_row), p->ne1.div - b.at.i);
    next_row += b.rows;
    return b;
  }
};

rows_worker worker_init(rows_job* jb, unsigned n, unsigned w) {
  const htp_op_ctx* ctx = jb->ctx;
  rows_worker wk{};
  wk.ctx = ctx;
  wk.p = &jb->p;
  wk.limit = jb->limit;
  wk.next_row = (uint32_t)((uint64_t)jb->n_rows * w / n);
  wk.r_end = (uint32_t)((uint64_t)jb->n_rows * (w + 1) / n);
  wk.q = &ctx->dma[w];
  wk.tr = &ctx->trace[w];
  wk.area = ctx->vtcm_base + (uint64_t)w * jb->p.layout.thread_bytes;
  return wk;
}

void get_rows_worker(unsigned n, unsigned w, void* data) {
  auto* jb = (rows_job*)data;
  rows_worker wk = worker_init(jb, n, w);
  if (!indices_ok(*jb, wk.next_row, wk.r_end)) {
    jb->status[w] = HTP_ERR_INVALID_PARAMS;
    return;
  }
  const htp_rows_params& p = jb->p;
  const tensor_ref& src = *wk.ctx->src[0];
  const tensor_ref& idx = *wk.ctx->src[1];
  const htp_tensor& td = wk.ctx->dst->t;
  const uint32_t type = src.t.type, ne0 = td.ne[0];
  const bool tiled = htp_tile_valid(type);
  const quant::dequant_blocks_fn deq = quant::dequant_blocks_for(type);
  const uint32_t nb = tiled ? 0 : ne0 / htp_type_geometry(type).block_size;

  rows_block blocks[HTP_ROWS_SLOTS];
  uint32_t n_fetched = 0;
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    rows_block& b = blocks[s];
    b = wk.take_block();
    const uint32_t ij = htp_fastmod(b.at.j, p.idx_ne1), ik = htp_fastmod(b.at.k, p.idx_ne2);
    b.dst = wk.ctx->dst->data + (uint64_t)b.at.i * td.nb[1] + (uint64_t)b.at.j * td.nb[2] +
            (uint64_t)b.at.k * td.nb[3];
    const uint8_t* plane = tiled ? src.data + ((uint64_t)b.at.k * src.t.ne[2] + b.at.j) * p.src_slice_bytes
                                 : src.data + (uint64_t)b.at.j * src.t.nb[2] + (uint64_t)b.at.k * src.t.nb[3];
    for (uint32_t r = 0; r < b.rows; ++r) {
      const uint64_t v = wk.index(idx, b.at.i + r, ij, ik);
      const uint8_t* row = tiled ? plane + (v / kHtpTileRows) * p.src_row_bytes : plane + v * src.t.nb[1];
      b.sub[r] = (uint8_t)(v % kHtpTileRows);
      ok &= dma_queue_push(wk.q, wk.slot_src(s) + (uint64_t)r * p.layout.src_stride, row, p.src_row_bytes);
    }
    ++n_fetched;
  };

  for (uint32_t s = 0; s < HTP_ROWS_SLOTS && wk.next_row < wk.r_end; ++s) {
    ok &= dma_queue_push_token(wk.q, nullptr, wk.slot_dst(s));
    fetch(s);
  }
  const uint8_t* rows_in[HTP_ROWS_MAX_BLOCK];
  for (uint32_t k = 0; k < n_fetched && ok; ++k) {
    const uint32_t s = k % HTP_ROWS_SLOTS;
    const rows_block& b = blocks[s];
    trace_begin(wk.tr, HTP_EV_DMA_WAIT, (uint16_t)k);
    dma_queue_pop(wk.q);  // the slot's output buffer is free
    for (uint32_t r = 0; r < b.rows; ++r) rows_in[r] = dma_queue_pop(wk.q).data;
    trace_end(wk.tr, HTP_EV_DMA_WAIT, (uint16_t)k);

    const dma_view out = dma_queue_write_target(wk.q, wk.slot_dst(s), p.layout.dst_stride, b.dst, td.nb[1]);
    trace_begin(wk.tr, HTP_EV_DEQUANT, (uint16_t)k);
    for (uint32_t r = 0; r < b.rows; ++r) {
      float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
      if (tiled) tile_row_to_f32(type, rows_in[r], b.sub[r], ne0, y);
      else if (deq != nullptr) deq(rows_in[r], y, nb);
      else if (type == HTP_TYPE_F32) htp_memcpy(y, rows_in[r], (size_t)ne0 * 4);
      else if (type == HTP_TYPE_F16) jb->vm->f16_to_f32((const uint16_t*)rows_in[r], y, ne0);
      else {
        const auto* h = (const uint16_t*)rows_in[r];
        for (uint32_t c = 0; c < ne0; ++c) y[c] = bf16_to_fp32(h[c]);
      }
    }
    trace_end(wk.tr, HTP_EV_DEQUANT, (uint16_t)k);

    ok &= dma_queue_push_2d(wk.q, b.dst, td.nb[1], wk.slot_dst(s), p.layout.dst_stride, p.dst_row_bytes, b.rows);
    if (wk.next_row < wk.r_end) fetch(s);
  }
  trace_begin(wk.tr, HTP_EV_FLUSH, 0);
  dma_queue_flush(wk.q);
  trace_end(wk.tr, HTP_EV_FLUSH, 0);
  jb->status[w] = wk.status(ok);
}

void set_rows_worker(unsigned n, unsigned w, void* data) {
  auto* jb = (rows_job*)data;
  rows_worker wk = worker_init(jb, n, w);
  if (!indices_ok(*jb, wk.next_row, wk.r_end)) {
    jb->status[w] = HTP_ERR_INVALID_PARAMS;
    return;
  }
  const htp_rows_params& p = jb->p;
  const tensor_ref& src = *wk.ctx->src[0];
  const tensor_ref& idx = *wk.ctx->src[1];
  const tensor_ref& dst = *wk.ctx->dst;
  const uint32_t ne0 = dst.t.ne[0], dtype = dst.t.type;

  rows_block blocks[HTP_ROWS_SLOTS];
  uint32_t pending_out[HTP_ROWS_SLOTS] = {};  // descriptors that free each slot's output area
  uint32_t n_fetched = 0;
  bool ok = true;
  auto fetch = [&](uint32_t s) {
    rows_block& b = blocks[s];
    b = wk.take_block();
    const uint32_t ij = htp_fastmod(b.at.j, p.idx_ne1), ik = htp_fastmod(b.at.k, p.idx_ne2);
    uint8_t* plane = dst.data + (uint64_t)b.at.j * dst.t.nb[2] + (uint64_t)b.at.k * dst.t.nb[3];
    for (uint32_t r = 0; r < b.rows; ++r)
      b.dst_rows[r] = plane + wk.index(idx, b.at.i + r, ij, ik) * dst.t.nb[1];
    const uint8_t* rows = src.data + (uint64_t)b.at.i * src.t.nb[1] + (uint64_t)b.at.j * src.t.nb[2] +
                          (uint64_t)b.at.k * src.t.nb[3];
    ok &= dma_queue_push_2d(wk.q, wk.slot_src(s), p.layout.src_stride, rows, src.t.nb[1], p.src_row_bytes, b.rows);
    ++n_fetched;
  };

  for (uint32_t s = 0; s < HTP_ROWS_SLOTS && wk.next_row < wk.r_end; ++s) {
    ok &= dma_queue_push_token(wk.q, nullptr, wk.slot_dst(s));
    pending_out[s] = 1;
    fetch(s);
  }
  for (uint32_t k = 0; k < n_fetched && ok; ++k) {
    const uint32_t s = k % HTP_ROWS_SLOTS;
    const rows_block& b = blocks[s];
    trace_begin(wk.tr, HTP_EV_DMA_WAIT, (uint16_t)k);
    for (uint32_t i = 0; i < pending_out[s]; ++i) dma_queue_pop(wk.q);
    const dma_ptr in = dma_queue_pop(wk.q);
    trace_end(wk.tr, HTP_EV_DMA_WAIT, (uint16_t)k);

    trace_begin(wk.tr, HTP_EV_COMPUTE, (uint16_t)k);
    for (uint32_t r = 0; r < b.rows; ++r) {
      uint8_t* vt = wk.slot_dst(s) + (uint64_t)r * p.layout.dst_stride;
      uint8_t* y = dma_queue_write_target(wk.q, vt, p.layout.dst_stride, b.dst_rows[r], 0).ptr;
      const float* x = (const float*)(in.data + (uint64_t)r * in.stride);
      if (dtype == HTP_TYPE_F32) htp_memcpy(y, x, (size_t)ne0 * 4);
      else if (dtype == HTP_TYPE_F16) jb->vm->f32_to_f16(x, (uint16_t*)y, ne0);
      else
        for (uint32_t c = 0; c < ne0; ++c) ((uint16_t*)y)[c] = fp32_to_bf16(x[c]);
    }
    trace_end(wk.tr, HTP_EV_COMPUTE, (uint16_t)k);

    for (uint32_t r = 0; r < b.rows; ++r)
      ok &= dma_queue_push(wk.q, b.dst_rows[r], wk.slot_dst(s) + (uint64_t)r * p.layout.dst_stride, p.dst_row_bytes);
    pending_out[s] = b.rows;
    if (wk.next_row < wk.r_end) fetch(s);
  }
  trace_begin(wk.tr, HTP_EV_FLUSH, 0);
  dma_queue_flush(wk.q);
  trace_end(wk.tr, HTP_EV_FLUSH, 0);
  jb->status[w] = wk.status(ok);
}

}  // namespace

htp_status op_rows(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (opcode != HTP_OP_GET_ROWS && opcode != HTP_OP_SET_ROWS) return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor& t0 = ctx->src[0]->t;
  const htp_tensor& ti = ctx->src[1]->t;
  htp_status st = htp_rows_supported(opcode, td, t0, ti);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_rows_work_rows(opcode, td, t0);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  rows_job job;
  job.ctx = ctx;
  job.vm = &vmath_select();
  job.p = htp_kparams_get<htp_rows_params>(*ctx->op);
  job.n_rows = (uint32_t)n_rows;
  job.limit = opcode == HTP_OP_GET_ROWS ? t0.ne[1] : td.ne[1];
  st = htp_rows_params_check(job.p, opcode, td, t0, ti, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  return run_workers(ctx, opcode == HTP_OP_GET_ROWS ? get_rows_worker : set_rows_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
