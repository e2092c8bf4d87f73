// Kernel params and VTCM layout for the rows family:
//   GET_ROWS  dst F32 [ne0, n, n2, n3] = rows idx[i, j, k] of src [ne0, R, n2, n3], dequantized.
//             src: F32, F16, BF16, the GGUF block types, or a weight repacked into 8-row tiles
//             (htp/abi/tiles.h); idx I32/I64 [n, n2, n3].
//   SET_ROWS  dst row idx[i, j % m2, k % m3] of plane (j, k) = src row (i, j, k), converted from
//             F32 to dst's F32/F16/BF16 (the KV-cache write); idx I32/I64 [n, m2, m3].
// "Work rows" are the rows the workers split: dst rows for GET_ROWS, src rows for SET_ROWS;
// work row r is (i, j, k) = (r % ne1, r / ne1 % ne2, r / ne1 / ne2).
// Header-only: the host fills the params with htp_rows_params_build; the kernel reruns it from
// the tensors and the session and compares (htp_kparams_match), so both sides agree on every field.
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"
#include "htp/abi/tiles.h"

inline constexpr uint32_t HTP_ROWS_SLOTS = 2;                // double-buffered pipeline
inline constexpr uint32_t HTP_ROWS_MAX_BLOCK = 32;           // rows per block; one DMA descriptor each
inline constexpr uint32_t HTP_ROWS_BLOCK_BYTES = 64u << 10;  // VTCM bytes a block aims at (src + dst)

// One worker's VTCM area: HTP_ROWS_SLOTS slots of {fetched rows, output rows}.
struct htp_rows_layout {
  uint32_t src_offset;  // within a slot
  uint32_t dst_offset;
  uint32_t slot_bytes;
  uint32_t thread_bytes;  // worker i's area starts at i * thread_bytes
  uint32_t src_stride;    // VTCM stride of fetched rows
  uint32_t dst_stride;    // VTCM stride of output rows
};

struct htp_rows_params {
  htp_divisor ne1;      // work rows: r -> i = r % ne1
  htp_divisor ne2;      //            r / ne1 -> j = .. % ne2, k = .. / ne2
  htp_divisor idx_ne1;  // index broadcast: idx[i, j % idx_ne1, k % idx_ne2]
  htp_divisor idx_ne2;
  uint32_t n_threads;
  uint32_t block_rows;
  uint32_t src_row_bytes;    // bytes fetched per row: one row, or the 8-row tile that holds it
  uint32_t dst_row_bytes;    // bytes of one output row
  uint32_t src_slice_bytes;  // tiled src: bytes of one (i2, i3) matrix
  uint32_t pad;
  htp_rows_layout layout;
};
static_assert(sizeof(htp_rows_params) <= HTP_KPARAMS_BYTES && sizeof(htp_rows_params) % 8 == 0,
              "htp_rows_params must fit the kernel-params blob");

// GGUF-numbered types GET_ROWS dequantizes (plain layout).
constexpr bool htp_rows_plain_src_ok(uint32_t type) {
  switch (type) {
    case HTP_TYPE_F32: case HTP_TYPE_F16: case HTP_TYPE_BF16:
    case HTP_TYPE_Q4_0: case HTP_TYPE_Q4_1: case HTP_TYPE_Q5_0: case HTP_TYPE_Q5_1: case HTP_TYPE_Q8_0:
    case HTP_TYPE_Q2_K: case HTP_TYPE_Q3_K: case HTP_TYPE_Q4_K: case HTP_TYPE_Q5_K: case HTP_TYPE_Q6_K:
    case HTP_TYPE_IQ4_NL: case HTP_TYPE_MXFP4:
      return true;
    default:
      return false;
  }
}

constexpr uint32_t htp_rows_float_size(uint32_t type) {
  return type == HTP_TYPE_F32 ? 4 : (type == HTP_TYPE_F16 || type == HTP_TYPE_BF16) ? 2 : 0;
}

constexpr bool htp_rows_index_type_ok(uint32_t type) { return type == HTP_TYPE_I32 || type == HTP_TYPE_I64; }

