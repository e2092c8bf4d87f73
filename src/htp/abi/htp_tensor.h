// A tensor as the device sees it: a (bank, 32-bit offset) pair plus ggml-style ne/nb.
#pragma once

#include <stdint.h>

#include "htp/abi/htp_types.h"

enum htp_tensor_flags : uint16_t {
  HTP_TENSOR_WEIGHT = 1u << 0,   // read-only model weights; never an op destination
  HTP_TENSOR_COMPUTE = 1u << 1,  // activations / scratch written by ops
  HTP_TENSOR_PINNED = 1u << 2,   // stays mapped for the session (KV, compute, messages)
  HTP_TENSOR_FLAGS_ALL = 0x7,
};

struct htp_tensor {
  uint16_t bank;     // index into the session's bank table
  uint16_t flags;    // htp_tensor_flags
  uint32_t type;     // htp_type
  uint32_t offset;   // byte offset of element 0 within the bank
  uint32_t size;     // bytes the tensor spans from offset (>= htp_tensor_extent)
  uint32_t ne[4];    // elements per dimension, ne[0] innermost
  uint32_t nb[4];    // byte strides; nb[0] is the stride between blocks of ne[0]
};
static_assert(sizeof(htp_tensor) == 48 && sizeof(htp_tensor) % 8 == 0, "htp_tensor layout");

inline constexpr uint64_t HTP_BAD_EXTENT = ~(uint64_t)0;

// Bytes from element 0 to one past the last byte any element occupies; HTP_BAD_EXTENT for an
// unknown type or a row that is not whole blocks. An empty tensor (some ne == 0) spans 0 bytes.
// The host fills `size` from this; the device checks `size` against it.
constexpr uint64_t htp_tensor_extent(const htp_tensor& t) {
  const htp_type_info ti = htp_type_geometry(t.type);
  if (ti.block_size == 0 || t.ne[0] % ti.block_size != 0) return HTP_BAD_EXTENT;
  if (t.ne[0] == 0 || t.ne[1] == 0 || t.ne[2] == 0 || t.ne[3] == 0) return 0;
  // Each term is < 2^64 / 4: a u32 count times a u32 stride.
  uint64_t last = (uint64_t)(t.ne[0] / ti.block_size - 1) * t.nb[0];
  for (int i = 1; i < 4; ++i) last += (uint64_t)(t.ne[i] - 1) * t.nb[i];
  return last + ti.type_size;
}

constexpr uint64_t htp_tensor_nrows(const htp_tensor& t) {
  return (uint64_t)t.ne[1] * t.ne[2] * t.ne[3];
}

// Rows of whole blocks packed back to back (the common "contiguous" case).
constexpr bool htp_tensor_contiguous(const htp_tensor& t) {
  const htp_type_info ti = htp_type_geometry(t.type);
  if (ti.block_size == 0) return false;
  return t.nb[0] == ti.type_size && t.nb[1] == (uint64_t)t.ne[0] / ti.block_size * ti.type_size &&
         t.nb[2] == (uint64_t)t.nb[1] * t.ne[1] && t.nb[3] == (uint64_t)t.nb[2] * t.ne[2];
}
