// The session object, shared by session.cpp (lifetime) and batch.cpp (processing).
#pragma once

#include "htp/dma_queue.h"
#include "htp/ops/ops.h"
#include "htp/session.h"
#include "htp/trace.h"
#include "htp/vtcm.h"
#include "htp/work_queue.h"

namespace hexllm::htp {

struct htp_session {
  htp_session_config config;  // banks[] is the live mapping
  uint64_t mapped_bytes;      // sum of mapped bank sizes, <= window_size
  vtcm_arena vtcm;
  tensor_ref* tensors;        // [config.max_tensors], rebuilt per batch
  uint32_t n_dma;             // dma queues initialized (for teardown)
  uint32_t pad;
  htp_mdev mdev;              // this device in its group (count 1: alone)
  htp_op_desc op;             // the op being run, copied out of the message
  htp_op_start_fn op_start;   // called as each op starts (nullptr: none)
  void* op_start_arg;
  trace_buf trace[HTP_MAX_THREADS];
  dma_queue dma[HTP_MAX_THREADS];
  work_queue wq;
};

}  // namespace hexllm::htp
