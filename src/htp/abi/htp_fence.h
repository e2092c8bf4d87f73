// Multi-device fences: one 128-byte slot per device in a pool region every device of a group
// maps (HTP_MDEV_MAX slots; the batch header names it). A device publishes {seq, status} in its
// own slot only; a barrier waits until every peer's seq has reached its own. Sequences are
// monotonic across batches (the host gives each batch a fresh range) and are compared with
// signed differences, so they may wrap. A slot whose status is not OK releases every waiter at
// once: a failing device (or the host, for a device that died) publishes the batch's last
// sequence with its status.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_partition.h"

inline constexpr uint32_t HTP_FENCE_SLOT = 128;  // one line per device: no false sharing
inline constexpr uint32_t HTP_FENCE_REGION = HTP_MDEV_MAX * HTP_FENCE_SLOT;

struct htp_fence_slot {
  uint32_t seq;     // the last barrier this device reached (written last, with release)
  uint32_t status;  // htp_status; not OK: the device failed and left the batch
  uint8_t pad[HTP_FENCE_SLOT - 8];
};
static_assert(sizeof(htp_fence_slot) == HTP_FENCE_SLOT, "htp_fence_slot layout");

// a has reached b (wrap-safe).
constexpr bool htp_fence_reached(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

// Fences a batch of n_ops uses: one before any op, one at the end.
constexpr uint32_t htp_fence_span(uint32_t n_ops) { return n_ops + 1; }
