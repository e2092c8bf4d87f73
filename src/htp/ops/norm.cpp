// Normalization family: RMS_NORM, NORM, L2_NORM and the fused RMS_NORM_MUL on F32 rows.
// Rows are split over workers and streamed through the row-wise pipeline (ops/rowwise.h).
// Whole rows: statistics and output in one visit. Chunked rows (longer than VTCM allows):
// pass 1 accumulates the statistics chunk by chunk (sums in double; NORM combines per-chunk
// mean and squared deviations with Chan's parallel formula, so no E[x^2] - mean^2
// cancellation), pass 2 re-reads the chunks and writes. The RMS_NORM_MUL weight row is loaded
// once per worker (whole rows) or streams with each pass-2 chunk.
#include "htp/abi/norm_params.h"
#include "htp/ops/rowwise.h"
#include "htp/vmath/vmath_scalar.h"

namespace hexllm::htp {

namespace {

struct norm_job {
  const htp_op_ctx* ctx;
  htp_norm_params p;
  const vmath_ops* vm;
  uint32_t opcode;
  float eps;
  htp_mdev_range rows;  // this device's flattened rows (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

// A row's scale (1 / rms, 1 / sd or 1 / max(||x||, eps)) and, for NORM, its mean.
struct row_scale {
  float mean, inv;
};

struct norm_policy {
  const norm_job* j;
  const float* w;  // RMS_NORM_MUL weight row (whole rows), readable
  // Chunked-row statistics, accumulated in pass 1 and turned into a row_scale at pass 2.
  double n_acc, mean_acc, m2_acc, sq_acc;
  row_scale rs;

  const uint8_t* in_addr(uint32_t k, uint32_t i1, uint32_t i2, uint32_t i3, uint32_t col) const {
    if (k == 1) return j->ctx->src[1]->data + (uint64_t)col * 4;
    const htp_tensor& t = j->ctx->src[0]->t;
    return j->ctx->src[0]->data + (uint64_t)i1 * t.nb[1] + (uint64_t)i2 * t.nb[2] + (uint64_t)i3 * t.nb[3] +
           (uint64_t)col * 4;
  }
  uint32_t in_row_stride(uint32_t k) const { return j->ctx->src[k]->t.nb[1]; }
  uint32_t in_elem(uint32_t) const { return 4; }
  bool in_used(uint32_t k, uint32_t pass) const {
    return k == 0 || (j->opcode == HTP_OP_RMS_NORM_MUL && pass == 2);
  }

  row_scale finish(double n, double mean, double sq_or_m2) const {
    const float eps = j->eps;
    if (j->opcode == HTP_OP_L2_NORM) return {0.0f, 1.0f / vm_max(eps, vm_sqrt((float)sq_or_m2))};
    if (j->opcode == HTP_OP_NORM) return {(float)mean, 1.0f / vm_sqrt((float)(sq_or_m2 / n) + eps)};
    return {0.0f, 1.0f / vm_sqrt((float)(sq_or_m2 / n) + eps)};
  }

  void apply(const row_scale& s, const float* x, const float* wrow, float* y, uint32_t n) const {
    if (j->opcode == HTP_OP_NORM)
      j->vm->sub_scale(x, y, n, s.mean, s.inv);
    else if (j->opcode == HTP_OP_RMS_NORM_MUL)
      j->vm->scale_mul(x, wrow, y, n, s.inv);
    else
      j->vm->scale_bias(x, y, n, s.inv, 0.0f);
  }

  void compute(const rw_item& it, const dma_ptr* in, const dma_view& out) {
    const vmath_ops& vm = *j->vm;
    if (it.pass == 0) {  // whole rows
      for (uint32_t r = 0; r < it.rows; ++r) {
        const float* x = (const float*)(in[0].data + (uint64_t)r * in[0].stride);
        float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
        const uint32_t n = it.cols;
        row_scale s;
        if (j->opcode == HTP_OP_NORM) {
          const float mean = vm.sum(x, n) / (float)n;
          s = finish(n, mean, vm.sum_sq_dev(x, n, mean));
        } else {
          s = finish(n, 0.0, vm.sum_sq(x, n));
        }
        apply(s, x, w, y, n);
      }
      return;
    }
    const float* x = (const float*)in[0].data;
    const uint32_t n = it.cols;
    if (it.pass == 1) {
      if (it.col == 0) n_acc = mean_acc = m2_acc = sq_acc = 0.0;
      if (j->opcode == HTP_OP_NORM) {
        const float mean_c = vm.sum(x, n) / (float)n;
        const double m2_c = vm.sum_sq_dev(x, n, mean_c);
        const double nb = n, delta = mean_c - mean_acc, nt = n_acc + nb;
        mean_acc += delta * nb / nt;
        m2_acc += m2_c + delta * delta * n_acc * nb / nt;
        n_acc = nt;
      } else {
        sq_acc += vm.sum_sq(x, n);
        n_acc += n;
      }
      return;
    }
    if (it.col == 0) rs = finish(n_acc, mean_acc, j->opcode == HTP_OP_NORM ? m2_acc : sq_acc);
    apply(rs, x, in[1].data != nullptr ? (const float*)in[1].data : nullptr, (float*)out.ptr, n);
  }
};

void norm_worker(unsigned n, unsigned i, void* data) {
  auto* j = (norm_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_rw_plan& plan = j->p.plan;
  norm_policy pol{j, nullptr, 0, 0, 0, 0, {0, 0}};
  bool ok = true;
  const rw_range range = rw_worker_range(plan, plan.ne1, j->rows, false, n, i);
  if (range.units > 0 && plan.layout.row_offset != 0) {  // the weight row, once per worker
    uint8_t* vtcm = ctx->vtcm_base + (uint64_t)i * plan.layout.thread_bytes + plan.layout.row_offset;
    pol.w = (const float*)rw_preload(&ctx->dma[i], vtcm, ctx->src[1]->data, ctx->dst->t.ne[0] * 4, &ok);
  }
  ok = ok && rw_stream(ctx, plan, range, 2, pol, i);
  j->status[i] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_norm(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (ctx->src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const tensor_ref* w = ctx->src[1];
  const htp_tensor* wt = opcode == HTP_OP_RMS_NORM_MUL && w != nullptr ? &w->t : nullptr;
  htp_status st = htp_norm_supported(opcode, td, ctx->src[0]->t, wt);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  norm_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_norm_params>(*ctx->op);
  st = htp_norm_params_check(job.p, opcode, td, ctx->src[0]->t, wt, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.vm = &vmath_select();
  job.opcode = opcode;
  job.eps = rw_param_f(*ctx->op, 0);
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, norm_worker, &job, job.status, job.p.plan.n_threads);
}

}  // namespace hexllm::htp
