// Kernel params and VTCM layout for the binary family (ADD, SUB, MUL, DIV on F32 rows, src1
// broadcast over rows and within a row; ADD_ID at the end of the file). Header-only: the host
// fills the params with htp_binary_params_build; the kernel reruns it in htp_binary_params_check
// and compares (htp_kparams_match), so the two sides cannot disagree about any field.
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_BINARY_SLOTS = 2;                // double-buffered pipeline
inline constexpr uint32_t HTP_BINARY_BLOCK_BYTES = 32u << 10;  // src0 bytes per block (fits L2 on host)

// One worker's VTCM area: HTP_BINARY_SLOTS slots of {src0 rows, src1 rows, dst rows}.
struct htp_binary_layout {
  uint32_t src0_offset;  // within a slot
  uint32_t src1_offset;
  uint32_t dst_offset;
  uint32_t slot_bytes;
  uint32_t thread_bytes;  // the worker's whole area; worker i starts at i * thread_bytes
  uint32_t row_stride0;   // VTCM row stride of src0 and dst blocks
  uint32_t row_stride1;   // VTCM row stride of src1 blocks
  uint32_t pad;
};

struct htp_binary_params {
  htp_divisor ne1;   // dst ne[1]: flattened row r -> i1 = r % ne1, r / ne1
  htp_divisor ne2;   // dst ne[2]: (r / ne1) -> i2, i3
  htp_divisor ne11;  // src1 rows broadcast: i11 = i1 % ne11, ...
  htp_divisor ne12;
  htp_divisor ne13;
  uint32_t n_threads;   // workers the op runs on
  uint32_t block_rows;  // rows per DMA block
  htp_binary_layout layout;
};
static_assert(sizeof(htp_binary_params) <= HTP_KPARAMS_BYTES && sizeof(htp_binary_params) % 8 == 0,
              "htp_binary_params must fit the kernel-params blob");

