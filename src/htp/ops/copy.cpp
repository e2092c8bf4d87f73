// Copy family: CPY, CONT, DUP, CONCAT, REPEAT, PAD, FILL (see htp/abi/copy_params.h).
//
// Devices take whole 128-byte lines of dst rows (ops/ops.h), or device 0 all of them.
// ROWS kind: a device's dst rows are split across workers from (n, i) alone; a block is a run of dst rows
// whose source rows are consecutive too. Blocks stream through the DMA pipeline of
// ops/pipeline.h: the source pieces come in (one 2-D
// descriptor for dense rows, one per row whose elements are strided), each dst row is built by
// converting / repeating the pieces and filling its tail, and goes out the same way. Dense F16
// conversions run through vmath; strided runs convert element by element.
// FLAT kind (CPY family fallback): element runs straight in DDR, no VTCM.
#include "base/fp16.h"
#include "htp/abi/copy_params.h"
#include "htp/ops/ops.h"
#include "htp/ops/pipeline.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

namespace {

// ---- runs of elements ----------------------------------------------------------------------

enum conv_kind : uint32_t { CONV_COPY, CONV_F32_F16, CONV_F16_F32, CONV_VIA_F32 };

template <typename T> inline T load(const uint8_t* p) {
  T v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename T> inline void store(uint8_t* p, T v) { __builtin_memcpy(p, &v, sizeof v); }

inline float load_float(uint32_t type, const uint8_t* p) {
  if (type == HTP_TYPE_F32) return load<float>(p);
  return type == HTP_TYPE_F16 ? fp16_to_fp32(load<uint16_t>(p)) : bf16_to_fp32(load<uint16_t>(p));
}
inline void store_float(uint32_t type, uint8_t* p, float v) {
  if (type == HTP_TYPE_F32) store(p, v);
  else store(p, type == HTP_TYPE_F16 ? fp32_to_fp16(v) : fp32_to_bf16(v));
}

template <typename T> void copy_strided(const uint8_t* x, uint32_t xs, uint8_t* y, uint32_t ys, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) store<T>(y + (uint64_t)i * ys, load<T>(x + (uint64_t)i * xs));
}

// Converts n elements from x (element stride xs) to y (stride ys). Chosen once per op; the
// switch runs per run, the loops per element.
struct converter {
  uint32_t kind;
  uint32_t src_type, dst_type;
  uint32_t src_es, dst_es;  // element bytes (a block for block types)
  const vmath_ops* vm;

