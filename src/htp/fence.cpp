#include "htp/fence.h"

#include "htp/platform/platform.h"

namespace hexllm::htp {

void fence_signal(htp_fence_slot* slots, const htp_mdev& m, uint32_t seq, htp_status status) {
  // The outputs' cache lines were cleaned after each op (batch.cpp): wait for that to finish.
  platform_write_barrier();
  htp_fence_slot* mine = &slots[m.idx];
  atomic_store_relaxed(&mine->status, (uint32_t)status);
  __atomic_store_n(&mine->seq, seq, __ATOMIC_RELEASE);
  // The slot itself goes to memory at once, where the peers poll it.
  platform_cache_clean(mine, sizeof *mine);
  platform_write_barrier();
}

htp_status fence_barrier(htp_fence_slot* slots, const htp_mdev& m, uint32_t seq, trace_buf* trace, uint64_t* wait_ns) {
  const uint64_t t0 = platform_time_ns();
  trace_begin(trace, HTP_EV_FENCE, (uint16_t)seq);
  fence_signal(slots, m, seq, HTP_OK);
  htp_status st = HTP_OK;
  for (uint32_t p = 0; p < m.count && st == HTP_OK; ++p) {
    if (p == m.idx) continue;
    const htp_fence_slot* peer = &slots[p];
    // Spin briefly (peers usually arrive within microseconds), then yield: devices may share cores.
    for (uint32_t spins = 0;; ++spins) {
      platform_cache_clean(peer, sizeof *peer);  // drop a stale copy of the peer's line
      const uint32_t s = __atomic_load_n(&peer->seq, __ATOMIC_ACQUIRE);
      if (htp_fence_reached(s, seq)) {
        // The status belongs to the seq read before it (published in that order).
        if (atomic_load_relaxed(&peer->status) != HTP_OK) st = HTP_ERR_PEER;
        break;
      }
      if (spins < 4096)
        platform_pause();
      else
        platform_yield();
    }
  }
  trace_end(trace, HTP_EV_FENCE, (uint16_t)seq);
  *wait_ns += platform_time_ns() - t0;
  return st;
}

}  // namespace hexllm::htp
