// htp_session_process: validate a batch message, resolve its tensors, run its ops in order.
#include "htp/dispatch.h"
#include "htp/fence.h"
#include "htp/platform/platform.h"
#include "htp/session_impl.h"
#include "htp/util.h"

namespace hexllm::htp {

namespace {

// [offset, offset + bytes) lies in a message of `size` bytes and starts 8-byte aligned.
bool area_ok(uint64_t offset, uint64_t bytes, uint64_t size) {
  return offset % 8 == 0 && offset <= size && bytes <= size - offset;
}

// Devices the batch was built for; 0 in the header means one.
uint32_t batch_devices(const htp_batch_header& h) { return h.n_devices == 0 ? 1 : h.n_devices; }

// Where this device's response starts (it may lie out of bounds: callers check).
uint64_t response_at(const htp_batch_header& h, uint32_t device) {
  return h.response_offset + (uint64_t)device * h.response_stride;
}

htp_status check_header(const htp_batch_header& h, uint64_t size, const htp_session& s) {
  const htp_session_config& c = s.config;
  if (h.message_size > size || h.message_size < sizeof(htp_batch_header)) return HTP_ERR_BAD_BATCH;
  size = h.message_size;
  if ((h.flags & ~(uint32_t)HTP_BATCH_FLAGS_ALL) != 0 || h.n_tensors > c.max_tensors)
    return HTP_ERR_BAD_BATCH;
  // A batch built for another group size would split rows differently on its peers.
  if (batch_devices(h) != s.mdev.count) return HTP_ERR_BAD_BATCH;
  const uint64_t trace_bytes = (uint64_t)h.trace_threads * h.trace_capacity * sizeof(htp_trace_record);
  if (!area_ok(h.tensors_offset, (uint64_t)h.n_tensors * sizeof(htp_tensor), size) ||
      !area_ok(h.ops_offset, (uint64_t)h.n_ops * sizeof(htp_op_desc), size) ||
      !area_ok(response_at(h, s.mdev.idx), htp_response_bytes(h.n_ops), size) ||
      (s.mdev.count > 1 && h.response_stride < htp_response_bytes(h.n_ops)))
    return HTP_ERR_BAD_BATCH;
  if ((h.flags & HTP_BATCH_TRACE) != 0 &&
      (!area_ok(h.trace_offset + (uint64_t)s.mdev.idx * h.trace_stride, trace_bytes, size) ||
       (s.mdev.count > 1 && h.trace_stride < trace_bytes)))
    return HTP_ERR_BAD_BATCH;
  return HTP_OK;
}

// Bounds, strides and type of one tensor against the session's banks.
htp_status prepare_tensor(const htp_session& s, const htp_tensor& t, tensor_ref* out) {
  if (t.bank >= s.config.n_banks) return HTP_ERR_BAD_TENSOR;
  const htp_bank& bank = s.config.banks[t.bank];
  if (bank.size == 0) return HTP_ERR_OUT_OF_WINDOW;
  if ((t.flags & ~(uint32_t)HTP_TENSOR_FLAGS_ALL) != 0) return HTP_ERR_BAD_TENSOR;
  const htp_type_info ti = htp_type_geometry(t.type);
  if (ti.block_size == 0) return HTP_ERR_BAD_TENSOR;
  const uint64_t extent = htp_tensor_extent(t);
  if (extent == HTP_BAD_EXTENT || extent > t.size || (uint64_t)t.offset + t.size > bank.size)
    return HTP_ERR_BAD_TENSOR;
  // Kernels load whole scalars: element 0 and every stride keep the type's alignment.
  if (t.offset % ti.align != 0) return HTP_ERR_BAD_TENSOR;
  for (int d = 0; d < 4; ++d)
    if (t.nb[d] % ti.align != 0) return HTP_ERR_BAD_TENSOR;
  *out = {t, bank.base + t.offset};
  return HTP_OK;
}

htp_status check_op(const htp_op_desc& op, const htp_session& s, uint32_t n_tensors) {
  if (op.opcode >= HTP_OP_COUNT) return HTP_ERR_NO_SUPPORT;
  if ((op.flags & ~(uint32_t)HTP_OPF_ALL) != 0) return HTP_ERR_INVALID_PARAMS;
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k)
    if (op.src[k] != HTP_NO_TENSOR && op.src[k] >= n_tensors) return HTP_ERR_BAD_TENSOR;
  if (op.dst >= n_tensors) return HTP_ERR_BAD_TENSOR;  // also catches HTP_NO_TENSOR
  if ((s.tensors[op.dst].t.flags & HTP_TENSOR_WEIGHT) != 0) return HTP_ERR_BAD_TENSOR;
  for (uint32_t k = 0; k + 1 < HTP_MAX_DST; ++k) {
    if (op.dst_ext[k] == HTP_NO_TENSOR) continue;
    if (op.dst_ext[k] >= n_tensors || (s.tensors[op.dst_ext[k]].t.flags & HTP_TENSOR_WEIGHT) != 0)
      return HTP_ERR_BAD_TENSOR;
  }
  if (op.pad != 0) return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

htp_op_ctx make_ctx(htp_session* s, uint32_t op_index) {
  htp_op_ctx ctx{};
  ctx.op = &s->op;
  ctx.op_index = op_index;
  ctx.n_threads = s->config.n_threads;
  for (uint32_t k = 0; k < HTP_MAX_SRC; ++k)
    ctx.src[k] = s->op.src[k] == HTP_NO_TENSOR ? nullptr : &s->tensors[s->op.src[k]];
  ctx.dst = &s->tensors[s->op.dst];
  for (uint32_t k = 0; k + 1 < HTP_MAX_DST; ++k)
    ctx.dst_ext[k] = s->op.dst_ext[k] == HTP_NO_TENSOR ? nullptr : &s->tensors[s->op.dst_ext[k]];
  ctx.wq = &s->wq;
  ctx.dma = s->dma;
  ctx.trace = s->trace;
  ctx.vtcm_base = s->vtcm.base;
  ctx.vtcm_size = s->vtcm.size;
  ctx.mdev = s->mdev;
  return ctx;
}

// Every push has its pop: a kernel that returns with DMA work queued broke that rule.
htp_status drain_dma(htp_session* s) {
  htp_status st = HTP_OK;
  for (uint32_t i = 0; i < s->config.n_threads; ++i) {
    if (!dma_queue_empty(&s->dma[i])) {
      dma_queue_flush(&s->dma[i]);
      st = HTP_ERR_INTERNAL;
    }
  }
  return st;
}

// Several devices: the op's outputs leave this device's caches before its next fence signal
// (the DMA queues are drained already), so the peers and the host read them from memory.
void clean_outputs(const htp_op_ctx& ctx) {
  platform_cache_clean(ctx.dst->data, ctx.dst->t.size);
  for (const tensor_ref* d : ctx.dst_ext)
    if (d != nullptr) platform_cache_clean(d->data, d->t.size);
}

void setup_trace(htp_session* s, uint8_t* msg, const htp_batch_header& h, uint64_t t0) {
  const bool on = (h.flags & HTP_BATCH_TRACE) != 0;
  uint8_t* areas = msg + h.trace_offset + (uint64_t)s->mdev.idx * h.trace_stride;
  for (uint32_t t = 0; t < HTP_MAX_THREADS; ++t) {
    htp_trace_record* area = nullptr;
    if (on && t < h.trace_threads && t < s->config.n_threads)
      area = (htp_trace_record*)areas + (uint64_t)t * h.trace_capacity;
    trace_reset(&s->trace[t], area, h.trace_capacity, t0);
  }
}

// Validates everything up front, so that a malformed batch runs no op at all.
htp_status prepare_batch(htp_session* s, uint8_t* msg, const htp_batch_header& h, htp_response* rsp) {
  for (uint32_t i = 0; i < h.n_tensors; ++i) {
    htp_tensor t;
    htp_memcpy(&t, msg + h.tensors_offset + (uint64_t)i * sizeof(htp_tensor), sizeof t);
    const htp_status st = prepare_tensor(*s, t, &s->tensors[i]);
    if (st != HTP_OK) {
      rsp->failed_tensor = i;
      return st;
    }
  }
  for (uint32_t i = 0; i < h.n_ops; ++i) {
    htp_memcpy(&s->op, msg + h.ops_offset + (uint64_t)i * sizeof(htp_op_desc), sizeof(htp_op_desc));
    const htp_status st = check_op(s->op, *s, h.n_tensors);
    if (st != HTP_OK) {
      rsp->failed_op = i;
      return st;
    }
  }
  return HTP_OK;
}

// The group's fence slots, when the header names a mapped, aligned region for them.
htp_fence_slot* fence_slots(const htp_session& s, const htp_batch_header& h) {
  if (h.fence_bank >= s.config.n_banks || h.fence_offset % HTP_FENCE_SLOT != 0) return nullptr;
  const htp_bank& b = s.config.banks[h.fence_bank];
  if (b.size < HTP_FENCE_REGION || h.fence_offset > b.size - HTP_FENCE_REGION) return nullptr;
  return (htp_fence_slot*)(b.base + h.fence_offset);
}

htp_status run_ops(htp_session* s, uint8_t* msg, const htp_batch_header& h, htp_response* rsp,
                   uint64_t* op_ns, htp_fence_slot* fence) {
  htp_status st = HTP_OK;
  for (uint32_t i = 0; i < h.n_ops; ++i) {
    // Copied again and re-checked: an earlier op may have written over the message.
    htp_memcpy(&s->op, msg + h.ops_offset + (uint64_t)i * sizeof(htp_op_desc), sizeof(htp_op_desc));
    st = check_op(s->op, *s, h.n_tensors);
    if (st == HTP_OK) {
      htp_op_ctx ctx = make_ctx(s, i);
      // Every worker's track gets the op (the helpers are idle between runs, so thread 0 may write
      // their buffers): a timeline then shows each op on every worker, its fence inside it.
      for (uint32_t t = 0; t < s->config.n_threads; ++t) trace_begin(&s->trace[t], HTP_EV_OP, (uint16_t)i);
      // The op reads (or overwrites) what another device wrote: all devices finish the ops before it.
      if (s->mdev.count > 1 && (s->op.flags & HTP_OPF_FENCE) != 0)
        st = fence_barrier(fence, s->mdev, h.fence_seq + i, &s->trace[0], &rsp->fence_ns);
      if (s->op_start != nullptr) s->op_start(s->op_start_arg, i);
      const uint64_t start = platform_time_ns();
      // Every family computes its own device's share (ops/ops.h), device 0 alone where it cannot split.
      const bool skip = (s->op.flags & HTP_OPF_SKIP_COMPUTE) != 0;
      if (st == HTP_OK) st = i == s->config.fail_op ? HTP_ERR_INTERNAL : skip ? HTP_OK : dispatch_op(&ctx);
      const htp_status dma_st = drain_dma(s);
      if (st == HTP_OK) st = dma_st;
      if (s->mdev.count > 1) clean_outputs(ctx);
      op_ns[i] = platform_time_ns() - start;
      for (uint32_t t = 0; t < s->config.n_threads; ++t) trace_end(&s->trace[t], HTP_EV_OP, (uint16_t)i);
    }
    if (st != HTP_OK) {
      rsp->failed_op = i;
      break;
    }
    rsp->n_ops_done = i + 1;
  }
  return st;
}

// Multi-device batch end: every device's writes are complete before any returns to the host. A
// failure is published with the batch's last sequence, which releases every peer's barrier.
htp_status finish_group(htp_session* s, const htp_batch_header& h, htp_fence_slot* fence, htp_status st,
                        htp_response* rsp) {
  const uint32_t last = h.fence_seq + h.n_ops;
  if (st != HTP_OK) {
    fence_signal(fence, s->mdev, last, st);
    return st;
  }
  return fence_barrier(fence, s->mdev, last, &s->trace[0], &rsp->fence_ns);
}

}  // namespace

htp_status htp_session_process(htp_session* s, void* message, size_t size) {
  const uint64_t t0 = platform_time_ns();
  auto* msg = (uint8_t*)message;
  if (msg == nullptr || (uintptr_t)msg % 8 != 0 || size < sizeof(htp_batch_header)) return HTP_ERR_BAD_BATCH;
  htp_batch_header h;
  htp_memcpy(&h, msg, sizeof h);
  if (h.magic != HTP_BATCH_MAGIC) return HTP_ERR_BAD_BATCH;
  if (h.abi_version != HTP_ABI_VERSION) return HTP_ERR_ABI_VERSION;
  const uint64_t rsp_at = response_at(h, s->mdev.idx);
  if (rsp_at % 8 != 0 || !area_ok(rsp_at, sizeof(htp_response), size)) return HTP_ERR_BAD_BATCH;

  auto* rsp = (htp_response*)(msg + rsp_at);
  htp_memset(rsp, 0, sizeof(htp_response));
  rsp->failed_op = HTP_NO_INDEX;
  rsp->failed_tensor = HTP_NO_INDEX;
  rsp->seq = h.seq;
  rsp->device = s->mdev.idx;
  rsp->start_ns = t0;

  htp_status st = check_header(h, size, *s);
  if (st == HTP_OK) {
    auto* op_ns = (uint64_t*)(rsp + 1);
    htp_memset(op_ns, 0, (size_t)h.n_ops * sizeof(uint64_t));
    setup_trace(s, msg, h, t0);
    htp_fence_slot* fence = nullptr;
    if (s->mdev.count > 1) {
      fence = fence_slots(*s, h);
      if (fence == nullptr) st = HTP_ERR_BAD_BATCH;  // no slot to publish in: the host releases the peers
    }
    if (st == HTP_OK) {
      work_queue_wakeup(&s->wq);  // before validation, which hides the helpers' wake-up
      trace_begin(&s->trace[0], HTP_EV_VALIDATE, 0);
      st = prepare_batch(s, msg, h, rsp);
      trace_end(&s->trace[0], HTP_EV_VALIDATE, 0);
      if (st == HTP_OK) st = run_ops(s, msg, h, rsp, op_ns, fence);
      if (s->mdev.count > 1) st = finish_group(s, h, fence, st, rsp);
      work_queue_suspend(&s->wq);
    }
    for (uint32_t t = 0; t < HTP_MAX_THREADS; ++t) {
      rsp->trace_count[t] = s->trace[t].count;
      rsp->trace_dropped += s->trace[t].dropped;
    }
  }
  rsp->status = st;
  rsp->total_ns = platform_time_ns() - t0;
  return st;
}

}  // namespace hexllm::htp