  void run(const uint8_t* x, uint32_t xs, uint8_t* y, uint32_t ys, uint32_t n) const {
    const bool dense = xs == src_es && ys == dst_es;
    switch (kind) {
      case CONV_COPY:
        if (dense) return htp_memcpy(y, x, (size_t)n * src_es);
        switch (src_es) {
          case 1: return copy_strided<uint8_t>(x, xs, y, ys, n);
          case 2: return copy_strided<uint16_t>(x, xs, y, ys, n);
          case 4: return copy_strided<uint32_t>(x, xs, y, ys, n);
          case 8: return copy_strided<uint64_t>(x, xs, y, ys, n);
          default:
            for (uint32_t i = 0; i < n; ++i) htp_memcpy(y + (uint64_t)i * ys, x + (uint64_t)i * xs, src_es);
            return;
        }
      case CONV_F32_F16:
        if (dense) return vm->f32_to_f16((const float*)x, (uint16_t*)y, n);
        for (uint32_t i = 0; i < n; ++i) store(y + (uint64_t)i * ys, fp32_to_fp16(load<float>(x + (uint64_t)i * xs)));
        return;
      case CONV_F16_F32:
        if (dense) return vm->f16_to_f32((const uint16_t*)x, (float*)y, n);
        for (uint32_t i = 0; i < n; ++i) store(y + (uint64_t)i * ys, fp16_to_fp32(load<uint16_t>(x + (uint64_t)i * xs)));
        return;
      default:
        for (uint32_t i = 0; i < n; ++i)
          store_float(dst_type, y + (uint64_t)i * ys, load_float(src_type, x + (uint64_t)i * xs));
        return;
    }
  }
};

converter make_converter(uint32_t src_type, uint32_t dst_type, const vmath_ops* vm) {
  converter c{};
  c.src_type = src_type;
  c.dst_type = dst_type;
  c.src_es = htp_type_geometry(src_type).type_size;
  c.dst_es = htp_type_geometry(dst_type).type_size;
  c.vm = vm;
  if (src_type == dst_type) c.kind = CONV_COPY;
  else if (src_type == HTP_TYPE_F32 && dst_type == HTP_TYPE_F16) c.kind = CONV_F32_F16;
  else if (src_type == HTP_TYPE_F16 && dst_type == HTP_TYPE_F32) c.kind = CONV_F16_F32;
  else c.kind = CONV_VIA_F32;
  return c;
}

// n elements of `es` bytes at y (stride ys), each = pattern (zeros for PAD, the value for FILL).
void fill_run(uint8_t* y, uint32_t ys, uint32_t n, const uint8_t* pattern, uint32_t es, bool zero) {
  if (zero && ys == es) return htp_memset(y, 0, (size_t)n * es);
  for (uint32_t i = 0; i < n; ++i) htp_memcpy(y + (uint64_t)i * ys, pattern, es);
}

// ---- the op ----------------------------------------------------------------------------------

struct copy_job {
  const htp_op_ctx* ctx;
  htp_copy_params p;
  uint32_t opcode;
  int32_t dim;           // CONCAT
  htp_mdev_range rows;   // this device's dst rows (all of them on a single device)
  htp_tensor dv, sv;     // dst and src0 as the rows see them (CPY family may reshape a contiguous side)
  uint32_t n0, n1, rep;  // piece elements and repeats of piece 0 per dst row
  uint32_t row_elems;    // dst elements (blocks) per row
  converter conv;
  uint8_t pattern[8];  // tail element: zeros, or FILL's value
  bool zero_tail;
  htp_status status[HTP_MAX_THREADS];
};

struct piece {
  const uint8_t* row;  // the block's first source row
  uint32_t nb0, nb1;
  bool dense;  // elements packed: one descriptor for the block
};

struct copy_block {
  uint32_t rows;
  bool has0, has1;
  piece p0, p1;
  uint8_t* dst;  // first dst row
};

piece piece_at(const tensor_ref& t, const htp_tensor& shape, uint32_t i1, uint32_t i2, uint32_t i3) {
  const uint8_t* row = t.data + (uint64_t)i1 * shape.nb[1] + (uint64_t)i2 * shape.nb[2] + (uint64_t)i3 * shape.nb[3];
  return {row, shape.nb[0], shape.nb[1], shape.nb[0] == htp_copy_elem_bytes(shape)};
}

// The block starting at dst row r: where its pieces come from and how many rows keep them regular.
copy_block block_at(const copy_job& j, uint32_t r, uint32_t r_end) {
  const htp_copy_params& p = j.p;
  const tensor_ref* a = j.ctx->src[0];  // null for FILL
  const uint32_t i23 = htp_fastdiv(r, p.d1);
  const uint32_t i1 = r - i23 * p.d1.div, i2 = htp_fastmod(i23, p.d2), i3 = htp_fastdiv(i23, p.d2);
  uint32_t run = p.d1.div - i1;
  copy_block b{};
  switch (j.opcode) {
    case HTP_OP_CPY:
    case HTP_OP_CONT:
    case HTP_OP_DUP: {  // flat row r of dst is flat row r of src
      const uint32_t t = htp_fastdiv(r, p.s1);
      const uint32_t s1 = r - t * p.s1.div;
      b.has0 = true;
      b.p0 = piece_at(*a, j.sv, s1, htp_fastmod(t, p.s2), htp_fastdiv(t, p.s2));
      run = htp_min(run, p.s1.div - s1);
      break;
    }
    case HTP_OP_CONCAT: {
      const tensor_ref& bt = *j.ctx->src[1];
      const htp_tensor& at = a->t;
      b.has0 = true;
      if (j.dim == 0) {
        b.p0 = piece_at(*a, at, i1, i2, i3);
        b.p1 = piece_at(bt, bt.t, i1, i2, i3);
        b.has1 = j.n1 > 0;
      } else if (j.dim == 1) {
        b.p0 = i1 < at.ne[1] ? piece_at(*a, at, i1, i2, i3) : piece_at(bt, bt.t, i1 - at.ne[1], i2, i3);
        if (i1 < at.ne[1]) run = htp_min(run, at.ne[1] - i1);
      } else if (j.dim == 2) {
        b.p0 = i2 < at.ne[2] ? piece_at(*a, at, i1, i2, i3) : piece_at(bt, bt.t, i1, i2 - at.ne[2], i3);
      } else {
        b.p0 = i3 < at.ne[3] ? piece_at(*a, at, i1, i2, i3) : piece_at(bt, bt.t, i1, i2, i3 - at.ne[3]);
      }
      break;
    }
    case HTP_OP_REPEAT: {
      const uint32_t c1 = htp_fastmod(i1, p.s1);
      b.has0 = true;
      b.p0 = piece_at(*a, a->t, c1, htp_fastmod(i2, p.s2), htp_fastmod(i3, p.s3));
      run = htp_min(run, p.s1.div - c1);
      break;
    }
    case HTP_OP_PAD: {
      const htp_tensor& at = a->t;
      if (i1 < at.ne[1] && i2 < at.ne[2] && i3 < at.ne[3]) {
        b.has0 = true;
        b.p0 = piece_at(*a, at, i1, i2, i3);
        run = htp_min(run, at.ne[1] - i1);
      }
      break;
    }
    default:  // FILL: nothing to read
      break;
  }
  b.has0 = b.has0 && j.n0 > 0;
  b.rows = htp_min(htp_min(run, p.block_rows), r_end - r);
  b.dst = j.ctx->dst->data + (uint64_t)i1 * j.dv.nb[1] + (uint64_t)i2 * j.dv.nb[2] + (uint64_t)i3 * j.dv.nb[3];
  return b;
}

// Pushes a piece's rows of a block into VTCM (row stride vstride); returns the descriptors pushed.
uint32_t push_piece(dma_queue* q, uint8_t* vt, uint32_t vstride, const piece& pc, uint32_t n, uint32_t es,
                    uint32_t rows, bool* ok) {
  if (pc.dense) {
    *ok &= dma_queue_push_2d(q, vt, vstride, pc.row, pc.nb1, n * es, rows);
    return 1;
  }
  for (uint32_t r = 0; r < rows; ++r)  // gather: each element is a "row" of es bytes
    *ok &= dma_queue_push_2d(q, vt + (uint64_t)r * vstride, es, pc.row + (uint64_t)r * pc.nb1, pc.nb0, es, n);
  return rows;
}

struct run_ptr {
  const uint8_t* data;
  uint32_t stride;  // element stride
};

// Reads what push_piece pushed from the popped descriptors; out[r] is where row r's elements
// can be read now (a gathered row read in place, in zero-copy mode, keeps its source element
// stride). Returns the descriptors it used.
uint32_t unpack_piece(const dma_ptr* in, const piece& pc, uint32_t rows, uint32_t es, run_ptr* out) {
  if (pc.dense) {
    for (uint32_t r = 0; r < rows; ++r) out[r] = {in[0].data + (uint64_t)r * in[0].stride, es};
    return 1;
  }
  for (uint32_t r = 0; r < rows; ++r) out[r] = {in[r].data, in[r].stride};
  return rows;
}

// One worker's blocks (ROWS kind) for dma_pipeline_run: the pieces in, dst rows out (one 2-D
// descriptor for dense dst rows, one per row whose elements are strided).
struct copy_blocks {
  using block = copy_block;
  static constexpr uint32_t slots = HTP_COPY_SLOTS;
  static constexpr uint32_t max_in = 2 * HTP_COPY_MAX_BLOCK;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const copy_job* j;
  uint8_t* area;
  uint32_t next_row, r_end;

