// Multi-device barriers over the group's fence slots (abi/htp_fence.h). Thread 0 of each device
// calls them between ops, after the op's workers have finished and its DMA queues are drained.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_abi.h"
#include "htp/trace.h"

namespace hexllm::htp {

// Publishes {seq, status} in this device's slot. The write barrier first (platform.h): every
// write of the ops before it, cleaned from the caches after each op, is in memory before the
// peers (and the host) can see seq; then the slot's own line is cleaned.
void fence_signal(htp_fence_slot* slots, const htp_mdev& m, uint32_t seq, htp_status status);

// Signals seq, then waits until every peer has reached it. HTP_ERR_PEER as soon as a peer that
// reached it reports a failure. Records the wait as HTP_EV_FENCE (info: seq's low 16 bits) and
// adds it to *wait_ns.
htp_status fence_barrier(htp_fence_slot* slots, const htp_mdev& m, uint32_t seq, trace_buf* trace, uint64_t* wait_ns);

}  // namespace hexllm::htp