// Shape and type check shared by host (supports_op) and kernel; src1 is the index tensor.
constexpr htp_status htp_rows_supported(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0,
                                        const htp_tensor& idx) {
  if (!htp_rows_index_type_ok(idx.type)) return HTP_ERR_NO_SUPPORT;
  if (opcode == HTP_OP_GET_ROWS) {
    if (dst.type != HTP_TYPE_F32 || dst.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
    if (hexllm::htp::htp_tile_valid(src0.type)) {
      if (!hexllm::htp::htp_tile_k_ok(src0.type, src0.ne[0])) return HTP_ERR_NO_SUPPORT;
    } else {
      if (!htp_rows_plain_src_ok(src0.type)) return HTP_ERR_NO_SUPPORT;
      if (src0.nb[0] != htp_type_geometry(src0.type).type_size) return HTP_ERR_NO_SUPPORT;  // dense rows
    }
    if (dst.ne[0] != src0.ne[0] || dst.ne[1] != idx.ne[0] || dst.ne[2] != src0.ne[2] || dst.ne[3] != src0.ne[3] ||
        idx.ne[1] != src0.ne[2] || idx.ne[2] != src0.ne[3] || idx.ne[3] != 1)
      return HTP_ERR_INVALID_PARAMS;
    return HTP_OK;
  }
  if (opcode == HTP_OP_SET_ROWS) {
    const uint32_t es = htp_rows_float_size(dst.type);
    if (es == 0 || dst.nb[0] != es || src0.type != HTP_TYPE_F32 || src0.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
    if (dst.ne[0] != src0.ne[0] || dst.ne[2] != src0.ne[2] || dst.ne[3] != src0.ne[3] || idx.ne[0] != src0.ne[1] ||
        idx.ne[1] == 0 || idx.ne[2] == 0 || src0.ne[2] % idx.ne[1] != 0 || src0.ne[3] % idx.ne[2] != 0 ||
        idx.ne[3] != 1)
      return HTP_ERR_INVALID_PARAMS;
    return HTP_OK;
  }
  return HTP_ERR_NO_SUPPORT;
}

constexpr htp_rows_layout htp_rows_layout_build(uint64_t src_row_bytes, uint64_t dst_row_bytes, uint32_t block_rows,
                                                uint64_t* thread_bytes) {
  const uint64_t src_stride = htp_align_up(src_row_bytes, HTP_VTCM_ALIGN);
  const uint64_t dst_stride = htp_align_up(dst_row_bytes, HTP_VTCM_ALIGN);
  htp_layout l{};
  const uint64_t src = htp_layout_add(&l, block_rows * src_stride);
  const uint64_t dst = htp_layout_add(&l, block_rows * dst_stride);
  const uint64_t slot = htp_layout_total(l);
  *thread_bytes = slot * HTP_ROWS_SLOTS;
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  return {(uint32_t)src, (uint32_t)dst, (uint32_t)slot, (uint32_t)*thread_bytes, (uint32_t)src_stride,
          (uint32_t)dst_stride};
}

// Work rows of the op (the rows the workers split).
constexpr uint64_t htp_rows_work_rows(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0) {
  return htp_tensor_nrows(opcode == HTP_OP_GET_ROWS ? dst : src0);
}

// The params for a given thread count and block size: everything else follows from the tensors.
// *thread_bytes gets the VTCM one worker needs. Call for a non-empty op.
constexpr htp_status htp_rows_params_make(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0,
                                          const htp_tensor& idx, uint32_t n_threads, uint32_t block_rows,
                                          htp_rows_params* out, uint64_t* thread_bytes) {
  const htp_status st = htp_rows_supported(opcode, dst, src0, idx);
  if (st != HTP_OK) return st;
  if (n_threads == 0 || n_threads > HTP_MAX_THREADS || block_rows == 0 || block_rows > HTP_ROWS_MAX_BLOCK)
    return HTP_ERR_INVALID_PARAMS;
  const bool get = opcode == HTP_OP_GET_ROWS;
  const htp_tensor& work = get ? dst : src0;
  uint64_t src_row = 0, dst_row = 0, slice = 0;
  if (get) {
    if (hexllm::htp::htp_tile_valid(src0.type)) {
      src_row = hexllm::htp::htp_tile_row_bytes(src0.type, src0.ne[0]);
      slice = hexllm::htp::htp_tiled_size(src0.type, src0.ne[1], src0.ne[0]);
    } else {
      const htp_type_info ti = htp_type_geometry(src0.type);
      src_row = (uint64_t)src0.ne[0] / ti.block_size * ti.type_size;
    }
    dst_row = (uint64_t)dst.ne[0] * 4;
  } else {
    src_row = (uint64_t)src0.ne[0] * 4;
    dst_row = (uint64_t)dst.ne[0] * htp_rows_float_size(dst.type);
  }
  if (src_row > 0x7fffffffu || dst_row > 0x7fffffffu || slice > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  // Tiled rows are addressed through the tile geometry, not nb: the descriptor's size must hold it.
  if (slice * src0.ne[2] * src0.ne[3] > src0.size) return HTP_ERR_INVALID_PARAMS;
  htp_rows_params p{};
  p.ne1 = htp_fastdiv_init(work.ne[1]);
  p.ne2 = htp_fastdiv_init(work.ne[2]);
  p.idx_ne1 = htp_fastdiv_init(idx.ne[1]);
  p.idx_ne2 = htp_fastdiv_init(idx.ne[2]);
  p.n_threads = n_threads;
  p.block_rows = block_rows;
  p.src_row_bytes = (uint32_t)src_row;
  p.dst_row_bytes = (uint32_t)dst_row;
  p.src_slice_bytes = (uint32_t)slice;
  p.layout = htp_rows_layout_build(src_row, dst_row, block_rows, thread_bytes);
  *out = p;
  return HTP_OK;
}

// Host side: the most threads, then the largest block, that fit the session's VTCM.
constexpr htp_status htp_rows_params_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src0,
                                           const htp_tensor& idx, uint32_t max_threads, uint32_t vtcm_size,
                                           htp_rows_params* out) {
  htp_status st = htp_rows_supported(opcode, dst, src0, idx);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  const uint64_t nr = htp_rows_work_rows(opcode, dst, src0);
  if (nr == 0 || dst.ne[0] == 0) {  // nothing to do; the kernel returns before any check
    *out = {};
    out->n_threads = 1;
    return HTP_OK;
  }
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  for (uint32_t n = (uint32_t)(nr < max_threads ? nr : max_threads); n >= 1; --n) {
    const uint64_t per_thread = (nr + n - 1) / n;
    uint64_t hi = per_thread < HTP_ROWS_MAX_BLOCK ? per_thread : HTP_ROWS_MAX_BLOCK;
    htp_rows_params p{};
    uint64_t tb = 0;
    st = htp_rows_params_make(opcode, dst, src0, idx, n, 1, &p, &tb);
    if (st != HTP_OK) return st;
    const uint64_t row_vtcm = (uint64_t)p.layout.src_stride + p.layout.dst_stride;
    if (HTP_ROWS_BLOCK_BYTES / row_vtcm < hi) hi = HTP_ROWS_BLOCK_BYTES / row_vtcm;
    if (hi == 0) hi = 1;
    uint64_t lo = 0;
    while (lo < hi) {  // largest block that fits; thread_bytes grows with block_rows
      const uint64_t mid = (lo + hi + 1) / 2;
      htp_rows_params_make(opcode, dst, src0, idx, n, (uint32_t)mid, &p, &tb);
      if (tb * n <= vtcm_size) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) return htp_rows_params_make(opcode, dst, src0, idx, n, (uint32_t)lo, out, &tb);
  }
  return HTP_ERR_VTCM_TOO_SMALL;
}

// Device side (htp_kparams_match); call for a non-empty op.
inline htp_status htp_rows_params_check(const htp_rows_params& p, uint32_t opcode, const htp_tensor& dst,
                                        const htp_tensor& src0, const htp_tensor& idx, uint32_t max_threads,
                                        uint32_t vtcm_size) {
  htp_rows_params want{};
  return htp_kparams_match(htp_rows_params_build(opcode, dst, src0, idx, max_threads, vtcm_size, &want), want, p);
}
