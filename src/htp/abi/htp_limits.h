// ABI version and the fixed limits both sides size their arrays by.
#pragma once

#include <stdint.h>

// Bumped whenever any struct, enum value or message rule in src/htp/abi changes.
inline constexpr uint32_t HTP_ABI_VERSION = 6;  // 2: fused ops with several outputs; 3: multi-device header and response; 4: hwinfo names the GEMM pass rows; 5: bf16 activations (matmul config, hwinfo); 6: hwinfo names the GEMV unit size

inline constexpr uint32_t HTP_MAX_THREADS = 16;  // worker threads per session (incl. the caller)
inline constexpr uint32_t HTP_MAX_BANKS = 16;    // pool banks a tensor can name
inline constexpr uint32_t HTP_MAX_SRC = 8;       // sources per op: a graph node has 6 at most, fused ops more
inline constexpr uint32_t HTP_MAX_DST = 3;       // outputs per op: dst, then dst_ext (fused ops only)
inline constexpr uint32_t HTP_MAX_PARAMS = 16;   // raw int32 op params per op
inline constexpr uint32_t HTP_KPARAMS_BYTES = 128;  // host-precomputed kernel params blob
inline constexpr uint16_t HTP_NO_TENSOR = 0xffff;   // unused src/dst slot
inline constexpr uint32_t HTP_MAX_TENSORS = 0xffff;  // indices are u16 and 0xffff means none
inline constexpr uint32_t HTP_NO_INDEX = 0xffffffffu;  // "no op / no tensor" in a response
