// SOFT_MAX on F32: softmax(scale * x + slope * mask) per row, optional F32/F16 mask broadcast
// over dims 2/3, ALiBi slopes and sinks. Rows are split over workers and streamed through the
// row-wise pipeline (ops/rowwise.h) with the mask rows as the second input.
// Whole rows: logits and their max in one vmath pass, then exp(s - max) with its sum, then
// the 1/sum scaling, all in the slot. Chunked rows: pass 1 keeps a running (max M, sum L) over
// the chunks (L rescaled by e^(M_old - M_new) when the max grows), pass 2 recomputes each
// chunk's logits and writes e^(s - M) / L. The sinks (one per head) are loaded once per worker.
#include "htp/abi/softmax_params.h"
#include "htp/ops/rowwise.h"
#include "htp/vmath/vmath_scalar.h"

namespace hexllm::htp {

namespace {

struct softmax_job {
  const htp_op_ctx* ctx;
  htp_softmax_params p;
  const vmath_ops* vm;
  float scale, max_bias;
  uint32_t n_head_log2;
  uint32_t mask_elem;  // 4 (F32), 2 (F16) or 0 (no mask)
  htp_mdev_range rows;  // this device's flattened rows (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

struct softmax_policy {
  const softmax_job* j;
  const float* sinks;  // readable copy of the sinks, or nullptr
  // Chunked rows: running max and sum of the current row.
  float m_run, l_run;

  const uint8_t* in_addr(uint32_t k, uint32_t i1, uint32_t i2, uint32_t i3, uint32_t col) const {
    const tensor_ref* s = j->ctx->src[k];
    const htp_tensor& t = s->t;
    if (k == 1) {
      i2 = htp_fastmod(i2, j->p.m2);
      i3 = htp_fastmod(i3, j->p.m3);
    }
    return s->data + (uint64_t)i1 * t.nb[1] + (uint64_t)i2 * t.nb[2] + (uint64_t)i3 * t.nb[3] +
           (uint64_t)col * (k == 1 ? j->mask_elem : 4);
  }
  uint32_t in_row_stride(uint32_t k) const { return j->ctx->src[k]->t.nb[1]; }
  uint32_t in_elem(uint32_t k) const { return k == 1 ? j->mask_elem : 4; }
  bool in_used(uint32_t k, uint32_t) const { return k == 0 || j->mask_elem != 0; }

  // ALiBi slope of head h (1 without ALiBi): an integer power of a double base.
  float slope(uint32_t h) const {
    if (!(j->max_bias > 0.0f)) return 1.0f;
    double base = h < j->n_head_log2 ? j->p.m0 : j->p.m1;
    uint32_t e = h < j->n_head_log2 ? h + 1 : 2 * (h - j->n_head_log2) + 1;
    double r = 1.0;
    for (; e != 0; e >>= 1, base *= base)
      if (e & 1) r *= base;
    return (float)r;
  }

  // y = scale * x + slope * mask; returns max y.
  float logits(const uint8_t* x, const uint8_t* m, float* y, uint32_t n, float sl) const {
    if (j->mask_elem == 2)
      return j->vm->scale_add_max_f16((const float*)x, (const uint16_t*)m, y, n, j->scale, sl);
    return j->vm->scale_add_max((const float*)x, (const float*)m, y, n, j->scale, sl);
  }

  static bool degenerate(float m) { return m == __builtin_inff() || m == -__builtin_inff(); }

