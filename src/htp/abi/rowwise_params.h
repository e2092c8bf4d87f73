// The streaming plan shared by the row-wise kernel families (unary, act, norm, softmax):
// how rows are split across workers, how many rows (or which column chunk of a row) one DMA
// block holds, and each worker's VTCM area. Header-only: the host builds the plan with
// htp_rw_plan_build, and each family's kernel reruns its builder and compares (htp_kparams_match),
// so the two sides cannot disagree about any field.
//
// Two modes, chosen by the host:
//   whole rows  (n_chunks == 1): a block is up to block_rows rows of one (i2, i3) plane;
//   chunked     (n_chunks > 1):  a block is one row's columns [c, c + chunk_cols). Elementwise
//               families stream chunks once; row-reducing families (norm, softmax) stream every
//               chunk of a row twice (pass 1 gathers the row statistics, pass 2 writes).
// Elementwise families may also split rows into chunks so that a few long rows (decode) still
// spread over every worker: their work units are tiles (row, chunk), split evenly over workers.
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_RW_SLOTS = 2;   // double-buffered pipeline
inline constexpr uint32_t HTP_RW_INPUTS = 2;  // streamed inputs per block at most
inline constexpr uint32_t HTP_RW_BLOCK_BYTES = 32u
                                               << 10;  // bytes per streamed buffer per block (L1/L2 on host)
inline constexpr uint32_t HTP_RW_MIN_TILE = 2048;      // elements: rows are split for threads no finer
inline constexpr uint32_t HTP_RW_COL_ALIGN = 32;       // chunk columns are multiples of this

// What a family streams, per element of a row.
struct htp_rw_shape {
  uint32_t ne0;                      // elements per row
  uint32_t in_bytes[HTP_RW_INPUTS];  // bytes per element of each streamed input (0: none)
  uint32_t extra_bytes;              // per-worker area loaded once before streaming (softmax sinks)
  uint32_t row_bytes;                // bytes per element of a broadcast row (RMS_NORM_MUL weight): with
                                     // whole rows it is loaded once after the extra area; with chunked
                                     // rows it streams as input 1 (in_bytes[1] must then be 0)
};

// One worker's VTCM area: HTP_RW_SLOTS slots of {input 0, input 1, output} blocks, then the
// extra area (at HTP_RW_SLOTS * slot_bytes) and the broadcast row (at row_offset).
// Input 0 (always present) starts each slot.
struct htp_rw_layout {
  uint32_t in1_offset;                // within a slot (0: no input 1)
  uint32_t in_stride[HTP_RW_INPUTS];  // VTCM row stride of each input block (0: no input)
  uint32_t out_offset;                // within a slot
  uint32_t out_stride;
  uint32_t slot_bytes;
  uint32_t thread_bytes;  // the worker's whole area; worker i starts at i * thread_bytes
  uint32_t row_offset;    // within the worker's area; 0 when there is no broadcast row there

  constexpr uint32_t in_offset(uint32_t k) const { return k == 0 ? 0 : in1_offset; }
};

struct htp_rw_plan {
  htp_divisor ne1;      // flattened row r -> i1 = r % ne1, r / ne1
  htp_divisor ne2;      // (r / ne1) -> i2 = % ne2, i3 = / ne2
  uint32_t n_threads;   // workers the op runs on
  uint32_t block_rows;  // rows per block (1 when chunked)
  uint32_t chunk_cols;  // columns per block (ne0 when rows are whole)
  uint32_t n_chunks;    // ceil(ne0 / chunk_cols)
  htp_rw_layout layout;
};
static_assert(sizeof(htp_rw_plan) == 80 && sizeof(htp_rw_plan) % 8 == 0, "htp_rw_plan layout");

constexpr htp_rw_layout htp_rw_layout_build(const htp_rw_shape& s, uint32_t block_rows, uint32_t chunk_cols,
                                            bool chunked, uint64_t* thread_bytes) {
  htp_layout l{};
  htp_rw_layout out{};
  for (uint32_t k = 0; k < HTP_RW_INPUTS; ++k) {
    const uint32_t eb = k == 1 && chunked && s.row_bytes != 0 ? s.row_bytes : s.in_bytes[k];
    if (eb == 0) continue;
    const uint64_t stride = htp_align_up((uint64_t)chunk_cols * eb, HTP_VTCM_ALIGN);
    const uint64_t at = htp_layout_add(&l, block_rows * stride);
    if (k == 1) out.in1_offset = (uint32_t)at;
    out.in_stride[k] = (uint32_t)stride;
  }
  const uint64_t out_stride = htp_align_up((uint64_t)chunk_cols * 4, HTP_VTCM_ALIGN);
  out.out_offset = (uint32_t)htp_layout_add(&l, block_rows * out_stride);
  out.out_stride = (uint32_t)out_stride;
  const uint64_t slot = htp_layout_total(l);
  htp_layout t{slot * HTP_RW_SLOTS};
  htp_layout_add(&t, s.extra_bytes);
  if (!chunked && s.row_bytes != 0)
    out.row_offset = (uint32_t)htp_layout_add(&t, (uint64_t)s.ne0 * s.row_bytes);
  *thread_bytes = htp_layout_total(t);
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  out.slot_bytes = (uint32_t)slot;
  out.thread_bytes = (uint32_t)*thread_bytes;
  return out;
}

