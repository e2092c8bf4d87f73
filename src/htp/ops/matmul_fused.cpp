// Fused matmul ops: MUL_MAT_ADD, MUL_MAT_QKV, MUL_MAT_FFN, MUL_MAT_ID_FFN (plan and tensor slots in
// htp/abi/matmul_fused_params.h). Per chunk of act rows: one quantization run into the act area,
// then each part's weight-streaming run against it (matmul.cpp's workers), then for the FFN ops
// a GLU run that reads the gate and up results from VTCM and writes only glu(gate, up) to DDR.
// A part computes with its unfused configuration and the same kernels, and an addend or the GLU
// is applied to the same float values the unfused ADD / SWIGLU / GEGLU would read, so the fused
// op gives the unfused sequence's bits. Several devices split every part by output columns, as
// the unfused matmuls do, each device quantizing the whole chunk for its own columns.
#include "htp/abi/matmul_fused_params.h"
#include "htp/ops/matmul_impl.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

namespace {

struct glu_job {
  const htp_op_ctx* ctx;
  const mm_job* part0;  // the chunk, the output's index math (and the ID pairs)
  const tensor_ref* out;
  const vmath_ops* vm;
  uint32_t glu;
  const uint8_t* gate;  // the chunk's results, one row per act row
  const uint8_t* up;
  uint32_t stride;
  htp_status status[HTP_MAX_THREADS];
};

// The chunk's rows split evenly; each row's columns of this device (its gate / up tiles) are
// computed into its VTCM gate row (or straight into DDR in zero-copy mode) and written back
// through the worker's FIFO. With fewer rows than workers (decode: one row) each row's columns
// are split too, in whole 128-byte lines, so that no worker idles through the GLU.
void glu_worker(unsigned n, unsigned w, void* data) {
  auto* j = (glu_job*)data;
  const mm_job& m = *j->part0;
  const uint32_t rows = m.chunk_end - m.chunk0;
  const uint32_t c0 = m.tile0 * kHtpTileRows, cols = htp_min(m.tile_end * kHtpTileRows, m.s.m) - c0;
  const uint32_t lines = (cols + 31) / 32;
  const uint32_t pieces = rows < n ? htp_min((n + rows - 1) / rows, lines) : 1;  // per row, none empty
  const uint32_t items = rows * pieces;
  const uint32_t i_begin = (uint32_t)((uint64_t)items * w / n), i_end = (uint32_t)((uint64_t)items * (w + 1) / n);
  j->status[w] = HTP_OK;
  if (i_begin == i_end) return;
  dma_queue* q = &j->ctx->dma[w];
  trace_buf* tr = &j->ctx->trace[w];
  bool ok = true;
  trace_begin(tr, HTP_EV_COMPUTE, (uint16_t)i_begin);
  for (uint32_t i = i_begin; i < i_end && ok; ++i) {
    const uint32_t r = i / pieces, piece = i % pieces;
    const uint32_t cb = lines * piece / pieces * 32, ce = htp_min(cols, lines * (piece + 1) / pieces * 32);
    auto* g = (uint8_t*)(j->gate + (uint64_t)r * j->stride + (uint64_t)(c0 + cb) * 4);
    const auto* u = (const float*)(j->up + (uint64_t)r * j->stride + (uint64_t)(c0 + cb) * 4);
    uint8_t* dst = mm_out_row(m, *j->out, m.chunk0 + r) + (uint64_t)(c0 + cb) * 4;
    const dma_view y = dma_queue_write_target(q, g, j->stride, dst, j->stride);
    if (j->glu == HTP_OP_SWIGLU) j->vm->swiglu((const float*)g, u, (float*)y.ptr, ce - cb);
    else j->vm->geglu((const float*)g, u, (float*)y.ptr, ce - cb);
    if (dma_queue_depth(q) >= DMA_QUEUE_CAPACITY) dma_queue_pop(q);
    ok &= dma_queue_push(q, dst, g, (ce - cb) * 4);
  }
  trace_end(tr, HTP_EV_COMPUTE, (uint16_t)i_begin);
  trace_begin(tr, HTP_EV_FLUSH, (uint16_t)i_end);
  dma_queue_flush(q);
  trace_end(tr, HTP_EV_FLUSH, (uint16_t)i_end);
  j->status[w] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

// All parts' weight streaming in one work run: each worker takes its share of part 0, then of
// part 1, ..., so no worker waits at a barrier between parts and only the last part has a tail.
// Each part's units, kernels and sums are those of its own run.
struct parts_job {
  mm_job* jobs;
  uint32_t n_parts;
  htp_status status[HTP_MAX_THREADS];
};

void parts_worker(unsigned n, unsigned w, void* data) {
  (void)n;
  auto* pj = (parts_job*)data;
  pj->status[w] = HTP_OK;
  for (uint32_t k = 0; k < pj->n_parts; ++k) {
    mm_job& j = pj->jobs[k];
    const uint32_t nt = j.p.cfg.n_threads;
    if (w >= nt || j.tile0 == j.tile_end) continue;
    mm_worker(nt, w, &j);
    if (j.status[w] != HTP_OK) {
      pj->status[w] = j.status[w];
      return;
    }
  }
}

const htp_tensor* desc_of(const tensor_ref* r) { return r != nullptr ? &r->t : nullptr; }

}  // namespace

htp_status op_matmul_fused(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  const bool ffn = htp_mmf_is_ffn(opcode);
  const tensor_ref* outs[HTP_MMF_MAX_PARTS] = {ctx->dst, ctx->dst_ext[0], ctx->dst_ext[1]};
  htp_mmf_tensors t{};
  t.x = desc_of(ctx->src[0]);
  for (uint32_t k = 0; k < HTP_MMF_MAX_PARTS; ++k) {
    t.w[k] = desc_of(ctx->src[1 + k]);
    t.addend[k] = desc_of(ctx->src[HTP_MMF_ADDEND_SRC + k]);
    t.out[k] = desc_of(outs[k]);
  }
  t.ids = desc_of(ctx->src[HTP_MMF_IDS_SRC]);
  const htp_mmf_params p = htp_kparams_get<htp_mmf_params>(*ctx->op);
  htp_mm_shape shapes[HTP_MMF_MAX_PARTS] = {};
  htp_status st = htp_mmf_params_check(p, opcode, ctx->op->params, t, ctx->n_threads, ctx->vtcm_size, shapes);
  if (st != HTP_OK) return st;
  const uint32_t n_parts = p.n_parts, glu = p.glu;

  mm_job jobs[HTP_MMF_MAX_PARTS];
  htp_mm_params mps[HTP_MMF_MAX_PARTS];
  htp_mmf_areas areas{};
  const uint32_t act_rows = p.cfg[0].act_rows;
  for (uint32_t k = 0; k < n_parts; ++k) {
    uint64_t bytes = 0;
    st = htp_mm_params_make(shapes[k], p.cfg[k], &mps[k], &bytes);
    if (st != HTP_OK) return st;
    htp_mmf_areas_add(&areas, mps[k]);
  }
  for (uint32_t k = 0; k < n_parts; ++k) {
    const htp_mm_params& mp = mps[k];
    mm_job& j = jobs[k];
    st = mm_job_init(&j, ctx, shapes[k], mp, ctx->src[1 + k], ctx->src[0], outs[ffn ? 0 : k],
                     ctx->src[HTP_MMF_IDS_SRC]);
    if (st != HTP_OK) return st;
    j.area_offset = areas.offset;
    j.area_stride = areas.stride;
    if (ffn) {
      j.local = ctx->vtcm_base + p.local_offset + (uint64_t)k * act_rows * p.local_stride;
      j.local_stride = p.local_stride;
    }
    if (((p.add_mask >> k) & 1u) != 0) {
      j.addend = ctx->src[HTP_MMF_ADDEND_SRC + k];
      j.addend_bcast = ((p.bcast_mask >> k) & 1u) != 0;
      j.addend_area = ctx->vtcm_base + p.addend_offset;
      j.addend_bytes = p.addend_bytes;
    }
  }
  // Devices split each part's output columns in tiles of whole 128-byte lines of its output,
  // as the unfused matmul does (FFN: gate and up both by the GLU output, so one range).
  if (ctx->mdev.count > 1) {
    bool any = false;
    for (uint32_t k = 0; k < n_parts; ++k) {
      const tensor_ref* out = outs[ffn ? 0 : k];
      const htp_mdev_range tiles =
          htp_mdev_partition(shapes[k].n_tiles, htp_mdev_cols_per_chunk(out->t, kHtpTileRows), ctx->mdev);
      jobs[k].tile0 = tiles.start;
      jobs[k].tile_end = tiles.start + tiles.count;
      any |= tiles.count > 0;
    }
    if (!any) return HTP_OK;
  }
  if (opcode == HTP_OP_MUL_MAT_ID_FFN) {  // one routing for both parts: same ids, same aux area
    st = mm_route_ids(&jobs[0]);
    if (st != HTP_OK) return st;
    for (uint32_t k = 1; k < n_parts; ++k) {
      jobs[k].offs = jobs[0].offs;
      jobs[k].pairs = jobs[0].pairs;
    }
  }

  glu_job gj;
  gj.ctx = ctx;
  gj.part0 = &jobs[0];
  gj.out = ctx->dst;
  gj.vm = &vmath_select();
  gj.glu = glu;
  gj.gate = jobs[0].local;
  gj.up = ffn ? jobs[1].local : nullptr;
  gj.stride = p.local_stride;
  parts_job pj;
  pj.jobs = jobs;
  pj.n_parts = n_parts;
  const uint32_t rows = shapes[0].rows;
  for (uint32_t c0 = 0; c0 < rows; c0 += act_rows) {
    for (uint32_t k = 0; k < n_parts; ++k) mm_job_chunk(&jobs[k], c0);
    st = run_workers(ctx, mm_quant_worker, &jobs[0], jobs[0].status, p.cfg[0].quant_threads);
    if (st == HTP_OK) st = run_workers(ctx, parts_worker, &pj, pj.status, areas.n_threads);
    if (st == HTP_OK && ffn && jobs[0].tile0 != jobs[0].tile_end)
      st = run_workers(ctx, glu_worker, &gj, gj.status, p.cfg[0].n_threads);
    if (st != HTP_OK) return st;
  }
  return HTP_OK;
}

}  // namespace hexllm::htp
