// Kernel params and VTCM layout for the copy family:
//   CPY       element k of src0 (logical order) -> element k of dst, any shapes and strides,
//             F32/F16/BF16 conversions or same type;
//   CONT, DUP same type and shape (block types too: rows copied whole);
//   CONCAT    along params[0] (0..3) of src0 then src1, same type;
//   REPEAT    src0 tiled over dst in whole multiples per dim;
//   PAD       src0 followed by zeros (params[0..3] = elements added per dim);
//   FILL      every element = params f[0] (F32/F16/BF16).
// Two kinds of kernel:
//   ROWS  each dst row is built from at most two source rows ("pieces": src0's row, possibly
//         repeated, then src1's row for CONCAT along dim 0) and a zero / fill tail, streamed
//         DDR -> DMA -> VTCM -> convert -> VTCM -> DMA -> DDR. Rows whose elements are strided
//         (permuted views) move as one 2-D descriptor per row with element-sized "rows".
//   FLAT  CPY/CONT/DUP with no row correspondence (row lengths differ and neither side is
//         contiguous) or rows too long for VTCM: element runs straight in DDR (the fallback).
// Dst rows are split across workers; row r is (r % ne1, r / ne1 % ne2, r / ne1 / ne2).
// Header-only: the host fills the params with htp_copy_params_build; the kernel reruns it from
// the tensors and the session and compares (htp_kparams_match).
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_COPY_SLOTS = 2;                // double-buffered pipeline
inline constexpr uint32_t HTP_COPY_MAX_BLOCK = 32;           // rows per block (a descriptor per row at most)
inline constexpr uint32_t HTP_COPY_BLOCK_BYTES = 64u << 10;  // VTCM bytes a block aims at

enum htp_copy_kind : uint32_t {
  HTP_COPY_ROWS = 0,
  HTP_COPY_FLAT = 1,
};

// One worker's VTCM area (ROWS): HTP_COPY_SLOTS slots of {piece 0 rows, piece 1 rows, dst rows}.
struct htp_copy_layout {
  uint32_t in0_offset;  // within a slot
  uint32_t in1_offset;
  uint32_t dst_offset;
  uint32_t slot_bytes;
  uint32_t thread_bytes;  // worker i's area starts at i * thread_bytes
  uint32_t in0_stride;    // VTCM row strides (0: the op has no such piece)
  uint32_t in1_stride;
  uint32_t dst_stride;
};

struct htp_copy_params {
  uint32_t kind;  // htp_copy_kind
  uint32_t n_threads;
  uint32_t block_rows;  // ROWS
  uint32_t pad;
  htp_divisor d1;  // dst rows: r -> i1 = r % d1, i2 = r / d1 % d2, i3 = r / d1 / d2
  htp_divisor d2;
  // Source index math. ROWS CPY/CONT/DUP: the src row of flat row r is (r % s1, r / s1 % s2, ..).
  // ROWS REPEAT: src0's ne[1..3] (i % s). FLAT: src0's ne[0..2] (element e unravels by them).
  htp_divisor s1;
  htp_divisor s2;
  htp_divisor s3;
  htp_copy_layout layout;
};
static_assert(sizeof(htp_copy_params) <= HTP_KPARAMS_BYTES && sizeof(htp_copy_params) % 8 == 0,
              "htp_copy_params must fit the kernel-params blob");

constexpr bool htp_copy_is_float(uint32_t t) { return t == HTP_TYPE_F32 || t == HTP_TYPE_F16 || t == HTP_TYPE_BF16; }

constexpr bool htp_copy_is_block(uint32_t t) { return htp_type_geometry(t).block_size > 1; }

constexpr bool htp_copy_cpy_family(uint32_t opcode) {
  return opcode == HTP_OP_CPY || opcode == HTP_OP_CONT || opcode == HTP_OP_DUP;
}

constexpr uint64_t htp_copy_nelements(const htp_tensor& t) { return (uint64_t)t.ne[0] * htp_tensor_nrows(t); }