// Work units a plan splits over workers: tiles (row, chunk) for elementwise families, rows otherwise.
constexpr uint64_t htp_rw_units(const htp_rw_plan& p, uint64_t n_rows, bool elementwise) {
  return elementwise ? n_rows * p.n_chunks : n_rows;
}

constexpr bool htp_rw_fits(const htp_rw_shape& s, uint32_t rows, uint32_t cols, bool chunked,
                           uint32_t n_threads, uint32_t vtcm_size) {
  uint64_t tb = 0;
  htp_rw_layout_build(s, rows, cols, chunked, &tb);
  return tb * n_threads <= vtcm_size;
}

// Host side. `elementwise`: rows may be chunked freely and split across workers; otherwise a row
// stays on one worker and is only chunked when it does not fit VTCM whole.
constexpr htp_status htp_rw_plan_build(const htp_rw_shape& s, const htp_tensor& dst, bool elementwise,
                                       uint32_t max_threads, uint32_t vtcm_size, htp_rw_plan* out) {
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  if (s.in_bytes[0] == 0 || (s.row_bytes != 0 && s.in_bytes[1] != 0)) return HTP_ERR_INVALID_PARAMS;
  *out = {};
  out->n_threads = 1;
  const uint64_t nr = htp_tensor_nrows(dst);
  const uint32_t ne0 = s.ne0;
  if (nr == 0 || ne0 == 0) return HTP_OK;  // nothing to compute; the kernel returns before any check
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  uint32_t eb = 4;  // widest element streamed
  for (uint32_t k = 0; k < HTP_RW_INPUTS; ++k) eb = s.in_bytes[k] > eb ? s.in_bytes[k] : eb;

  uint32_t chunk = ne0;
  if (elementwise) {
    if ((uint64_t)ne0 * eb > HTP_RW_BLOCK_BYTES)
      chunk = HTP_RW_BLOCK_BYTES / eb / HTP_RW_COL_ALIGN * HTP_RW_COL_ALIGN;
    if (nr < max_threads) {  // few long rows: cut them so that every worker gets tiles
      const uint64_t pieces = (max_threads + nr - 1) / nr;
      uint64_t c = htp_align_up((ne0 + pieces - 1) / pieces, HTP_RW_COL_ALIGN);
      if (c < HTP_RW_MIN_TILE) c = HTP_RW_MIN_TILE;
      if (c < chunk) chunk = (uint32_t)c;
    }
  }
  auto threads_for = [&](uint32_t c) -> uint32_t {
    const uint64_t units = elementwise ? nr * ((ne0 + c - 1) / c) : nr;
    return (uint32_t)(units < max_threads ? units : max_threads);
  };
  uint32_t n_threads = threads_for(chunk);
  if (chunk == ne0 && htp_rw_fits(s, 1, ne0, false, n_threads, vtcm_size)) {
    // Whole rows: the largest block (up to the block bytes and this worker's share) that fits.
    const uint64_t per_thread = (nr + n_threads - 1) / n_threads;
    uint64_t hi = HTP_RW_BLOCK_BYTES / ((uint64_t)ne0 * eb);
    if (hi > per_thread) hi = per_thread;
    if (hi > dst.ne[1]) hi = dst.ne[1];  // a block stays within one (i2, i3) plane
    if (hi == 0) hi = 1;
    uint64_t lo = 1;
    while (lo < hi) {
      const uint64_t mid = (lo + hi + 1) / 2;
      if (htp_rw_fits(s, (uint32_t)mid, ne0, false, n_threads, vtcm_size))
        lo = mid;
      else
        hi = mid - 1;
    }
    out->block_rows = (uint32_t)lo;
  } else {
    // Chunked rows: the widest chunk (multiple of HTP_RW_COL_ALIGN, below ne0) that fits.
    uint64_t lo = 0, hi = (chunk == ne0 ? ne0 - 1 : chunk) / HTP_RW_COL_ALIGN;
    while (lo < hi) {
      const uint64_t mid = (lo + hi + 1) / 2;
      const uint32_t c = (uint32_t)mid * HTP_RW_COL_ALIGN;
      if (htp_rw_fits(s, 1, c, true, threads_for(c), vtcm_size))
        lo = mid;
      else
        hi = mid - 1;
    }
    if (lo == 0) return HTP_ERR_VTCM_TOO_SMALL;
    chunk = (uint32_t)lo * HTP_RW_COL_ALIGN;
    n_threads = threads_for(chunk);
    out->block_rows = 1;
  }
  out->chunk_cols = chunk;
  out->n_chunks = (ne0 + chunk - 1) / chunk;
  out->n_threads = n_threads;
  out->ne1 = htp_fastdiv_init(dst.ne[1]);
  out->ne2 = htp_fastdiv_init(dst.ne[2]);
  uint64_t tb = 0;
  out->layout = htp_rw_layout_build(s, out->block_rows, chunk, out->n_chunks > 1, &tb);
  return HTP_OK;
}

// Shape checks shared by the families: an F32 row-major tensor whose rows are dense (element
// stride = type size); the rows themselves may sit anywhere (views, permutations).
constexpr bool htp_rw_dense_rows(const htp_tensor& t, uint32_t type) {
  return t.type == type && t.nb[0] == htp_type_geometry(type).type_size;
}

constexpr bool htp_rw_same_shape(const htp_tensor& a, const htp_tensor& b) {
  return a.ne[0] == b.ne[0] && a.ne[1] == b.ne[1] && a.ne[2] == b.ne[2] && a.ne[3] == b.ne[3];
}
