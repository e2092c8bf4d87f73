// Trace records the device writes per thread into the batch message when tracing is on.
#pragma once

#include <stdint.h>

enum htp_trace_event : uint16_t {
  HTP_EV_OP = 1,        // one whole op on thread 0; info = op index
  HTP_EV_COMPUTE,       // kernel math on a block; info = block index
  HTP_EV_DMA_WAIT,      // waiting in dma_queue_pop; info = block index
  HTP_EV_FLUSH,         // draining a DMA queue / cache flush; info = thread-defined
  HTP_EV_FENCE,         // waiting on a multi-device fence; info = fence sequence (low bits)
  HTP_EV_QUANT,         // quantizing activations; info = block index
  HTP_EV_DEQUANT,       // dequantizing weights; info = block index
  HTP_EV_BARRIER,       // waiting for the other workers; info = phase
  HTP_EV_VALIDATE,      // checking the batch's tensors and ops before any op runs (thread 0)
  HTP_EV_COUNT,
  HTP_EV_END = 0x8000,  // or'ed into `event`: this record closes the matching begin
};

struct htp_trace_record {
  uint32_t time_ns;  // ns since the batch started (wraps after 4.29 s; records are ordered per thread)
  uint16_t event;    // htp_trace_event, | HTP_EV_END for the end record
  uint16_t info;     // event-specific detail (block index, op index, ...)
};
static_assert(sizeof(htp_trace_record) == 8, "htp_trace_record layout");

inline const char* htp_trace_event_name(uint32_t event) {
  switch (event & ~(uint32_t)HTP_EV_END) {
    case HTP_EV_OP: return "OP";
    case HTP_EV_COMPUTE: return "COMPUTE";
    case HTP_EV_DMA_WAIT: return "DMA_WAIT";
    case HTP_EV_FLUSH: return "FLUSH";
    case HTP_EV_FENCE: return "FENCE";
    case HTP_EV_QUANT: return "QUANT";
    case HTP_EV_DEQUANT: return "DEQUANT";
    case HTP_EV_BARRIER: return "BARRIER";
    case HTP_EV_VALIDATE: return "VALIDATE";
    default: return "UNKNOWN_EVENT";
  }
}
