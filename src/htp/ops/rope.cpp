// ROPE family: rotates pairs of each F32 row by position-dependent angles (normal mode pairs
// (2i, 2i + 1), NEOX pairs (i, i + n_dims / 2)); dims past n_dims pass through; YaRN ramp and
// magnitude folded into per-pair frequencies and a scale (see abi/rope_params.h).
//
// Rows (head i1, token i2, i3), flattened, are split across devices in whole lines of dst and
// then across workers; each worker streams blocks of rows
// through the DMA pipeline of ops/pipeline.h, the positions of a block's tokens riding along.
// Per worker, a table of pair frequencies (double) is built once;
// per token the cos/sin cache is rebuilt from theta = pos * freq[i], reduced and evaluated in
// double, so that large positions (1e5 .. 1e6) keep their angle to ~1e-10 rad.
#include "htp/abi/rope_params.h"
#include "htp/ops/ops.h"
#include "htp/ops/pipeline.h"
#include "htp/util.h"

namespace hexllm::htp {

namespace {

struct sin_cos {
  double s, c;
};

// sin and cos of x in double: x = k pi/2 + r with a three-part pi/2 (k P1 and k P2 are exact
// for |k| < 2^28, i.e. |x| < 4e8), then Taylor polynomials on |r| <= pi/4 (+ rounding), whose
// truncation error (< 5e-17) is below double rounding. Beyond 2^50 (no position * frequency
// gets there) the angle itself carries no information and (0, 1) is returned.
inline sin_cos rope_sin_cos(double x) {
  constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  constexpr double kP1 = 0x1.921fb5p+0;          // pi/2, leading 25 bits
  constexpr double kP2 = 0x1.110b46p-26;         // next 25 bits
  constexpr double kP3 = 0x1.1a62633145c07p-54;  // the rest, rounded
  if (!(x > -0x1p50 && x < 0x1p50)) return {0.0, 1.0};
  const double kd = x * kTwoOverPi;
  const int64_t k = (int64_t)(kd >= 0.0 ? kd + 0.5 : kd - 0.5);
  const double kf = (double)k;
  const double r = ((x - kf * kP1) - kf * kP2) - kf * kP3;
  const double r2 = r * r;
  // 1/n! coefficients.
  constexpr double s3 = -1.0 / 6, s5 = 1.0 / 120, s7 = -1.0 / 5040, s9 = 1.0 / 362880, s11 = -1.0 / 39916800,
                   s13 = 1.0 / 6227020800.0, s15 = -1.0 / 1307674368000.0;
  constexpr double c2 = -1.0 / 2, c4 = 1.0 / 24, c6 = -1.0 / 720, c8 = 1.0 / 40320, c10 = -1.0 / 3628800,
                   c12 = 1.0 / 479001600, c14 = -1.0 / 87178291200.0, c16 = 1.0 / 20922789888000.0;
  const double sp =
      r + r * r2 * (s3 + r2 * (s5 + r2 * (s7 + r2 * (s9 + r2 * (s11 + r2 * (s13 + r2 * s15))))));
  const double cp =
      1.0 + r2 * (c2 + r2 * (c4 + r2 * (c6 + r2 * (c8 + r2 * (c10 + r2 * (c12 + r2 * (c14 + r2 * c16)))))));
  switch (k & 3) {  // quadrant
    case 0: return {sp, cp};
    case 1: return {cp, -sp};
    case 2: return {-sp, -cp};
    default: return {-cp, sp};
  }
}

struct rope_job {
  const htp_op_ctx* ctx;
  htp_rope_params p;
  htp_mdev_range rows;  // this device's flattened rows of dst (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

// A run of rows uniformly strided in src (and dst, which is contiguous).
struct rope_block {
  const uint8_t* src;
  uint8_t* dst;
  const uint8_t* pos;  // the position of the block's first token
  uint32_t rows;
  uint32_t i1;     // head index of the first row
  uint32_t n_tok;  // tokens the block touches
};

rope_block block_at(const rope_job& j, uint32_t r, uint32_t r_end) {
  const htp_rope_params& p = j.p;
  const htp_tensor& ts = j.ctx->src[0]->t;
  const htp_tensor& td = j.ctx->dst->t;
  const htp_tensor& tp = j.ctx->src[1]->t;
  const uint32_t i1 = htp_fastmod(r, p.ne1);
  const uint32_t i23 = htp_fastdiv(r, p.ne1);
  const uint32_t i2 = htp_fastmod(i23, p.ne2);
  const uint32_t i3 = htp_fastdiv(i23, p.ne2);
  const uint32_t run = htp_rope_planes_merge(ts) ? (p.ne2.div - i2) * p.ne1.div - i1 : p.ne1.div - i1;
  rope_block b;
  b.rows = htp_min(htp_min(p.block_rows, r_end - r), run);
  b.i1 = i1;
  b.n_tok = htp_fastdiv(i1 + b.rows - 1, p.ne1) + 1;
  b.src = j.ctx->src[0]->data + (uint64_t)i1 * ts.nb[1] + (uint64_t)i2 * ts.nb[2] + (uint64_t)i3 * ts.nb[3];
  b.dst = j.ctx->dst->data + (uint64_t)i1 * td.nb[1] + (uint64_t)i2 * td.nb[2] + (uint64_t)i3 * td.nb[3];
  b.pos = j.ctx->src[1]->data + (uint64_t)i2 * tp.nb[0];
  return b;
}

// Pair frequencies theta_scale^i / ff[i] * (freq_scale (1 - mix_i) + mix_i), in double.
void build_freqs(const htp_rope_params& p, const float* ff, double* freq) {
  const uint32_t half = p.n_dims / 2;
  const double freq_scale = p.freq_scale, ext = p.ext_factor, low = p.corr_low;
  double f = 1.0;
  for (uint32_t i = 0; i < half; ++i) {
    double factor = freq_scale;
    if (ext != 0.0) {
      // Pairs below corr_low keep their extrapolated angle, above the ramp they are interpolated.
      double t = ((double)i - low) / p.corr_denom;
      t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
      const double mix = (1.0 - t) * ext;
      factor = freq_scale * (1.0 - mix) + mix;
    }
    freq[i] = (ff != nullptr ? f / (double)ff[i] : f) * factor;
    f *= p.theta_scale;
  }
}

void build_cache(const htp_rope_params& p, const double* freq, int32_t pos, float* cos_c, float* sin_c) {
  const uint32_t half = p.n_dims / 2;
  for (uint32_t i = 0; i < half; ++i) {
    const sin_cos sc = rope_sin_cos((double)pos * freq[i]);
    cos_c[i] = (float)(sc.c * p.mscale);
    sin_c[i] = (float)(sc.s * p.mscale);
  }
}

void rotate_row(const float* x, float* y, uint32_t ne0, uint32_t n_dims, bool neox, const float* cos_c,
                const float* sin_c) {
  const uint32_t half = n_dims / 2;
  if (neox) {
    for (uint32_t i = 0; i < half; ++i) {
      const float x0 = x[i], x1 = x[i + half];
      y[i] = x0 * cos_c[i] - x1 * sin_c[i];
      y[i + half] = x0 * sin_c[i] + x1 * cos_c[i];
    }
  } else {
    for (uint32_t i = 0; i < half; ++i) {
      const float x0 = x[2 * i], x1 = x[2 * i + 1];
      y[2 * i] = x0 * cos_c[i] - x1 * sin_c[i];
      y[2 * i + 1] = x0 * sin_c[i] + x1 * cos_c[i];
    }
  }
  for (uint32_t c = n_dims; c < ne0; ++c) y[c] = x[c];
}

// One worker's blocks for dma_pipeline_run: src rows and their tokens' positions in, dst rows out.
struct rope_blocks {
  using block = rope_block;
  static constexpr uint32_t slots = HTP_ROPE_SLOTS;
  static constexpr uint32_t max_in = 2;
  static constexpr uint16_t compute_event = HTP_EV_COMPUTE;

