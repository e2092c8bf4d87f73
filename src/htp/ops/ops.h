// What a kernel gets from the dispatcher, and the entry point of every op family.
// One file per family in src/htp/ops/ defines its entry point; ops/not_implemented.cpp holds
// weak stand-ins (HTP_ERR_NO_SUPPORT) so the library links before every family exists.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_abi.h"
#include "htp/dma_queue.h"
#include "htp/trace.h"
#include "htp/work_queue.h"

namespace hexllm::htp {

// A tensor checked against its bank (bounds, strides, type) and resolved to a device pointer.
struct tensor_ref {
  htp_tensor t;
  uint8_t* data;
};

struct htp_op_ctx {
  const htp_op_desc* op;  // a copy owned by the session; kparams already in place
  uint32_t op_index;
  uint32_t n_threads;                     // session workers; ops may use fewer
  const tensor_ref* src[HTP_MAX_SRC];     // nullptr where the op has no such source
  const tensor_ref* dst;
  work_queue* wq;
  // Per worker, [n_threads] each: job i of a work_queue_run uses dma[i] and trace[i], so a run
  // that touches them has at most n_threads jobs (then job i runs on worker i).
  dma_queue* dma;
  trace_buf* trace;
  uint8_t* vtcm_base;  // the session arena; place buffers with the abi layout builders
  uint32_t vtcm_size;
  uint32_t pad;
};

// Runs `fn(n, w, job)` on n workers of the session's queue and returns the first failure among
// the workers' statuses (each worker reports into status[w]; all are reset to HTP_OK first).
inline htp_status run_workers(const htp_op_ctx* ctx, work_fn fn, void* job, htp_status* status, uint32_t n) {
  for (uint32_t i = 0; i < HTP_MAX_THREADS; ++i) status[i] = HTP_OK;
  work_queue_run(ctx->wq, fn, job, n);
  for (uint32_t i = 0; i < n; ++i)
    if (status[i] != HTP_OK) return status[i];
  return HTP_OK;
}

// Family entry points. Each checks the types it supports, reads its kernel params, validates
// them and hands rows to the workers. Opcodes per family: see dispatch.cpp.
htp_status op_matmul(htp_op_ctx* ctx);      // MUL_MAT, MUL_MAT_ID, MUL_MAT_ADD, MUL_MAT_QKV, MUL_MAT_FFN
htp_status op_binary(htp_op_ctx* ctx);      // ADD, SUB, MUL, DIV, ADD_ID
htp_status op_unary(htp_op_ctx* ctx);       // SCALE, CLAMP, SQR, SQRT, SILU, GELU, GELU_QUICK, SIGMOID, EXP,
                                            // NEG, SOFTPLUS, TANH
htp_status op_norm(htp_op_ctx* ctx);        // RMS_NORM, NORM, L2_NORM, RMS_NORM_MUL
htp_status op_act(htp_op_ctx* ctx);         // SWIGLU, GEGLU, SWIGLU_OAI
htp_status op_softmax(htp_op_ctx* ctx);     // SOFT_MAX
htp_status op_rope(htp_op_ctx* ctx);        // ROPE
htp_status op_flash_attn(htp_op_ctx* ctx);  // FLASH_ATTN_EXT
htp_status op_rows(htp_op_ctx* ctx);        // GET_ROWS, SET_ROWS
htp_status op_copy(htp_op_ctx* ctx);        // CPY, CONT, DUP, CONCAT, REPEAT, PAD, FILL
htp_status op_reduce(htp_op_ctx* ctx);      // SUM_ROWS, ARGSORT, TOP_K

}  // namespace hexllm::htp