  uint8_t* slot(uint32_t s, uint32_t offset) const { return area + s * j->p.layout.slot_bytes + offset; }
  bool dst_dense() const { return j->dv.nb[0] == j->conv.dst_es; }

  bool more() const { return next_row < r_end; }
  void next(block* b) {
    *b = block_at(*j, next_row, r_end);
    next_row += b->rows;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_copy_layout& lay = j->p.layout;
    uint32_t n = 0;
    if (b.has0) n += push_piece(q, slot(s, lay.in0_offset), lay.in0_stride, b.p0, j->n0, j->conv.src_es, b.rows, ok);
    if (b.has1) n += push_piece(q, slot(s, lay.in1_offset), lay.in1_stride, b.p1, j->n1, j->conv.src_es, b.rows, ok);
    return n;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s, j->p.layout.dst_offset); }
  void compute(dma_queue* q, const block& b, uint32_t s, const dma_ptr* in) const {
    const htp_copy_layout& lay = j->p.layout;
    const htp_tensor& dv = j->dv;
    const uint32_t es0 = j->conv.src_es, esd = j->conv.dst_es;
    run_ptr in0[HTP_COPY_MAX_BLOCK], in1[HTP_COPY_MAX_BLOCK];
    uint32_t used = 0;
    if (b.has0) used += unpack_piece(in, b.p0, b.rows, es0, in0);
    if (b.has1) unpack_piece(in + used, b.p1, b.rows, es0, in1);
    uint8_t* vt = out_buf(s);
    const dma_view block_out = dma_queue_write_target(q, vt, lay.dst_stride, b.dst, dv.nb[1]);
    for (uint32_t r = 0; r < b.rows; ++r) {
      run_ptr y{block_out.ptr + (uint64_t)r * block_out.stride, esd};
      if (!dst_dense()) {
        const dma_view v = dma_queue_write_target(q, vt + (uint64_t)r * lay.dst_stride, esd,
                                                  b.dst + (uint64_t)r * dv.nb[1], dv.nb[0]);
        y = {v.ptr, v.stride};
      }
      uint8_t* out = (uint8_t*)y.data;
      uint32_t pos = 0;
      if (b.has0)
        for (uint32_t t = 0; t < j->rep; ++t, pos += j->n0)
          j->conv.run(in0[r].data, in0[r].stride, out + (uint64_t)pos * y.stride, y.stride, j->n0);
      if (b.has1) {
        j->conv.run(in1[r].data, in1[r].stride, out + (uint64_t)pos * y.stride, y.stride, j->n1);
        pos += j->n1;
      }
      if (pos < j->row_elems)
        fill_run(out + (uint64_t)pos * y.stride, y.stride, j->row_elems - pos, j->pattern, esd, j->zero_tail);
    }
  }
  uint32_t push_out(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_copy_layout& lay = j->p.layout;
    const htp_tensor& dv = j->dv;
    const uint32_t esd = j->conv.dst_es;
    uint8_t* vt = out_buf(s);
    if (dst_dense()) {
      *ok &= dma_queue_push_2d(q, b.dst, dv.nb[1], vt, lay.dst_stride, j->row_elems * esd, b.rows);
      return 1;
    }
    for (uint32_t r = 0; r < b.rows; ++r)  // scatter: each element is a "row" of esd bytes
      *ok &= dma_queue_push_2d(q, b.dst + (uint64_t)r * dv.nb[1], dv.nb[0], vt + (uint64_t)r * lay.dst_stride, esd,
                               esd, j->row_elems);
    return b.rows;
  }
};

