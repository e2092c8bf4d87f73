// One batch message: header | tensors | ops | response | trace areas, all in one buffer the
// host and device share. The device validates every count and offset against the message size.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_limits.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/htp_trace.h"

inline constexpr uint32_t HTP_BATCH_MAGIC = 0x42505448;  // "HTPB" little-endian

enum htp_batch_flags : uint32_t {
  HTP_BATCH_TRACE = 1u << 0,  // record trace events into the trace area
  HTP_BATCH_FLAGS_ALL = 0x1,
};

struct htp_batch_header {
  uint32_t magic;        // HTP_BATCH_MAGIC
  uint32_t abi_version;  // HTP_ABI_VERSION
  uint64_t seq;          // host's sequence number, echoed in the response
  uint32_t n_tensors;
  uint32_t n_ops;
  uint32_t flags;        // htp_batch_flags
  uint32_t trace_threads;   // per-thread trace areas (0 when tracing is off)
  uint32_t trace_capacity;  // records per thread area
  // Byte offsets from the start of the message; each 8-byte aligned.
  uint32_t tensors_offset;  // htp_tensor[n_tensors]
  uint32_t ops_offset;      // htp_op_desc[n_ops]
  uint32_t response_offset; // htp_response, then uint64_t op_ns[n_ops]
  uint32_t trace_offset;    // htp_trace_record[trace_threads][trace_capacity]
  uint32_t message_size;    // bytes of the whole message
  // Multi-device: every device of a group runs this same message. Device d writes its response
  // at response_offset + d * response_stride and its trace areas at trace_offset + d * trace_stride.
  uint32_t n_devices;       // devices in the group: 0 or 1 for a single device
  uint32_t response_stride; // bytes between the devices' responses (op_ns included)
  uint32_t trace_stride;    // bytes between the devices' trace areas
  uint32_t fence_seq;       // the sequence of this batch's first fence (the host advances it)
  uint32_t fence_bank;      // the group's fence slots, HTP_MDEV_MAX * HTP_FENCE_SLOT bytes
  uint32_t fence_offset;    // within fence_bank, 128-byte aligned
};
static_assert(sizeof(htp_batch_header) == 80 && sizeof(htp_batch_header) % 8 == 0, "header layout");

struct htp_response {
  uint32_t status;          // htp_status of the batch: the first failure, or HTP_OK
  uint32_t failed_op;       // index of the op that failed, HTP_NO_INDEX if none
  uint32_t failed_tensor;   // index of the tensor that failed validation, HTP_NO_INDEX if none
  uint32_t n_ops_done;      // ops that completed successfully
  uint64_t seq;             // header.seq
  uint64_t total_ns;        // whole batch on the device, validation included
  uint32_t trace_count[HTP_MAX_THREADS];  // records written per thread
  uint32_t trace_dropped;   // records lost because a thread's area was full
  uint32_t device;          // the device (index in its group) that wrote this response
  uint64_t start_ns;        // the device's clock when the batch started (trace times count from it)
  uint64_t fence_ns;        // time thread 0 spent waiting in fences
  // followed by uint64_t op_ns[n_ops]: elapsed ns per op (0 for ops that did not run)
};
static_assert(sizeof(htp_response) == 120 && sizeof(htp_response) % 8 == 0, "response layout");

inline constexpr uint64_t htp_response_bytes(uint32_t n_ops) {
  return sizeof(htp_response) + (uint64_t)n_ops * sizeof(uint64_t);
}

struct htp_message_layout {
  uint32_t tensors_offset;
  uint32_t ops_offset;
  uint32_t response_offset;
  uint32_t trace_offset;
  uint32_t message_size;
  uint32_t response_stride;  // device d's response at response_offset + d * response_stride
  uint32_t trace_stride;     // and its trace areas at trace_offset + d * trace_stride
  uint32_t pad;
};

// The canonical layout the host builds (the device accepts any in-bounds, aligned layout), with
// a response and trace areas per device. Returns false when the message would not fit in 32-bit offsets.
constexpr bool htp_message_layout_build(uint32_t n_tensors, uint32_t n_ops, uint32_t trace_threads,
                                        uint32_t trace_capacity, htp_message_layout* out, uint32_t n_devices = 1) {
  if (n_devices == 0) n_devices = 1;
  uint64_t at = sizeof(htp_batch_header);
  const uint64_t tensors = at;
  at += (uint64_t)n_tensors * sizeof(htp_tensor);
  const uint64_t ops = at;
  at += (uint64_t)n_ops * sizeof(htp_op_desc);
  const uint64_t response = at;
  const uint64_t response_stride = htp_response_bytes(n_ops);
  at += n_devices * response_stride;
  const uint64_t trace = at;
  const uint64_t trace_stride = (uint64_t)trace_threads * trace_capacity * sizeof(htp_trace_record);
  at += n_devices * trace_stride;
  if (at > 0xffffffffu) return false;
  *out = {(uint32_t)tensors, (uint32_t)ops,         (uint32_t)response, (uint32_t)trace,
          (uint32_t)at,      (uint32_t)response_stride, (uint32_t)trace_stride, 0};
  return true;
}