// Type, shape and op-param check shared by host (supports_op) and kernel. src1 may be null.
constexpr htp_status htp_copy_supported(uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                        const htp_tensor* src0, const htp_tensor* src1) {
  if (!htp_type_known(dst.type)) return HTP_ERR_NO_SUPPORT;
  if (opcode == HTP_OP_FILL) return htp_copy_is_float(dst.type) ? HTP_OK : HTP_ERR_NO_SUPPORT;
  if (src0 == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor& a = *src0;
  if (htp_copy_cpy_family(opcode)) {
    const bool convert = htp_copy_is_float(a.type) && htp_copy_is_float(dst.type);
    if (!convert && a.type != dst.type) return HTP_ERR_NO_SUPPORT;
    if (htp_copy_is_block(a.type)) {  // whole blocks, rows in place
      const uint32_t ts = htp_type_geometry(a.type).type_size;
      if (opcode == HTP_OP_CPY || a.nb[0] != ts || dst.nb[0] != ts) return HTP_ERR_NO_SUPPORT;
      for (int d = 0; d < 4; ++d)
        if (a.ne[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
    }
    if (opcode != HTP_OP_CPY) {
      for (int d = 0; d < 4; ++d)
        if (a.ne[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
    }
    return htp_copy_nelements(a) == htp_copy_nelements(dst) ? HTP_OK : HTP_ERR_INVALID_PARAMS;
  }
  if (a.type != dst.type || htp_copy_is_block(a.type)) return HTP_ERR_NO_SUPPORT;
  switch (opcode) {
    case HTP_OP_CONCAT: {
      if (src1 == nullptr) return HTP_ERR_INVALID_PARAMS;
      const htp_tensor& b = *src1;
      if (b.type != dst.type) return HTP_ERR_NO_SUPPORT;
      const int32_t dim = params[0];
      if (dim < 0 || dim > 3) return HTP_ERR_INVALID_PARAMS;
      for (int d = 0; d < 4; ++d) {
        const bool ok = d == dim ? (uint64_t)a.ne[d] + b.ne[d] == dst.ne[d] : a.ne[d] == dst.ne[d] && b.ne[d] == dst.ne[d];
        if (!ok) return HTP_ERR_INVALID_PARAMS;
      }
      return HTP_OK;
    }
    case HTP_OP_REPEAT:
      for (int d = 0; d < 4; ++d)
        if (a.ne[d] == 0 ? dst.ne[d] != 0 : dst.ne[d] % a.ne[d] != 0) return HTP_ERR_INVALID_PARAMS;
      return HTP_OK;
    case HTP_OP_PAD:
      for (int d = 0; d < 4; ++d)
        if (params[d] < 0 || (uint64_t)a.ne[d] + (uint32_t)params[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
      return HTP_OK;
    default:
      return HTP_ERR_NO_SUPPORT;
  }
}

// Bytes of one element (a block for block types) and elements (blocks) per row of t.
constexpr uint32_t htp_copy_elem_bytes(const htp_tensor& t) { return htp_type_geometry(t.type).type_size; }
constexpr uint32_t htp_copy_row_elems(const htp_tensor& t) { return t.ne[0] / htp_type_geometry(t.type).block_size; }

// t with the shape of `like` and contiguous strides (t itself contiguous, same element count).
constexpr htp_tensor htp_copy_reshaped(const htp_tensor& t, const htp_tensor& like) {
  htp_tensor r = t;
  const htp_type_info ti = htp_type_geometry(t.type);
  for (int d = 0; d < 4; ++d) r.ne[d] = like.ne[d];
  r.nb[0] = ti.type_size;
  r.nb[1] = like.ne[0] / ti.block_size * ti.type_size;
  r.nb[2] = r.nb[1] * like.ne[1];
  r.nb[3] = r.nb[2] * like.ne[2];
  return r;
}

// CPY family: the (dst, src) shapes under which dst row r is src row r in flattened order
// (equal row lengths). A contiguous side may take the other's shape; false when neither can.
constexpr bool htp_copy_row_views(const htp_tensor& dst, const htp_tensor& src, htp_tensor* dv, htp_tensor* sv) {
  *dv = dst;
  *sv = src;
  if (src.ne[0] == dst.ne[0]) return true;
  if (htp_copy_is_block(src.type)) return false;
  if (htp_tensor_contiguous(src)) {
    *sv = htp_copy_reshaped(src, dst);
    return true;
  }
  if (htp_tensor_contiguous(dst)) {
    *dv = htp_copy_reshaped(dst, src);
    return true;
  }
  return false;
}

// Elements of the two pieces of a dst row (ROWS; dv = dst as the rows see it): piece 0 = src0's
// row, piece 1 = src1's row (CONCAT along dim 0; along dims 1..3 piece 0 comes from src0 or src1).
constexpr void htp_copy_piece_elems(uint32_t opcode, const int32_t* params, const htp_tensor& dv,
                                    const htp_tensor* src0, const htp_tensor* src1, uint32_t* n0, uint32_t* n1) {
  *n0 = htp_copy_cpy_family(opcode) ? htp_copy_row_elems(dv) : src0 != nullptr ? htp_copy_row_elems(*src0) : 0;
  *n1 = opcode == HTP_OP_CONCAT && params[0] == 0 ? src1->ne[0] : 0;
}

// Rows the workers split: dst rows as the ROWS kind sees them (dv), or dst's own rows (FLAT).
constexpr uint64_t htp_copy_work_rows(uint32_t kind, const htp_tensor& dst, const htp_tensor& dv) {
  return htp_tensor_nrows(kind == HTP_COPY_FLAT ? dst : dv);
}

constexpr htp_status htp_copy_params_make(uint32_t kind, uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                          const htp_tensor* src0, const htp_tensor* src1, uint32_t n_threads,
                                          uint32_t block_rows, htp_copy_params* out, uint64_t* thread_bytes) {
  const htp_status st = htp_copy_supported(opcode, params, dst, src0, src1);
  if (st != HTP_OK) return st;
  if (n_threads == 0 || n_threads > HTP_MAX_THREADS) return HTP_ERR_INVALID_PARAMS;
  htp_copy_params p{};
  p.kind = kind;
  p.n_threads = n_threads;
  *thread_bytes = 0;
  if (kind == HTP_COPY_FLAT) {
    // Element indices are 32-bit; block types always take the ROWS kind.
    if (!htp_copy_cpy_family(opcode) || htp_copy_is_block(dst.type) || htp_copy_nelements(dst) > 0xffffffffu)
      return HTP_ERR_INVALID_PARAMS;
    p.d1 = htp_fastdiv_init(dst.ne[1]);
    p.d2 = htp_fastdiv_init(dst.ne[2]);
    p.s1 = htp_fastdiv_init(src0->ne[0]);
    p.s2 = htp_fastdiv_init(src0->ne[1]);
    p.s3 = htp_fastdiv_init(src0->ne[2]);
    *out = p;
    return HTP_OK;
  }
  if (kind != HTP_COPY_ROWS || block_rows == 0 || block_rows > HTP_COPY_MAX_BLOCK) return HTP_ERR_INVALID_PARAMS;
  htp_tensor dv = dst, sv{};
  if (htp_copy_cpy_family(opcode)) {
    if (!htp_copy_row_views(dst, *src0, &dv, &sv)) return HTP_ERR_INVALID_PARAMS;
    p.s1 = htp_fastdiv_init(sv.ne[1]);
    p.s2 = htp_fastdiv_init(sv.ne[2]);
  } else if (opcode == HTP_OP_REPEAT) {
    p.s1 = htp_fastdiv_init(src0->ne[1]);
    p.s2 = htp_fastdiv_init(src0->ne[2]);
    p.s3 = htp_fastdiv_init(src0->ne[3]);
  }
  p.d1 = htp_fastdiv_init(dv.ne[1]);
  p.d2 = htp_fastdiv_init(dv.ne[2]);
  p.block_rows = block_rows;
  uint32_t n0 = 0, n1 = 0;
  htp_copy_piece_elems(opcode, params, dv, src0, src1, &n0, &n1);
  const uint64_t in0_row = src0 != nullptr ? (uint64_t)n0 * htp_copy_elem_bytes(*src0) : 0;
  const uint64_t in1_row = (uint64_t)n1 * htp_copy_elem_bytes(dst);
  const uint64_t dst_row = (uint64_t)htp_copy_row_elems(dv) * htp_copy_elem_bytes(dst);
  if (in0_row > 0x7fffffffu || in1_row > 0x7fffffffu || dst_row > 0x7fffffffu) return HTP_ERR_NO_SUPPORT;
  const uint64_t s0 = htp_align_up(in0_row, HTP_VTCM_ALIGN), s1 = htp_align_up(in1_row, HTP_VTCM_ALIGN);
  const uint64_t sd = htp_align_up(dst_row, HTP_VTCM_ALIGN);
  htp_layout l{};
  const uint64_t o0 = htp_layout_add(&l, block_rows * s0);
  const uint64_t o1 = htp_layout_add(&l, block_rows * s1);
  const uint64_t od = htp_layout_add(&l, block_rows * sd);
  const uint64_t slot = htp_layout_total(l);
  *thread_bytes = slot * HTP_COPY_SLOTS;
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  p.layout = {(uint32_t)o0, (uint32_t)o1, (uint32_t)od, (uint32_t)slot, (uint32_t)*thread_bytes,
              (uint32_t)s0, (uint32_t)s1, (uint32_t)sd};
  *out = p;
  return HTP_OK;
}

// Host side: ROWS with the most threads, then the largest block, that fit the session's VTCM;
// FLAT for the CPY family when rows do not correspond or do not fit.
constexpr htp_status htp_copy_params_build(uint32_t opcode, const int32_t* params, const htp_tensor& dst,
                                           const htp_tensor* src0, const htp_tensor* src1, uint32_t max_threads,
                                           uint32_t vtcm_size, htp_copy_params* out) {
  htp_status st = htp_copy_supported(opcode, params, dst, src0, src1);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  if (htp_tensor_nrows(dst) == 0 || dst.ne[0] == 0) {  // nothing to do; the kernel returns before any check
    *out = {};
    out->n_threads = 1;
    return HTP_OK;
  }
  htp_tensor dv = dst, sv{};
  const bool rows_ok = !htp_copy_cpy_family(opcode) || htp_copy_row_views(dst, *src0, &dv, &sv);
  const uint64_t nr = htp_copy_work_rows(HTP_COPY_ROWS, dst, dv);
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  const uint32_t n_max = (uint32_t)(nr < max_threads ? nr : max_threads);
  for (uint32_t n = n_max; rows_ok && n >= 1; --n) {
    const uint64_t per_thread = (nr + n - 1) / n;
    uint64_t hi = per_thread < HTP_COPY_MAX_BLOCK ? per_thread : HTP_COPY_MAX_BLOCK;
    htp_copy_params p{};
    uint64_t tb = 0;
    st = htp_copy_params_make(HTP_COPY_ROWS, opcode, params, dst, src0, src1, n, 1, &p, &tb);
    if (st != HTP_OK) return st;
    const uint64_t row_vtcm = (uint64_t)p.layout.in0_stride + p.layout.in1_stride + p.layout.dst_stride;
    if (row_vtcm != 0 && HTP_COPY_BLOCK_BYTES / row_vtcm < hi) hi = HTP_COPY_BLOCK_BYTES / row_vtcm;
    if (hi == 0) hi = 1;
    uint64_t lo = 0;
    while (lo < hi) {  // largest block that fits; thread_bytes grows with block_rows
      const uint64_t mid = (lo + hi + 1) / 2;
      htp_copy_params_make(HTP_COPY_ROWS, opcode, params, dst, src0, src1, n, (uint32_t)mid, &p, &tb);
      if (tb * n <= vtcm_size) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) return htp_copy_params_make(HTP_COPY_ROWS, opcode, params, dst, src0, src1, n, (uint32_t)lo, out, &tb);
  }
  if (!htp_copy_cpy_family(opcode) || htp_copy_is_block(dst.type) || htp_copy_nelements(dst) > 0xffffffffu)
    return HTP_ERR_VTCM_TOO_SMALL;
  const uint64_t nr_flat = htp_copy_work_rows(HTP_COPY_FLAT, dst, dv);
  uint64_t tb = 0;
  return htp_copy_params_make(HTP_COPY_FLAT, opcode, params, dst, src0, src1,
                              (uint32_t)(nr_flat < max_threads ? nr_flat : max_threads), 0, out, &tb);
}

// Device side (htp_kparams_match): the kind, too, is the host's choice rebuilt. Call for a
// non-empty op.
inline htp_status htp_copy_params_check(const htp_copy_params& p, uint32_t opcode, const int32_t* params,
                                        const htp_tensor& dst, const htp_tensor* src0, const htp_tensor* src1,
                                        uint32_t max_threads, uint32_t vtcm_size) {
  htp_copy_params want{};
  return htp_kparams_match(htp_copy_params_build(opcode, params, dst, src0, src1, max_threads, vtcm_size, &want),
                           want, p);
}
