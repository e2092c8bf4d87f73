// How the host reaches a device session: open it, keep its view of the pool's banks in step,
// and make one synchronous call per batch. In-process here; a device process comes next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "htp-host/pool.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

struct SessionOptions {
  uint32_t n_threads = 1;
  uint32_t vtcm_bytes = 8u << 20;
  uint32_t dma_mode = HTP_DMA_ZERO_COPY;
  uint64_t window_bytes = 3584ull << 20;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // What the session reports (threads, VTCM size, window): the host sizes everything by it.
  virtual const htp_hwinfo& hwinfo() const = 0;
  // Runs the batch in `message` (inside the pool's message region) and returns its status;
  // the response is written into the message. Banks are synchronized with the pool first.
  virtual htp_status call(void* message, size_t bytes) = 0;
};

// Device threads in this process; the caller is worker 0 of the session.
std::unique_ptr<Transport> make_inproc_transport(const Pool& pool, const SessionOptions& opts);

}  // namespace hexllm::htp_host
