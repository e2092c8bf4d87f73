// Rows family: GET_ROWS (gather rows by index and dequantize them to F32: token embeddings,
// from plain GGUF rows or from weights repacked into 8-row tiles) and SET_ROWS (scatter F32
// rows into an F32/F16/BF16 tensor by index: the KV-cache write).
//
// Work rows are split across devices (GET_ROWS in whole lines of dst; SET_ROWS only when each
// dst row owns its lines, else device 0 does it all), then across workers from (n, i) alone. Each worker first checks every index
// of its range (a bad index fails the op before any access), then streams blocks of rows
// through the DMA pipeline of ops/pipeline.h.
//   GET_ROWS: one descriptor per gathered source row (rows are scattered) and one 2-D
//             write-back of the block (output rows are consecutive);
//   SET_ROWS: one 2-D fetch of the block (source rows are consecutive) and one write-back
//             descriptor per row (destinations are scattered).
// Dequantization is this file's own freestanding code; it applies the reference formulas in
// the same operation order, so plain and tiled sources give the reference's floats bit for bit.
#include "base/fp16.h"
#include "htp/abi/rows_params.h"
#include "htp/ops/ops.h"
#include "htp/ops/pipeline.h"
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
    if (desc.src == HTP_TYPE_F32) {
      for (uint32_t c = 0; c < k; ++c, p += step) htp_memcpy(&y[c], p, 4);
    } else {
      const bool bf = desc.src == HTP_TYPE_BF16;
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
    qblock_to_f32(static_cast<Type>(desc.src), rows[sub], y + (uint64_t)b * desc.kblock);
  }
}

// ---- the op ----------------------------------------------------------------------------------

struct rows_job {
  const htp_op_ctx* ctx;
  const vmath_ops* vm;
  htp_rows_params p;
  htp_mdev_range rows;  // this device's work rows (all of them on a single device)
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

// The per-worker part shared by both ops' blocks (dma_pipeline_run): rows and VTCM slots.
struct rows_blocks_base {
  static constexpr uint32_t slots = HTP_ROWS_SLOTS;

  const rows_job* jb;
  uint8_t* area;
  uint32_t next_row, r_end;
  bool bad_index;  // an index changed after the check (the op writes over its own index tensor)

  rows_blocks_base(const rows_job* j, unsigned n, unsigned w)
      : jb(j), area(j->ctx->vtcm_base + (uint64_t)w * j->p.layout.thread_bytes), bad_index(false) {
    const htp_mdev_range part = htp_worker_part(j->rows, w, n);
    next_row = part.start;
    r_end = part.start + part.count;
  }

  uint8_t* slot_src(uint32_t s) const { return area + s * jb->p.layout.slot_bytes + jb->p.layout.src_offset; }
  uint8_t* out_buf(uint32_t s) const { return area + s * jb->p.layout.slot_bytes + jb->p.layout.dst_offset; }

  // Index of work row (i, ij, ik), in range even if the tensor changed since indices_ok.
  uint64_t index(uint32_t i, uint32_t ij, uint32_t ik) {
    const int64_t v = index_at(*jb->ctx->src[1], i, ij, ik);
    if (v >= 0 && v < (int64_t)jb->limit) return (uint64_t)v;
    bad_index = true;
    return 0;
  }

  htp_status status(bool ok) const { return bad_index ? HTP_ERR_INVALID_PARAMS : ok ? HTP_OK : HTP_ERR_INTERNAL; }

  bool more() const { return next_row < r_end; }
  void take(rows_block* b) {
    const htp_rows_params& p = jb->p;
    b->at = pos_of(p, next_row);
    b->rows = htp_min(htp_min(p.block_rows, r_end - next_row), p.ne1.div - b->at.i);
    next_row += b->rows;
  }
};

// GET_ROWS: one descriptor per gathered source row in, one 2-D write-back of the block out.
struct get_rows_blocks : rows_blocks_base {
  using block = rows_block;
  static constexpr uint32_t max_in = HTP_ROWS_MAX_BLOCK;
  static constexpr uint16_t compute_event = HTP_EV_DEQUANT;