// nullptr-free, shape-only support check shared by host (supports_op) and kernel.
constexpr htp_status htp_binary_supported(const htp_tensor& dst, const htp_tensor& src0, const htp_tensor& src1) {
  if (dst.type != HTP_TYPE_F32 || src0.type != HTP_TYPE_F32 || src1.type != HTP_TYPE_F32)
    return HTP_ERR_NO_SUPPORT;
  // Rows must be dense (element stride 4); rows themselves may sit anywhere (views).
  if (dst.nb[0] != 4 || src0.nb[0] != 4 || src1.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
  for (int d = 0; d < 4; ++d) {
    if (src0.ne[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
    // src1 repeats to dst's shape: each of its dims divides dst's.
    if (src1.ne[d] == 0 ? dst.ne[d] != 0 : dst.ne[d] % src1.ne[d] != 0) return HTP_ERR_INVALID_PARAMS;
  }
  return HTP_OK;
}

constexpr htp_binary_layout htp_binary_layout_build(uint32_t ne0, uint32_t ne10, uint32_t ne11,
                                                    uint32_t block_rows, uint64_t* thread_bytes) {
  const uint64_t stride0 = htp_align_up((uint64_t)ne0 * 4, HTP_VTCM_ALIGN);
  const uint64_t stride1 = htp_align_up((uint64_t)ne10 * 4, HTP_VTCM_ALIGN);
  const uint64_t rows1 = ne11 == 1 ? 1 : block_rows;  // one src1 row serves the whole block
  htp_layout l{};
  const uint64_t src0 = htp_layout_add(&l, block_rows * stride0);
  const uint64_t src1 = htp_layout_add(&l, rows1 * stride1);
  const uint64_t dst = htp_layout_add(&l, block_rows * stride0);
  const uint64_t slot = htp_layout_total(l);
  *thread_bytes = slot * HTP_BINARY_SLOTS;
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  return {(uint32_t)src0, (uint32_t)src1, (uint32_t)dst, (uint32_t)slot, (uint32_t)*thread_bytes,
          (uint32_t)stride0, (uint32_t)stride1, 0};
}

// Host side: picks threads and block size for this session (max_threads workers, vtcm_size bytes).
constexpr htp_status htp_binary_params_build(const htp_tensor& dst, const htp_tensor& src0, const htp_tensor& src1,
                                             uint32_t max_threads, uint32_t vtcm_size, htp_binary_params* out) {
  const htp_status st = htp_binary_supported(dst, src0, src1);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  const uint64_t nr = htp_tensor_nrows(dst);
  if (nr == 0 || dst.ne[0] == 0) {  // nothing to compute; the kernel returns before any check
    *out = {};
    out->n_threads = 1;
    return HTP_OK;
  }
  const uint32_t n_threads = (uint32_t)(nr < max_threads ? nr : max_threads);
  const uint64_t rows_per_thread = (nr + n_threads - 1) / n_threads;
  // A block never crosses a run of rows whose src1 rows are consecutive (see the kernel).
  const uint64_t run = src1.ne[1] == 1 ? dst.ne[1] : src1.ne[1];
  const uint64_t stride0 = htp_align_up((uint64_t)dst.ne[0] * 4, HTP_VTCM_ALIGN);
  uint64_t hi = rows_per_thread;
  if (run != 0 && run < hi) hi = run;
  if (HTP_BINARY_BLOCK_BYTES / stride0 < hi) hi = HTP_BINARY_BLOCK_BYTES / stride0;
  if (hi == 0) hi = 1;
  // Largest block that fits the arena; thread_bytes grows with block_rows.
  uint64_t lo = 0, thread_bytes = 0;
  while (lo < hi) {
    const uint64_t mid = (lo + hi + 1) / 2;
    htp_binary_layout_build(dst.ne[0], src1.ne[0], src1.ne[1], (uint32_t)mid, &thread_bytes);
    if (thread_bytes * n_threads <= vtcm_size) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0) return HTP_ERR_VTCM_TOO_SMALL;
  out->ne1 = htp_fastdiv_init(dst.ne[1]);
  out->ne2 = htp_fastdiv_init(dst.ne[2]);
  out->ne11 = htp_fastdiv_init(src1.ne[1]);
  out->ne12 = htp_fastdiv_init(src1.ne[2]);
  out->ne13 = htp_fastdiv_init(src1.ne[3]);
  out->n_threads = n_threads;
  out->block_rows = (uint32_t)lo;
  out->layout = htp_binary_layout_build(dst.ne[0], src1.ne[0], src1.ne[1], (uint32_t)lo, &thread_bytes);
  return HTP_OK;
}

// Device side (htp_kparams_match): call after htp_binary_supported and only for a non-empty dst.
inline htp_status htp_binary_params_check(const htp_binary_params& p, const htp_tensor& dst, const htp_tensor& src0,
                                          const htp_tensor& src1, uint32_t max_threads, uint32_t vtcm_size) {
  htp_binary_params want{};
  return htp_kparams_match(htp_binary_params_build(dst, src0, src1, max_threads, vtcm_size, &want), want, p);
}

// ---- ADD_ID: dst[:, i, t] = src0[:, i, t] + src1[:, ids[i, t]] (per-expert biases of MoE) ----
// src0/dst F32 [ne0, n_used, n_tok], src1 F32 [ne0, n_expert], ids I32 [n_used, n_tok]. Rows
// r = i + n_used * t are split across workers; a block is consecutive i of one token, its src1
// rows gathered one descriptor each (HTP_ADD_ID_MAX_BLOCK bounds the DMA queue depth).
inline constexpr uint32_t HTP_ADD_ID_MAX_BLOCK = 32;

struct htp_add_id_params {
  htp_divisor ne1;  // dst ne[1] (n_used): r -> i = r % ne1, t = r / ne1
  uint32_t n_threads;
  uint32_t block_rows;
  htp_binary_layout layout;  // src1 holds block_rows gathered rows
};
static_assert(sizeof(htp_add_id_params) <= HTP_KPARAMS_BYTES && sizeof(htp_add_id_params) % 8 == 0,
              "htp_add_id_params must fit the kernel-params blob");

constexpr htp_status htp_add_id_supported(const htp_tensor& dst, const htp_tensor& src0, const htp_tensor& src1,
                                          const htp_tensor& ids) {
  if (dst.type != HTP_TYPE_F32 || src0.type != HTP_TYPE_F32 || src1.type != HTP_TYPE_F32 || ids.type != HTP_TYPE_I32)
    return HTP_ERR_NO_SUPPORT;
  if (dst.nb[0] != 4 || src0.nb[0] != 4 || src1.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
  for (int d = 0; d < 4; ++d)
    if (src0.ne[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
  if (dst.ne[3] != 1 || src1.ne[0] != dst.ne[0] || src1.ne[2] != 1 || src1.ne[3] != 1 || ids.ne[0] != dst.ne[1] ||
      ids.ne[1] != dst.ne[2] || ids.ne[2] != 1 || ids.ne[3] != 1)
    return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

// The params for a given thread count and block size; *thread_bytes gets one worker's VTCM.
constexpr htp_status htp_add_id_params_make(const htp_tensor& dst, const htp_tensor& src0, const htp_tensor& src1,
                                            const htp_tensor& ids, uint32_t n_threads, uint32_t block_rows,
                                            htp_add_id_params* out, uint64_t* thread_bytes) {
  const htp_status st = htp_add_id_supported(dst, src0, src1, ids);
  if (st != HTP_OK) return st;
  if (n_threads == 0 || n_threads > HTP_MAX_THREADS || block_rows == 0 || block_rows > HTP_ADD_ID_MAX_BLOCK)
    return HTP_ERR_INVALID_PARAMS;
  if ((uint64_t)dst.ne[0] * 4 > 0x7fffffffu) return HTP_ERR_NO_SUPPORT;
  htp_add_id_params p{};
  p.ne1 = htp_fastdiv_init(dst.ne[1]);
  p.n_threads = n_threads;
  p.block_rows = block_rows;
  // ne11 != 1: one src1 row per dst row of the block.
  p.layout = htp_binary_layout_build(dst.ne[0], dst.ne[0], 2, block_rows, thread_bytes);
  *out = p;
  return HTP_OK;
}

// Host side: the most threads, then the largest block, that fit the session's VTCM.
constexpr htp_status htp_add_id_params_build(const htp_tensor& dst, const htp_tensor& src0, const htp_tensor& src1,
                                             const htp_tensor& ids, uint32_t max_threads, uint32_t vtcm_size,
                                             htp_add_id_params* out) {
  htp_status st = htp_add_id_supported(dst, src0, src1, ids);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  const uint64_t nr = htp_tensor_nrows(dst);
  if (nr == 0 || dst.ne[0] == 0) {  // nothing to compute; the kernel returns before any check
    *out = {};
    out->n_threads = 1;
    return HTP_OK;
  }
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  for (uint32_t n = (uint32_t)(nr < max_threads ? nr : max_threads); n >= 1; --n) {
    const uint64_t per_thread = (nr + n - 1) / n;
    uint64_t hi = per_thread < HTP_ADD_ID_MAX_BLOCK ? per_thread : HTP_ADD_ID_MAX_BLOCK;
    const uint64_t row_vtcm = 3 * htp_align_up((uint64_t)dst.ne[0] * 4, HTP_VTCM_ALIGN);
    if (HTP_BINARY_BLOCK_BYTES / row_vtcm < hi) hi = HTP_BINARY_BLOCK_BYTES / row_vtcm;
    if (hi == 0) hi = 1;
    htp_add_id_params p{};
    uint64_t tb = 0, lo = 0;
    while (lo < hi) {  // largest block that fits; thread_bytes grows with block_rows
      const uint64_t mid = (lo + hi + 1) / 2;
      st = htp_add_id_params_make(dst, src0, src1, ids, n, (uint32_t)mid, &p, &tb);
      if (st != HTP_OK) return st;
      if (tb * n <= vtcm_size) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) return htp_add_id_params_make(dst, src0, src1, ids, n, (uint32_t)lo, out, &tb);
  }
  return HTP_ERR_VTCM_TOO_SMALL;
}

// Device side (htp_kparams_match); call for a non-empty dst.
inline htp_status htp_add_id_params_check(const htp_add_id_params& p, const htp_tensor& dst, const htp_tensor& src0,
                                          const htp_tensor& src1, const htp_tensor& ids, uint32_t max_threads,
                                          uint32_t vtcm_size) {
  htp_add_id_params want{};
  return htp_kparams_match(htp_add_id_params_build(dst, src0, src1, ids, max_threads, vtcm_size, &want), want, p);
}
