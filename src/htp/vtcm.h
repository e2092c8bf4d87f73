// The session's VTCM arena: allocated once at session start and held for the session's life.
// Ops place their buffers at base + offsets from the shared layout builders (abi/layout.h);
// nothing is allocated per op, and a layout beyond the capacity is a status, never a crash.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_status.h"

namespace hexllm::htp {

inline constexpr uint32_t VTCM_MAX_SIZE = 1u << 30;  // sanity bound for a configured size

struct vtcm_arena {
  uint8_t* base;
  uint32_t size;
  uint32_t pad;
};

htp_status vtcm_open(vtcm_arena* a, uint32_t size);
void vtcm_close(vtcm_arena* a);

// HTP_OK when `bytes` (a layout total, times workers if per-thread) fits the arena.
inline htp_status vtcm_check(uint32_t arena_size, uint64_t bytes) {
  return bytes <= arena_size ? HTP_OK : HTP_ERR_VTCM_TOO_SMALL;
}

}  // namespace hexllm::htp