  uint32_t type, nb;  // source type; plain sources: blocks per row
  bool tiled;
  quant::dequant_blocks_fn deq;

  get_rows_blocks(const rows_job* j, unsigned n, unsigned w) : rows_blocks_base(j, n, w) {
    type = j->ctx->src[0]->t.type;
    tiled = htp_tile_valid(type);
    deq = quant::dequant_blocks_for(type);
    nb = tiled ? 0 : j->ctx->dst->t.ne[0] / htp_type_geometry(type).block_size;
  }

  void next(block* b) {
    const htp_tensor& td = jb->ctx->dst->t;
    take(b);
    b->dst = jb->ctx->dst->data + (uint64_t)b->at.i * td.nb[1] + (uint64_t)b->at.j * td.nb[2] +
             (uint64_t)b->at.k * td.nb[3];
  }
  uint32_t push_in(dma_queue* dq, block& b, uint32_t s, bool* ok) {
    const htp_rows_params& p = jb->p;
    const tensor_ref& src = *jb->ctx->src[0];
    const uint32_t ij = htp_fastmod(b.at.j, p.idx_ne1), ik = htp_fastmod(b.at.k, p.idx_ne2);
    const uint8_t* plane = tiled ? src.data + ((uint64_t)b.at.k * src.t.ne[2] + b.at.j) * p.src_slice_bytes
                                 : src.data + (uint64_t)b.at.j * src.t.nb[2] + (uint64_t)b.at.k * src.t.nb[3];
    for (uint32_t r = 0; r < b.rows; ++r) {
      const uint64_t v = index(b.at.i + r, ij, ik);
      const uint8_t* row = tiled ? plane + (v / kHtpTileRows) * p.src_row_bytes : plane + v * src.t.nb[1];
      b.sub[r] = (uint8_t)(v % kHtpTileRows);
      *ok &= dma_queue_push(dq, slot_src(s) + (uint64_t)r * p.layout.src_stride, row, p.src_row_bytes);
    }
    return b.rows;
  }
  void compute(dma_queue* dq, const block& b, uint32_t s, const dma_ptr* in) const {
    const htp_tensor& td = jb->ctx->dst->t;
    const uint32_t ne0 = td.ne[0];
    const dma_view out = dma_queue_write_target(dq, out_buf(s), jb->p.layout.dst_stride, b.dst, td.nb[1]);
    for (uint32_t r = 0; r < b.rows; ++r) {
      const uint8_t* x = in[r].data;
      float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
      if (tiled) tile_row_to_f32(type, x, b.sub[r], ne0, y);
      else if (deq != nullptr) deq(x, y, nb);
      else if (type == HTP_TYPE_F32) htp_memcpy(y, x, (size_t)ne0 * 4);
      else if (type == HTP_TYPE_F16) jb->vm->f16_to_f32((const uint16_t*)x, y, ne0);
      else {
        const auto* h = (const uint16_t*)x;
        for (uint32_t c = 0; c < ne0; ++c) y[c] = bf16_to_fp32(h[c]);
      }
    }
  }
  uint32_t push_out(dma_queue* dq, const block& b, uint32_t s, bool* ok) const {
    const htp_rows_params& p = jb->p;
    *ok &= dma_queue_push_2d(dq, b.dst, jb->ctx->dst->t.nb[1], out_buf(s), p.layout.dst_stride, p.dst_row_bytes,
                             b.rows);
    return 1;
  }
};

// SET_ROWS: one 2-D fetch of the block in, one write-back descriptor per row out.
struct set_rows_blocks : rows_blocks_base {
  using block = rows_block;
  static constexpr uint32_t max_in = 1;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  using rows_blocks_base::rows_blocks_base;