void rows_worker(unsigned n, unsigned w, void* data) {
  auto* j = (copy_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_mdev_range part = htp_worker_part(j->rows, w, n);
  copy_blocks k{j, ctx->vtcm_base + (uint64_t)w * j->p.layout.thread_bytes, part.start, part.start + part.count};
  j->status[w] = dma_pipeline_run(&ctx->dma[w], &ctx->trace[w], k) ? HTP_OK : HTP_ERR_INTERNAL;
}

// Element k of src -> element k of dst, straight in DDR: each dst row is cut into runs that are
// strided in both tensors (a run ends where src's row ends).
void flat_worker(unsigned n, unsigned w, void* data) {
  auto* j = (copy_job*)data;
  const htp_copy_params& p = j->p;
  const tensor_ref& src = *j->ctx->src[0];
  const tensor_ref& dst = *j->ctx->dst;
  const htp_tensor& ts = src.t;
  const htp_tensor& td = dst.t;
  const uint32_t ne0 = td.ne[0];
  const htp_mdev_range part = htp_worker_part(j->rows, w, n);
  const uint32_t r_begin = part.start, r_end = part.start + part.count;
  trace_buf* tr = &j->ctx->trace[w];
  trace_begin(tr, HTP_EV_COMPUTE, 0);
  for (uint32_t r = r_begin; r < r_end; ++r) {
    const uint32_t i23 = htp_fastdiv(r, p.d1);
    uint8_t* y = dst.data + (uint64_t)(r - i23 * p.d1.div) * td.nb[1] + (uint64_t)htp_fastmod(i23, p.d2) * td.nb[2] +
                 (uint64_t)htp_fastdiv(i23, p.d2) * td.nb[3];
    const uint32_t e = r * ne0;  // < 2^32: checked by the params
    const uint32_t t1 = htp_fastdiv(e, p.s1), t2 = htp_fastdiv(t1, p.s2);
    uint32_t c0 = e - t1 * p.s1.div, c1 = t1 - t2 * p.s2.div, c2 = htp_fastmod(t2, p.s3), c3 = htp_fastdiv(t2, p.s3);
    for (uint32_t c = 0; c < ne0;) {
      const uint32_t seg = htp_min(ne0 - c, p.s1.div - c0);
      const uint8_t* x = src.data + (uint64_t)c0 * ts.nb[0] + (uint64_t)c1 * ts.nb[1] + (uint64_t)c2 * ts.nb[2] +
                         (uint64_t)c3 * ts.nb[3];
      j->conv.run(x, ts.nb[0], y + (uint64_t)c * td.nb[0], td.nb[0], seg);
      c += seg;
      c0 += seg;
      if (c0 == p.s1.div) {
        c0 = 0;
        if (++c1 == p.s2.div) {
          c1 = 0;
          if (++c2 == p.s3.div) c2 = 0, ++c3;
        }
      }
    }
  }
  trace_end(tr, HTP_EV_COMPUTE, 0);
  j->status[w] = HTP_OK;
}

}  // namespace

