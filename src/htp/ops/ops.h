// What a kernel gets from the dispatcher, and the entry point of every op family.
// One file per family in src/htp/ops/ defines its entry point; the families and their opcodes
// come from the op table (abi/htp_opcode.h).
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
  const tensor_ref* dst_ext[HTP_MAX_DST - 1];  // further outputs (fused ops); nullptr where none
  work_queue* wq;
  // [n_threads] each: job i of a work_queue_run uses dma[i] and trace[i], so a run that touches
  // them has at most n_threads jobs (job i runs once, on whichever worker claims it).
  dma_queue* dma;
  trace_buf* trace;
  uint8_t* vtcm_base;  // the session arena; place buffers with the abi layout builders
  uint32_t vtcm_size;
  uint32_t pad;
  htp_mdev mdev;       // this device in its group; count 1: the op runs whole here
};

// The share [start, start + count) of `n` units (rows, heads, ...) this device computes, in
// chunks of `per_chunk` units (htp_partition.h): all of them on a single device; device 0 does
// everything when per_chunk is 0 (the units cannot be split safely) or there are too few chunks.
inline htp_mdev_range op_device_share(const htp_op_ctx* ctx, uint32_t n, uint32_t per_chunk) {
  htp_mdev_range r{0, n};
  if (ctx->mdev.count > 1) r = htp_mdev_partition(n, per_chunk, ctx->mdev);
  return r;
}

// The flattened rows of `rows_of` (the op's destination, or a view of it as the kernel walks
// it) this device computes, each row `row_bytes` long: a share in whole 128-byte lines.
inline htp_mdev_range op_device_rows(const htp_op_ctx* ctx, const htp_tensor& rows_of, uint32_t n_rows,
                                     uint32_t row_bytes) {
  htp_mdev_range r{0, n_rows};
  if (ctx->mdev.count > 1) r = htp_mdev_partition(n_rows, htp_mdev_rows_per_chunk(rows_of, row_bytes), ctx->mdev);
  return r;
}

inline htp_mdev_range op_device_rows(const htp_op_ctx* ctx, uint32_t n_rows, uint32_t row_bytes) {
  return op_device_rows(ctx, ctx->dst->t, n_rows, row_bytes);
}

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
// them and hands rows to the workers.
#define HTP_OP_FAMILY_ENTRY(family) htp_status op_##family(htp_op_ctx* ctx);
HTP_OP_FAMILIES(HTP_OP_FAMILY_ENTRY)
#undef HTP_OP_FAMILY_ENTRY

}  // namespace hexllm::htp
