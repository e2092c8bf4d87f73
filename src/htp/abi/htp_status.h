// Status codes the device returns; OK is zero so `if (st)` reads as "failed".
// Shared by host and device (freestanding).
#pragma once

#include <stdint.h>

enum htp_status : uint32_t {
  HTP_OK = 0,
  HTP_ERR_NO_SUPPORT,      // op, type combination or opcode this device does not implement
  HTP_ERR_INVALID_PARAMS,  // op params / kernel params inconsistent with the tensors
  HTP_ERR_VTCM_TOO_SMALL,  // the op's VTCM layout does not fit the session's arena
  HTP_ERR_OUT_OF_WINDOW,   // a tensor's bank is not mapped, or the banks exceed the window
  HTP_ERR_BAD_TENSOR,      // tensor descriptor or index out of bounds (bank, offset, size, ne/nb, type)
  HTP_ERR_BAD_BATCH,       // message header malformed (magic, sizes, offsets, counts)
  HTP_ERR_ABI_VERSION,     // host and device were built from different ABI versions
  HTP_ERR_INTERNAL,        // a device invariant broke (e.g. a DMA queue overflow)
  HTP_ERR_PEER,            // multi-device: another device of the group failed; this one stopped with it
  HTP_STATUS_COUNT
};

inline const char* htp_status_name(uint32_t status) {
  switch (status) {
    case HTP_OK: return "OK";
    case HTP_ERR_NO_SUPPORT: return "NO_SUPPORT";
    case HTP_ERR_INVALID_PARAMS: return "INVALID_PARAMS";
    case HTP_ERR_VTCM_TOO_SMALL: return "VTCM_TOO_SMALL";
    case HTP_ERR_OUT_OF_WINDOW: return "OUT_OF_WINDOW";
    case HTP_ERR_BAD_TENSOR: return "BAD_TENSOR";
    case HTP_ERR_BAD_BATCH: return "BAD_BATCH";
    case HTP_ERR_ABI_VERSION: return "ABI_VERSION";
    case HTP_ERR_INTERNAL: return "INTERNAL";
    case HTP_ERR_PEER: return "PEER_FAILED";
    default: return "UNKNOWN_STATUS";
  }
}
