// Kernel params and VTCM layout for the reduce family, all row-wise on F32 rows:
//   SUM_ROWS  dst F32 [1, ne1, ne2, ne3] = sum of each row;
//   ARGSORT   dst I32, src's shape: the indices that sort each row (params[0]: 0 ascending,
//             1 descending); ties keep index order;
//   TOP_K     dst I32 [k, ne1, ne2, ne3]: indices of the k largest values, largest first, ties
//             by lower index (params[0] = k): the MoE router's expert choice.
// Rows are split across workers; row r is (r % ne1, r / ne1 % ne2, r / ne1 / ne2). A single long
// row under a selecting TOP_K (decode's logits, top-k sampling on the device) streams instead,
// cut into one piece per worker: each selects its piece's best k in blocks of piece_block
// elements, and the op merges the workers' lists (ties by lower index, like the one-pass select).
// Header-only: the host fills the params with htp_reduce_params_build; the kernel reruns it
// from the tensors, op params and the session and compares (htp_kparams_match).
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_REDUCE_SLOTS = 2;                // double-buffered pipeline
inline constexpr uint32_t HTP_REDUCE_MAX_BLOCK = 64;           // rows per block
inline constexpr uint32_t HTP_REDUCE_BLOCK_BYTES = 64u << 10;  // VTCM bytes a block aims at
inline constexpr uint32_t HTP_TOPK_SELECT_MAX = 64;  // TOP_K up to this k selects in one pass, no sort
inline constexpr uint32_t HTP_TOPK_PIECE_MIN = 4096;    // elements a worker's piece of one row has at least
inline constexpr uint32_t HTP_TOPK_PIECE_BLOCK = 8192;  // elements of a piece's block (32 KiB of VTCM)

// One worker's VTCM area: HTP_REDUCE_SLOTS slots of {src rows, dst rows}, then sort scratch.
struct htp_reduce_layout {
  uint32_t src_offset;  // within a slot
  uint32_t dst_offset;
  uint32_t slot_bytes;
  uint32_t scratch_offset;  // within the worker's area, after the slots
  uint32_t thread_bytes;    // worker i's area starts at i * thread_bytes
  uint32_t src_stride;      // VTCM stride of src rows
  uint32_t dst_stride;      // VTCM stride of dst rows
  uint32_t pad;
};

struct htp_reduce_params {
  htp_divisor ne1;  // src rows: r -> i1 = r % ne1
  htp_divisor ne2;  //           r / ne1 -> i2 = .. % ne2, i3 = .. / ne2
  uint32_t n_threads;
  uint32_t block_rows;
  uint32_t src_row_bytes;
  uint32_t dst_row_bytes;
  uint32_t scratch_bytes;  // per worker: radix sort keys and indices, twice (16 bytes per element),
                           // or a piece's k (key, index) pairs
  uint32_t piece_block;    // pieces mode: elements per block (src_row_bytes = 4 * this); 0: rows
  htp_reduce_layout layout;
};
static_assert(sizeof(htp_reduce_params) <= HTP_KPARAMS_BYTES && sizeof(htp_reduce_params) % 8 == 0,
              "htp_reduce_params must fit the kernel-params blob");

// Whether TOP_K with this k sorts the whole row (else it selects, needing no scratch).
constexpr bool htp_topk_sorts(uint32_t k) { return k > HTP_TOPK_SELECT_MAX; }

// Whether TOP_K streams its one long row in blocks, cut into htp_topk_pieces pieces (one per
// worker), instead of fetching rows whole.
constexpr bool htp_topk_streams(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src) {
  return opcode == HTP_OP_TOP_K && !htp_topk_sorts(dst.ne[0]) && htp_tensor_nrows(src) == 1 &&
         (uint64_t)src.ne[0] >= HTP_TOPK_PIECE_MIN;
}
constexpr uint32_t htp_topk_pieces(const htp_tensor& src, uint32_t max_threads) {
  const uint64_t by_length = (uint64_t)src.ne[0] / HTP_TOPK_PIECE_MIN;
  return (uint32_t)(by_length < max_threads ? by_length : max_threads);
}

