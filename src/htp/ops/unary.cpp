// Unary family: SCALE, CLAMP, SQR, SQRT, SILU, GELU, GELU_QUICK, SIGMOID, EXP, NEG, SOFTPLUS,
// TANH on F32, src any view with dense rows. Tiles (whole rows, or column chunks of long rows)
// are split over workers and streamed through the row-wise pipeline (ops/rowwise.h); the math
// is one vmath call per row.
#include "htp/abi/unary_params.h"
#include "htp/ops/rowwise.h"

namespace hexllm::htp {

namespace {

using unary_fn = void (*)(const vmath_ops& vm, const float* x, float* y, uint32_t n, float a, float b);

// y = f(x) for the table's plain maps (SQRT, SILU, ...).
template <void (*vmath_ops::*F)(const float*, float*, uint32_t)>
void map(const vmath_ops& vm, const float* x, float* y, uint32_t n, float, float) {
  (vm.*F)(x, y, n);
}

void scale(const vmath_ops& vm, const float* x, float* y, uint32_t n, float s, float b) {
  vm.scale_bias(x, y, n, s, b);
}
void clamp(const vmath_ops& vm, const float* x, float* y, uint32_t n, float lo, float hi) {
  vm.clamp(x, y, n, lo, hi);
}
void sqr(const vmath_ops& vm, const float* x, float* y, uint32_t n, float, float) { vm.mul(x, x, y, n); }
// -x + -0 is exactly -x, signed zeros included.
void neg(const vmath_ops& vm, const float* x, float* y, uint32_t n, float, float) {
  vm.scale_bias(x, y, n, -1.0f, -0.0f);
}

unary_fn unary_for(uint32_t opcode) {
  switch (opcode) {
    case HTP_OP_SCALE: return scale;
    case HTP_OP_CLAMP: return clamp;
    case HTP_OP_SQR: return sqr;
    case HTP_OP_NEG: return neg;
    case HTP_OP_SQRT: return map<&vmath_ops::sqrt>;
    case HTP_OP_SILU: return map<&vmath_ops::silu>;
    case HTP_OP_GELU: return map<&vmath_ops::gelu>;
    case HTP_OP_GELU_QUICK: return map<&vmath_ops::gelu_quick>;
    case HTP_OP_SIGMOID: return map<&vmath_ops::sigmoid>;
    case HTP_OP_EXP: return map<&vmath_ops::exp>;
    case HTP_OP_SOFTPLUS: return map<&vmath_ops::softplus>;
    default: return map<&vmath_ops::tanh>;
  }
}

struct unary_job {
  const htp_op_ctx* ctx;
  htp_unary_params p;
  const vmath_ops* vm;
  unary_fn fn;
  float a, b;  // SCALE s, bias / CLAMP min, max
  htp_mdev_range rows;  // this device's flattened rows (all of them on a single device)
  htp_status status[HTP_MAX_THREADS];
};

struct unary_policy {
  const unary_job* j;

  const uint8_t* in_addr(uint32_t, uint32_t i1, uint32_t i2, uint32_t i3, uint32_t col) const {
    const htp_tensor& t = j->ctx->src[0]->t;
    return j->ctx->src[0]->data + (uint64_t)i1 * t.nb[1] + (uint64_t)i2 * t.nb[2] + (uint64_t)i3 * t.nb[3] +
           (uint64_t)col * 4;
  }
  uint32_t in_row_stride(uint32_t) const { return j->ctx->src[0]->t.nb[1]; }
  uint32_t in_elem(uint32_t) const { return 4; }
  bool in_used(uint32_t k, uint32_t) const { return k == 0; }

  void compute(const rw_item& it, const dma_ptr* in, const dma_view& out) const {
    for (uint32_t r = 0; r < it.rows; ++r)
      j->fn(*j->vm, (const float*)(in[0].data + (uint64_t)r * in[0].stride),
            (float*)(out.ptr + (uint64_t)r * out.stride), it.cols, j->a, j->b);
  }
};

void unary_worker(unsigned n, unsigned i, void* data) {
  auto* j = (unary_job*)data;
  unary_policy pol{j};
  const rw_range range = rw_worker_range(j->p.plan, j->p.chunks, j->rows, true, n, i);
  j->status[i] = rw_stream(j->ctx, j->p.plan, range, 1, pol, i) ? HTP_OK : HTP_ERR_INTERNAL;
}

}  // namespace

htp_status op_unary(htp_op_ctx* ctx) {
  const uint32_t opcode = ctx->op->opcode;
  if (ctx->src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& td = ctx->dst->t;
  htp_status st = htp_unary_supported(opcode, td, ctx->src[0]->t);
  if (st != HTP_OK) return st;
  const uint64_t n_rows = htp_tensor_nrows(td);
  if (n_rows == 0 || td.ne[0] == 0) return HTP_OK;
  if (n_rows > 0xffffffffu) return HTP_ERR_INVALID_PARAMS;

  unary_job job;
  job.ctx = ctx;
  job.p = htp_kparams_get<htp_unary_params>(*ctx->op);
  st = htp_unary_params_check(job.p, opcode, td, ctx->src[0]->t, ctx->n_threads, ctx->vtcm_size);
  if (st != HTP_OK) return st;
  job.vm = &vmath_select();
  job.fn = unary_for(opcode);
  job.a = rw_param_f(*ctx->op, 0);
  job.b = rw_param_f(*ctx->op, 1);
  job.rows = op_device_rows(ctx, (uint32_t)n_rows, td.ne[0] * 4);
  if (job.rows.count == 0) return HTP_OK;
  return run_workers(ctx, unary_worker, &job, job.status, job.p.plan.n_threads);
}

}  // namespace hexllm::htp
