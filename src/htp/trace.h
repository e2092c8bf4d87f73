// Trace buffers, one per job index of a work-queue run: job i writes buffer i, on whichever worker
// claimed it (work_queue.h), and the caller writes them all between runs. When tracing is off the
// capacity is 0 and trace_begin/trace_end cost one compare.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_trace.h"
#include "htp/platform/platform.h"

namespace hexllm::htp {

struct trace_buf {
  htp_trace_record* records;  // the thread's area in the batch message
  uint32_t count;
  uint32_t capacity;          // 0 = tracing off
  uint32_t dropped;           // records lost to a full area
  uint32_t pad;
  uint64_t t0_ns;             // batch start
};

inline void trace_reset(trace_buf* t, htp_trace_record* records, uint32_t capacity, uint64_t t0_ns) {
  *t = {records, 0, records != nullptr ? capacity : 0, 0, 0, t0_ns};
}

inline void trace_record(trace_buf* t, uint16_t event, uint16_t info) {
  if (t->capacity == 0) return;
  if (t->count == t->capacity) {
    t->dropped++;
    return;
  }
  t->records[t->count++] = {(uint32_t)(platform_time_ns() - t->t0_ns), event, info};
}

inline void trace_begin(trace_buf* t, uint16_t event, uint16_t info) { trace_record(t, event, info); }

inline void trace_end(trace_buf* t, uint16_t event, uint16_t info) {
  trace_record(t, (uint16_t)(event | HTP_EV_END), info);
}

}  // namespace hexllm::htp