  void next(block* b) {
    const htp_rows_params& p = jb->p;
    const tensor_ref& dst = *jb->ctx->dst;
    take(b);
    const uint32_t ij = htp_fastmod(b->at.j, p.idx_ne1), ik = htp_fastmod(b->at.k, p.idx_ne2);
    uint8_t* plane = dst.data + (uint64_t)b->at.j * dst.t.nb[2] + (uint64_t)b->at.k * dst.t.nb[3];
    for (uint32_t r = 0; r < b->rows; ++r) b->dst_rows[r] = plane + index(b->at.i + r, ij, ik) * dst.t.nb[1];
  }
  uint32_t push_in(dma_queue* dq, const block& b, uint32_t s, bool* ok) const {
    const htp_rows_params& p = jb->p;
    const tensor_ref& src = *jb->ctx->src[0];
    const uint8_t* rows = src.data + (uint64_t)b.at.i * src.t.nb[1] + (uint64_t)b.at.j * src.t.nb[2] +
                          (uint64_t)b.at.k * src.t.nb[3];
    *ok &= dma_queue_push_2d(dq, slot_src(s), p.layout.src_stride, rows, src.t.nb[1], p.src_row_bytes, b.rows);
    return 1;
  }
  void compute(dma_queue* dq, const block& b, uint32_t s, const dma_ptr* in) const {
    const htp_rows_params& p = jb->p;
    const uint32_t ne0 = jb->ctx->dst->t.ne[0], dtype = jb->ctx->dst->t.type;
    for (uint32_t r = 0; r < b.rows; ++r) {
      uint8_t* vt = out_buf(s) + (uint64_t)r * p.layout.dst_stride;
      uint8_t* y = dma_queue_write_target(dq, vt, p.layout.dst_stride, b.dst_rows[r], 0).ptr;
      const float* x = (const float*)(in[0].data + (uint64_t)r * in[0].stride);
      if (dtype == HTP_TYPE_F32) htp_memcpy(y, x, (size_t)ne0 * 4);
      else if (dtype == HTP_TYPE_F16) jb->vm->f32_to_f16(x, (uint16_t*)y, ne0);
      else
        for (uint32_t c = 0; c < ne0; ++c) ((uint16_t*)y)[c] = fp32_to_bf16(x[c]);
    }
  }
  uint32_t push_out(dma_queue* dq, const block& b, uint32_t s, bool* ok) const {
    const htp_rows_params& p = jb->p;
    for (uint32_t r = 0; r < b.rows; ++r)
      *ok &= dma_queue_push(dq, b.dst_rows[r], out_buf(s) + (uint64_t)r * p.layout.dst_stride, p.dst_row_bytes);
    return b.rows;
  }
};

template <class K>
void rows_worker(unsigned n, unsigned w, void* data) {
  auto* jb = (rows_job*)data;
  K k(jb, n, w);
  if (!indices_ok(*jb, k.next_row, k.r_end)) {
    jb->status[w] = HTP_ERR_INVALID_PARAMS;
    return;
  }
  const bool ok = dma_pipeline_run(&jb->ctx->dma[w], &jb->ctx->trace[w], k);
  jb->status[w] = k.status(ok);
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
  job.limit = opcode == HTP_OP_GET_ROWS ? t0.ne[1] : td.ne[1];
  st = htp_rows_params_check(job.p, opcode, td, t0, ti, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.rows = {0, (uint32_t)n_rows};
  if (ctx->mdev.count > 1) {
    // GET_ROWS writes its work rows in order: a share in whole lines of dst. SET_ROWS scatters
    // them by index, so it splits only when every dst row owns its lines (any share is then safe).
    const uint32_t per_line = htp_mdev_rows_per_chunk(td, job.p.dst_row_bytes);
    const uint32_t per_chunk = opcode == HTP_OP_GET_ROWS ? per_line : per_line == 1 ? 1 : 0;
    job.rows = htp_mdev_partition((uint32_t)n_rows, per_chunk, ctx->mdev);
  }
  if (job.rows.count == 0) return HTP_OK;
  work_fn fn = opcode == HTP_OP_GET_ROWS ? rows_worker<get_rows_blocks> : rows_worker<set_rows_blocks>;
  return run_workers(ctx, fn, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
