// Gated-activation family: SWIGLU (silu(g) u), GEGLU (gelu(g) u), SWIGLU_OAI (gpt-oss) on F32,
// with gate and up from two tensors or from the two halves of one row. Tiles are split over
// workers and streamed through the row-wise pipeline (ops/rowwise.h) with gate and up as its
// two inputs; the math is one fused vmath call per row.
#include "htp/abi/act_params.h"
#include "htp/ops/rowwise.h"

namespace hexllm::htp {

namespace {

struct act_job {
  const htp_op_ctx* ctx;
  htp_act_params p;
  const vmath_ops* vm;
  uint32_t opcode;
  float alpha, limit;        // SWIGLU_OAI
  const tensor_ref* src[2];  // gate, up tensors
  uint32_t col_offset[2];    // bytes into the row (the second half of a split row)
  htp_mdev_range rows;  // this device's flattened rows (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

struct act_policy {
  const act_job* j;

  const uint8_t* in_addr(uint32_t k, uint32_t i1, uint32_t i2, uint32_t i3, uint32_t col) const {
    const htp_tensor& t = j->src[k]->t;
    return j->src[k]->data + (uint64_t)i1 * t.nb[1] + (uint64_t)i2 * t.nb[2] + (uint64_t)i3 * t.nb[3] +
           j->col_offset[k] + (uint64_t)col * 4;
  }
  uint32_t in_row_stride(uint32_t k) const { return j->src[k]->t.nb[1]; }
  uint32_t in_elem(uint32_t) const { return 4; }
  bool in_used(uint32_t, uint32_t) const { return true; }

  void compute(const rw_item& it, const dma_ptr* in, const dma_view& out) const {
    for (uint32_t r = 0; r < it.rows; ++r) {
      const float* g = (const float*)(in[0].data + (uint64_t)r * in[0].stride);
      const float* u = (const float*)(in[1].data + (uint64_t)r * in[1].stride);
      float* y = (float*)(out.ptr + (uint64_t)r * out.stride);
      if (j->opcode == HTP_OP_SWIGLU)
        j->vm->swiglu(g, u, y, it.cols);
      else if (j->opcode == HTP_OP_GEGLU)
        j->vm->geglu(g, u, y, it.cols);
      else
        j->vm->swiglu_oai(g, u, y, it.cols, j->alpha, j->limit);
    }
  }
};

void act_worker(unsigned n, unsigned i, void* data) {
  auto* j = (act_job*)data;
  act_policy pol{j};
  const rw_range range = rw_worker_range(j->p.plan, j->p.chunks, j->rows, true, n, i);
  j->status[i] = rw_stream(j->ctx, j->p.plan, range, 1, pol, i) ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_act(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (ctx->src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  const tensor_ref* a = ctx->src[0];
  const tensor_ref* b = ctx->src[1];
  htp_status st = htp_act_supported(opcode, td, a->t, b != nullptr ? &b->t : nullptr);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  act_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_act_params>(*ctx->op);
  st = htp_act_params_check(job.p, opcode, td, a->t, b != nullptr ? &b->t : nullptr, ctx->n_threads,
                            ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.vm = &vmath_select();
  job.opcode = opcode;
  job.alpha = rw_param_f(*ctx->op, 2);
  job.limit = rw_param_f(*ctx->op, 3);
  // first / second operand: two tensors, or the halves of a's rows.
  const tensor_ref* first = a;
  const tensor_ref* second = b != nullptr ? b : a;
  const uint32_t second_offset = b != nullptr ? 0 : td.ne[0] * 4;
  const bool swapped = ctx->op->params[0] != 0;
  job.src[0] = swapped ? second : first;
  job.src[1] = swapped ? first : second;
  job.col_offset[0] = swapped ? second_offset : 0;
  job.col_offset[1] = swapped ? 0 : second_offset;
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, act_worker, &job, job.status, job.p.plan.n_threads);
}

}  // namespace hexllm::htp
