// The one set of session defaults. The host's SessionOptions (htp-host/transport.h) starts from
// these and the device's htp_session_config_default fills the same fields with them, so a session
// opened by either side without an override behaves alike.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_hwinfo.h"

inline constexpr uint32_t HTP_DEFAULT_VTCM_BYTES = 8u << 20;
inline constexpr uint64_t HTP_DEFAULT_WINDOW_BYTES = 3584ull << 20;  // what a 32-bit DSP address space leaves
inline constexpr uint32_t HTP_DEFAULT_DMA_MODE = HTP_DMA_ZERO_COPY;  // kernels read pool memory in place
inline constexpr uint32_t HTP_DEFAULT_MAX_TENSORS = 8192;