// Type, shape and op-param check shared by host (supports_op) and kernel.
constexpr htp_status htp_reduce_supported(uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                          const htp_tensor& src) {
  if (src.type != HTP_TYPE_F32 || src.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
  for (int d = 1; d < 4; ++d)
    if (dst.ne[d] != src.ne[d]) return HTP_ERR_INVALID_PARAMS;
  switch (opcode) {
    case HTP_OP_SUM_ROWS:
      if (dst.type != HTP_TYPE_F32) return HTP_ERR_NO_SUPPORT;
      return dst.ne[0] == 1 ? HTP_OK : HTP_ERR_INVALID_PARAMS;
    case HTP_OP_ARGSORT:
      if (dst.type != HTP_TYPE_I32 || dst.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
      if (params[0] != 0 && params[0] != 1) return HTP_ERR_INVALID_PARAMS;
      return dst.ne[0] == src.ne[0] ? HTP_OK : HTP_ERR_INVALID_PARAMS;
    case HTP_OP_TOP_K:
      if (dst.type != HTP_TYPE_I32 || dst.nb[0] != 4) return HTP_ERR_NO_SUPPORT;
      if (params[0] < 1 || (uint32_t)params[0] != dst.ne[0] || dst.ne[0] > src.ne[0]) return HTP_ERR_INVALID_PARAMS;
      return HTP_OK;
    default:
      return HTP_ERR_NO_SUPPORT;
  }
}

// The params for a given thread count and block size; *thread_bytes gets one worker's VTCM.
// Call for a non-empty op.
constexpr htp_status htp_reduce_params_make(uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                            const htp_tensor& src, uint32_t n_threads, uint32_t block_rows,
                                            htp_reduce_params* out, uint64_t* thread_bytes) {
  const htp_status st = htp_reduce_supported(opcode, params, dst, src);
  if (st != HTP_OK) return st;
  if (n_threads == 0 || n_threads > HTP_MAX_THREADS || block_rows == 0 || block_rows > HTP_REDUCE_MAX_BLOCK)
    return HTP_ERR_INVALID_PARAMS;
  const bool pieces = htp_topk_streams(opcode, dst, src);
  const uint64_t piece_block = !pieces                                   ? 0
                               : (uint64_t)src.ne[0] < HTP_TOPK_PIECE_BLOCK ? (uint64_t)src.ne[0]
                                                                           : HTP_TOPK_PIECE_BLOCK;
  const uint64_t src_row = pieces ? piece_block * 4 : (uint64_t)src.ne[0] * 4;
  const uint64_t dst_row = (uint64_t)dst.ne[0] * 4;
  const bool sorts = opcode == HTP_OP_ARGSORT || (opcode == HTP_OP_TOP_K && htp_topk_sorts(dst.ne[0]));
  const uint64_t scratch = sorts ? (uint64_t)src.ne[0] * 16 : pieces ? (uint64_t)dst.ne[0] * 8 : 0;
  if (src_row > 0x7fffffffu || scratch > 0x7fffffffu) return HTP_ERR_NO_SUPPORT;
  const uint64_t src_stride = htp_align_up(src_row, HTP_VTCM_ALIGN);
  const uint64_t dst_stride = htp_align_up(dst_row, HTP_VTCM_ALIGN);
  htp_layout slot{};
  const uint64_t src_off = htp_layout_add(&slot, block_rows * src_stride);
  const uint64_t dst_off = htp_layout_add(&slot, block_rows * dst_stride);
  const uint64_t slot_bytes = htp_layout_total(slot);
  htp_layout area{};
  htp_layout_add(&area, slot_bytes * HTP_REDUCE_SLOTS);
  const uint64_t scratch_off = htp_layout_add(&area, scratch);
  *thread_bytes = htp_layout_total(area);
  htp_reduce_params p{};
  p.ne1 = htp_fastdiv_init(src.ne[1]);
  p.ne2 = htp_fastdiv_init(src.ne[2]);
  p.n_threads = n_threads;
  p.block_rows = block_rows;
  p.src_row_bytes = (uint32_t)src_row;
  p.dst_row_bytes = (uint32_t)dst_row;
  p.scratch_bytes = (uint32_t)scratch;
  p.piece_block = (uint32_t)piece_block;
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  p.layout = {(uint32_t)src_off,     (uint32_t)dst_off,    (uint32_t)slot_bytes, (uint32_t)scratch_off,
              (uint32_t)*thread_bytes, (uint32_t)src_stride, (uint32_t)dst_stride, 0};
  *out = p;
  return HTP_OK;
}

// Host side: the most threads, then the largest block, that fit the session's VTCM.
constexpr htp_status htp_reduce_params_build(uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                             const htp_tensor& src, uint32_t max_threads, uint32_t vtcm_size,
                                             htp_reduce_params* out) {
  htp_status st = htp_reduce_supported(opcode, params, dst, src);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  const uint64_t nr = htp_tensor_nrows(src);
  if (nr == 0 || src.ne[0] == 0) {  // nothing to do; the kernel returns before any check
    *out = {};
    out->n_threads = 1;
    return HTP_OK;
  }
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  if (htp_topk_streams(opcode, dst, src)) {  // a piece per worker, one block in flight per slot
    for (uint32_t n = htp_topk_pieces(src, max_threads); n >= 1; --n) {
      uint64_t tb = 0;
      st = htp_reduce_params_make(opcode, params, dst, src, n, 1, out, &tb);
      if (st != HTP_OK) return st;
      if (tb * n <= vtcm_size) return HTP_OK;
    }
    return HTP_ERR_VTCM_TOO_SMALL;
  }
  for (uint32_t n = (uint32_t)(nr < max_threads ? nr : max_threads); n >= 1; --n) {
    const uint64_t per_thread = (nr + n - 1) / n;
    uint64_t hi = per_thread < HTP_REDUCE_MAX_BLOCK ? per_thread : HTP_REDUCE_MAX_BLOCK;
    htp_reduce_params p{};
    uint64_t tb = 0;
    st = htp_reduce_params_make(opcode, params, dst, src, n, 1, &p, &tb);
    if (st != HTP_OK) return st;
    const uint64_t row_vtcm = (uint64_t)p.layout.src_stride + p.layout.dst_stride;
    if (HTP_REDUCE_BLOCK_BYTES / row_vtcm < hi) hi = HTP_REDUCE_BLOCK_BYTES / row_vtcm;
    if (hi == 0) hi = 1;
    uint64_t lo = 0;
    while (lo < hi) {  // largest block that fits; thread_bytes grows with block_rows
      const uint64_t mid = (lo + hi + 1) / 2;
      htp_reduce_params_make(opcode, params, dst, src, n, (uint32_t)mid, &p, &tb);
      if (tb * n <= vtcm_size) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) return htp_reduce_params_make(opcode, params, dst, src, n, (uint32_t)lo, out, &tb);
  }
  return HTP_ERR_VTCM_TOO_SMALL;
}

// Device side (htp_kparams_match); call for a non-empty op.
inline htp_status htp_reduce_params_check(const htp_reduce_params& p, uint32_t opcode, const int32_t* params,
                                          const htp_tensor& dst, const htp_tensor& src, uint32_t max_threads,
                                          uint32_t vtcm_size) {
  htp_reduce_params want{};
  return htp_kparams_match(htp_reduce_params_build(opcode, params, dst, src, max_threads, vtcm_size, &want), want,
                           p);
}