  const rope_job* j;
  uint8_t* area;
  uint32_t next_row, r_end;
  const double* freq;
  float* cos_c;
  float* sin_c;
  bool have_cache;  // cos_c / sin_c hold the angles of cached_pos
  int32_t cached_pos;

  uint8_t* slot(uint32_t s, uint32_t offset) const { return area + s * j->p.layout.slot_bytes + offset; }

  bool more() const { return next_row < r_end; }
  void next(block* b) {
    *b = block_at(*j, next_row, r_end);
    next_row += b->rows;
  }
  uint32_t push_in(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_rope_layout& lay = j->p.layout;
    const htp_tensor& ts = j->ctx->src[0]->t;
    *ok &= dma_queue_push_2d(q, slot(s, lay.src_offset), lay.row_stride, b.src, ts.nb[1], ts.ne[0] * 4, b.rows);
    *ok &= dma_queue_push(q, slot(s, lay.pos_offset), b.pos, b.n_tok * 4);
    return 2;
  }
  uint8_t* out_buf(uint32_t s) const { return slot(s, j->p.layout.dst_offset); }
  void compute(dma_queue* q, const block& b, uint32_t s, const dma_ptr* in) {
    const htp_rope_params& p = j->p;
    const htp_tensor& td = j->ctx->dst->t;
    const uint32_t ne0 = td.ne[0], ne1 = td.ne[1];
    const bool neox = p.mode == HTP_ROPE_MODE_NEOX;
    const dma_view out = dma_queue_write_target(q, out_buf(s), p.layout.row_stride, b.dst, td.nb[1]);
    const auto* positions = (const int32_t*)in[1].data;
    uint32_t i1 = b.i1, tok = 0;
    for (uint32_t r = 0; r < b.rows; ++r) {
      const int32_t pos = positions[tok];
      if (!have_cache || pos != cached_pos) {  // consecutive rows mostly share a token
        build_cache(p, freq, pos, cos_c, sin_c);
        have_cache = true;
        cached_pos = pos;
      }
      rotate_row((const float*)(in[0].data + (uint64_t)r * in[0].stride),
                 (float*)(out.ptr + (uint64_t)r * out.stride), ne0, p.n_dims, neox, cos_c, sin_c);
      if (++i1 == ne1) {
        i1 = 0;
        ++tok;
      }
    }
  }
  uint32_t push_out(dma_queue* q, const block& b, uint32_t s, bool* ok) const {
    const htp_tensor& td = j->ctx->dst->t;
    *ok &= dma_queue_push_2d(q, b.dst, td.nb[1], out_buf(s), j->p.layout.row_stride, td.ne[0] * 4, b.rows);
    return 1;
  }
};

void rope_worker(unsigned n, unsigned i, void* data) {
  auto* j = (rope_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_rope_params& p = j->p;
  const htp_rope_layout& lay = p.layout;
  const uint32_t half = p.n_dims / 2;
  dma_queue* q = &ctx->dma[i];
  trace_buf* tr = &ctx->trace[i];
  uint8_t* area = ctx->vtcm_base + (uint64_t)i * lay.thread_bytes;
  auto* freq = (double*)(area + lay.freq_offset);
  auto* cos_c = (float*)(area + lay.cache_offset);
  bool ok = true;

  // The pair frequencies, from the freq factors staged through VTCM.
  const float* ff = nullptr;
  if (ctx->src[2] != nullptr) {
    ok &= dma_queue_push(q, area + lay.ff_offset, ctx->src[2]->data, half * 4);
    trace_begin(tr, HTP_EV_DMA_WAIT, 0xffff);
    ff = (const float*)dma_queue_pop(q).data;
    trace_end(tr, HTP_EV_DMA_WAIT, 0xffff);
  }
  if (ok) build_freqs(p, ff, freq);

  const htp_mdev_range part = htp_worker_part(j->rows, i, n);
  rope_blocks k{j, area, part.start, part.start + part.count, freq, cos_c, cos_c + half, false, 0};
  if (!ok) k.r_end = k.next_row;  // no blocks: the freq table is not there
  ok = dma_pipeline_run(q, tr, k) && ok;
  j->status[i] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_rope(htp_op_ctx* ctx) {
  if (ctx->op->opcode != HTP_OP_ROPE) return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr || ctx->src[1] == nullptr) return HTP_ERR_INVALID_PARAMS;
  rope_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_rope_params>(*ctx->op);
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor* ff = ctx->src[2] != nullptr ? &ctx->src[2]->t : nullptr;
  const int32_t* params = ctx->op->params;
  htp_status st =
      htp_rope_supported(td, ctx->src[0]->t, ctx->src[1]->t, ff, (uint32_t)params[0], (uint32_t)params[1]);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;
  st = htp_rope_params_check(job.p, td, ctx->src[0]->t, ctx->src[1]->t, ff, params, ctx->n_threads,
                             ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, rope_worker, &job, job.status, job.p.n_threads);
}

}  // namespace hexllm::htp