  void compute(const rw_item& it, const dma_ptr* in, const dma_view& out) {
    const vmath_ops& vm = *j->vm;
    const float sl = slope(it.i2);
    const float sink = sinks != nullptr ? sinks[it.i2] : -__builtin_inff();
    const uint32_t n = it.cols;
    if (it.pass == 0) {  // whole rows
      for (uint32_t r = 0; r < it.rows; ++r) {
        float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
        const uint8_t* m = j->mask_elem != 0 ? in[1].data + (uint64_t)r * in[1].stride : nullptr;
        const float mx = vm_max(sink, logits(in[0].data + (uint64_t)r * in[0].stride, m, y, n, sl));
        if (degenerate(mx)) {
          htp_memset(y, 0, (size_t)n * 4);
          continue;
        }
        float sum = vm.exp_sub_sum(y, y, n, mx);
        if (sinks != nullptr) sum += vm_exp(sink - mx);
        vm.scale_bias(y, y, n, 1.0f / sum, 0.0f);
      }
      return;
    }
    float* y = (float*)out.ptr;  // pass 1: the slot's VTCM scratch
    const float mc = logits(in[0].data, j->mask_elem != 0 ? in[1].data : nullptr, y, n, sl);
    if (it.pass == 1) {
      if (it.col == 0) {  // a new row: start from the sink (e^(sink - sink) = 1)
        m_run = sink;
        l_run = sinks != nullptr ? 1.0f : 0.0f;
      }
      // A fully masked chunk adds nothing; a +inf logit makes the row degenerate (zeros).
      if (mc == -__builtin_inff() || m_run == __builtin_inff()) return;
      if (mc == __builtin_inff()) {
        m_run = mc;
        return;
      }
      const float lc = vm.exp_sub_sum(y, y, n, mc);
      if (mc > m_run) {
        l_run = l_run * vm_exp(m_run - mc) + lc;
        m_run = mc;
      } else {
        l_run += lc * vm_exp(mc - m_run);
      }
      return;
    }
    if (degenerate(m_run)) {
      htp_memset(y, 0, (size_t)n * 4);
      return;
    }
    vm.exp_sub_sum(y, y, n, m_run);
    vm.scale_bias(y, y, n, 1.0f / l_run, 0.0f);
  }
};

void softmax_worker(unsigned n, unsigned i, void* data) {
  auto* j = (softmax_job*)data;
  const htp_op_ctx* ctx = j->ctx;
  const htp_rw_plan& plan = j->p.plan;
  softmax_policy pol{j, nullptr, 0.0f, 0.0f};
  bool ok = true;
  const rw_range range = rw_worker_range(plan, plan.ne1, j->rows, false, n, i);
  if (range.units > 0 && ctx->src[2] != nullptr) {  // the sinks, once per worker
    uint8_t* vtcm =
        ctx->vtcm_base + (uint64_t)i * plan.layout.thread_bytes + HTP_RW_SLOTS * plan.layout.slot_bytes;
    pol.sinks = (const float*)rw_preload(&ctx->dma[i], vtcm, ctx->src[2]->data, ctx->dst->t.ne[2] * 4, &ok);
  }
  ok = ok && rw_stream(ctx, plan, range, 2, pol, i);
  j->status[i] = ok ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_softmax(htp_op_ctx* ctx) {
  if (ctx->op->opcode != HTP_OP_SOFT_MAX) return HTP_ERR_NO_SUPPORT;
  if (ctx->src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const htp_tensor* mask = ctx->src[1] != nullptr ? &ctx->src[1]->t : nullptr;
  const htp_tensor* sinks = ctx->src[2] != nullptr ? &ctx->src[2]->t : nullptr;
  htp_status st = htp_softmax_supported(td, ctx->src[0]->t, mask, sinks);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  softmax_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_softmax_params>(*ctx->op);
  st = htp_softmax_params_check(job.p, td, ctx->src[0]->t, mask, sinks, rw_param_f(*ctx->op, 1), ctx->n_threads,
                                ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.vm = &vmath_select();
  job.scale = rw_param_f(*ctx->op, 0);
  job.max_bias = rw_param_f(*ctx->op, 1);
  job.n_head_log2 = htp_softmax_n_head_log2(td.ne[2]);
  job.mask_elem = mask != nullptr ? htp_type_geometry(mask->type).type_size : 0;
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, softmax_worker, &job, job.status, job.p.plan.n_threads);
}

}  // namespace hexllm::htp
