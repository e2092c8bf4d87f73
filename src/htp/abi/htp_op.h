// One op in a batch: opcode, raw graph op params, and a kernel-params blob the host
// precomputed (shapes, tiling, fastdiv constants, VTCM layout) so the kernel recomputes nothing.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_limits.h"
#include "htp/abi/htp_status.h"

enum htp_op_flags : uint32_t {
  HTP_OPF_SKIP_COMPUTE = 1u << 0,  // validate and time the op but run no kernel (profiling)
  HTP_OPF_FENCE = 1u << 1,         // multi-device: wait for every device to finish the ops before this one
  HTP_OPF_ALL = 0x3,
};

struct htp_op_desc {
  uint32_t opcode;                      // htp_opcode
  uint32_t flags;                       // htp_op_flags
  int32_t params[HTP_MAX_PARAMS];       // the graph node's op params, verbatim
  alignas(8) uint8_t kparams[HTP_KPARAMS_BYTES];  // per-family struct, see htp_kparams_*
  uint16_t src[HTP_MAX_SRC];            // tensor indices; HTP_NO_TENSOR when unused
  uint16_t dst;
  uint16_t dst_ext[HTP_MAX_DST - 1];    // further outputs of a fused op (MUL_MAT_QKV); else HTP_NO_TENSOR
  uint16_t pad;
};
static_assert(sizeof(htp_op_desc) == 224 && sizeof(htp_op_desc) % 8 == 0, "htp_op_desc layout");

// Per-family kernel params live in the blob; each family static_asserts its struct fits.
template <typename T>
inline void htp_kparams_set(htp_op_desc* op, const T& params) {
  static_assert(sizeof(T) <= HTP_KPARAMS_BYTES, "kernel params exceed the 128-byte blob");
  __builtin_memcpy(op->kparams, &params, sizeof(T));
}

template <typename T>
inline T htp_kparams_get(const htp_op_desc& op) {
  static_assert(sizeof(T) <= HTP_KPARAMS_BYTES, "kernel params exceed the 128-byte blob");
  T params;
  __builtin_memcpy(&params, op.kparams, sizeof(T));
  return params;
}

// The device side of every family's params check. Host params are untrusted: a wrong field
// would send DMA or index math out of bounds. The kernel reruns the host's header-only builder
// from the op's shapes, op params and the session (the host builds with exactly the session's
// threads and VTCM) into a zero-initialised `want`, and the blob must hold the same bytes.
// Params structs have no padding, so equal plans are equal bytes.
template <typename T>
inline htp_status htp_kparams_match(htp_status built, const T& want, const T& got) {
  if (built != HTP_OK) return built;
  return __builtin_memcmp(&want, &got, sizeof(T)) == 0 ? HTP_OK : HTP_ERR_INVALID_PARAMS;
}