htp_status op_copy(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  switch (opcode) {
    case HTP_OP_CPY: case HTP_OP_CONT: case HTP_OP_DUP: case HTP_OP_CONCAT:
    case HTP_OP_REPEAT: case HTP_OP_PAD: case HTP_OP_FILL:
      break;
    default:
      return HTP_ERR_NO_SUPPORT;
  }
  const int32_t* params = ctx->op->params;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor* t0 = opcode == HTP_OP_FILL || ctx->src[0] == nullptr ? nullptr : &ctx->src[0]->t;
  const htp_tensor* t1 = opcode == HTP_OP_CONCAT && ctx->src[1] != nullptr ? &ctx->src[1]->t : nullptr;
  htp_status st = htp_copy_supported(opcode, params, td, t0, t1);
  if (st != HTP_OK) return st;
  if (htp_tensor_nrows(td) == 0 || td.ne[0] == 0) return HTP_OK;

  copy_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_copy_params>(*ctx->op);
  st = htp_copy_params_check(job.p, opcode, params, td, t0, t1, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.opcode = opcode;
  job.dim = params[0];
  job.dv = td;
  job.sv = t0 != nullptr ? *t0 : td;
  if (htp_copy_cpy_family(opcode)) htp_copy_row_views(td, *t0, &job.dv, &job.sv);  // checked by the params
  const uint64_t n_rows = htp_copy_work_rows(job.p.kind, td, job.dv);
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;
  // Devices split the rows the workers walk (dv, or dst itself for FLAT) in whole lines of dst.
  const htp_tensor& walked = job.p.kind == HTP_COPY_FLAT ? td : job.dv;
  job.rows = op_device_rows(ctx, walked, (uint32_t)n_rows, htp_copy_row_elems(walked) * htp_copy_elem_bytes(walked));
  if (job.rows.count == 0) return HTP_OK;
  htp_copy_piece_elems(opcode, params, job.dv, t0, t1, &job.n0, &job.n1);
  job.row_elems = htp_copy_row_elems(job.dv);
  job.rep = opcode == HTP_OP_REPEAT ? job.row_elems / job.n0 : 1;
  job.conv = make_converter(t0 != nullptr ? t0->type : td.type, td.type, &vmath_select());
  job.zero_tail = opcode != HTP_OP_FILL;
  htp_memset(job.pattern, 0, sizeof job.pattern);
  if (opcode == HTP_OP_FILL) {
    float v;
    htp_memcpy(&v, &params[0], 4);
    store_float(td.type, job.pattern, v);
  }
  return run_workers(ctx, job.p.kind == HTP_COPY_FLAT ? flat_worker : rows_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
