// Kernel params and VTCM layout for the ROPE family (F32 rows, I32 positions, optional F32
// freq factors; normal and NEOX pairing; YaRN). Header-only: the host computes the per-op
// constants that need libm (theta scale, YaRN correction dims, magnitude) and plans the tiling
// with htp_rope_plan; the kernel reruns the planner in htp_rope_params_check and compares.
//
// Angles are formed in double on the device: theta = pos * freq[i], freq[i] = theta_scale^i
// / ff[i] * (freq_scale (1 - mix_i) + mix_i). A float angle loses ~ulp(1e5) = 0.008 rad at
// position 1e5, far beyond the 1e-7 NMSE the op is held to; the double one stays ~1e-10 rad.
#pragma once

#include <stdint.h>

#include "htp/abi/fastdiv.h"
#include "htp/abi/htp_op.h"
#include "htp/abi/htp_status.h"
#include "htp/abi/htp_tensor.h"
#include "htp/abi/layout.h"

inline constexpr uint32_t HTP_ROPE_SLOTS = 2;                // double-buffered pipeline
inline constexpr uint32_t HTP_ROPE_BLOCK_BYTES = 32u << 10;  // src bytes per block
inline constexpr uint32_t HTP_ROPE_MODE_NORMAL = 0;          // pairs (2i, 2i + 1)
inline constexpr uint32_t HTP_ROPE_MODE_NEOX = 2;            // pairs (i, i + n_dims / 2)
inline constexpr uint32_t HTP_ROPE_MAX_DIMS = 1u << 16;      // bounds the per-thread tables

// One worker's VTCM area: HTP_ROPE_SLOTS slots of {src rows, dst rows, positions}, then the
// worker's pair tables (frequencies in double, cos/sin of the current token, freq factors).
struct htp_rope_layout {
  uint32_t src_offset;  // within a slot
  uint32_t dst_offset;
  uint32_t pos_offset;
  uint32_t slot_bytes;
  uint32_t freq_offset;   // within the area: n_dims / 2 doubles
  uint32_t cache_offset;  // n_dims / 2 cos, then n_dims / 2 sin (floats)
  uint32_t ff_offset;     // n_dims / 2 freq factors (floats)
  uint32_t thread_bytes;  // worker i's area starts at i * thread_bytes
  uint32_t row_stride;    // VTCM row stride of src and dst blocks
  uint32_t pad;
};

struct htp_rope_params {
  double theta_scale;  // freq_base^(-2 / n_dims)
  double mscale;       // attn_factor, times the YaRN magnitude 1 + 0.1 ln(1 / freq_scale)
  double corr_denom;   // YaRN ramp: (i - corr_low) / corr_denom, clamped to [0, 1]
  float freq_scale;
  float ext_factor;  // 0: no YaRN ramp
  float corr_low;
  uint32_t n_dims;
  uint32_t mode;
  uint32_t n_threads;
  uint32_t block_rows;
  htp_divisor ne1;  // row r -> i1 = r % ne1, i23 = r / ne1
  htp_divisor ne2;  // i23 -> i2 = i23 % ne2, i3 = i23 / ne2
  htp_rope_layout layout;
  uint32_t pad;
};
static_assert(sizeof(htp_rope_params) <= HTP_KPARAMS_BYTES && sizeof(htp_rope_params) % 8 == 0,
              "htp_rope_params must fit the kernel-params blob");

// Shape and type check shared by host and kernel. `ff` is nullptr without freq factors.
constexpr htp_status htp_rope_supported(const htp_tensor& dst, const htp_tensor& src, const htp_tensor& pos,
                                        const htp_tensor* ff, uint32_t n_dims, uint32_t mode) {
  if (dst.type != HTP_TYPE_F32 || src.type != HTP_TYPE_F32 || pos.type != HTP_TYPE_I32)
    return HTP_ERR_NO_SUPPORT;
  if (ff != nullptr && ff->type != HTP_TYPE_F32) return HTP_ERR_NO_SUPPORT;
  if (mode != HTP_ROPE_MODE_NORMAL && mode != HTP_ROPE_MODE_NEOX) return HTP_ERR_NO_SUPPORT;
  // Rows dense; src rows may sit anywhere (views); dst contiguous.
  if (src.nb[0] != 4 || pos.nb[0] != 4 || (ff != nullptr && ff->nb[0] != 4)) return HTP_ERR_NO_SUPPORT;
  if (!htp_tensor_contiguous(dst)) return HTP_ERR_NO_SUPPORT;
  for (int d = 0; d < 4; ++d)
    if (src.ne[d] != dst.ne[d]) return HTP_ERR_INVALID_PARAMS;
  if (n_dims == 0 || n_dims % 2 != 0 || n_dims > src.ne[0] || n_dims > HTP_ROPE_MAX_DIMS)
    return HTP_ERR_INVALID_PARAMS;
  if (pos.ne[0] != src.ne[2]) return HTP_ERR_INVALID_PARAMS;
  if (ff != nullptr && ff->ne[0] < n_dims / 2) return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

// Rows of a block are uniformly strided in src: within one (i2, i3) plane, or across the
// planes of one i3 when src stores them back to back. Blocks never cross i3 (positions are
// indexed by i2 and must form one run per block).
constexpr bool htp_rope_planes_merge(const htp_tensor& src) {
  return (uint64_t)src.nb[2] == (uint64_t)src.nb[1] * src.ne[1];
}

constexpr htp_rope_layout htp_rope_layout_build(uint32_t ne0, uint32_t n_dims, uint32_t block_rows,
                                                uint64_t* thread_bytes) {
  const uint64_t stride = htp_align_up((uint64_t)ne0 * 4, HTP_VTCM_ALIGN);
  const uint64_t half = n_dims / 2;
  htp_layout s{};
  const uint64_t src = htp_layout_add(&s, block_rows * stride);
  const uint64_t dst = htp_layout_add(&s, block_rows * stride);
  // A block of block_rows rows touches at most block_rows tokens.
  const uint64_t pos = htp_layout_add(&s, (uint64_t)block_rows * 4);
  const uint64_t slot = htp_layout_total(s);
  htp_layout a{};
  htp_layout_add(&a, slot * HTP_ROPE_SLOTS);
  const uint64_t freq = htp_layout_add(&a, half * 8);
  const uint64_t cache = htp_layout_add(&a, half * 8);
  const uint64_t ff = htp_layout_add(&a, half * 4);
  *thread_bytes = htp_layout_total(a);
  // Truncation only matters when thread_bytes exceeds the arena, which callers reject first.
  return {(uint32_t)src,   (uint32_t)dst, (uint32_t)pos,           (uint32_t)slot,   (uint32_t)freq,
          (uint32_t)cache, (uint32_t)ff,  (uint32_t)*thread_bytes, (uint32_t)stride, 0};
}

// Host side, after the libm-derived fields (theta_scale, mscale, corr_*, freq_scale,
// ext_factor) are in `out`: picks threads and block size and fills shapes and the layout.
constexpr htp_status htp_rope_plan(const htp_tensor& dst, const htp_tensor& src, const htp_tensor& pos,
                                   const htp_tensor* ff, uint32_t n_dims, uint32_t mode, uint32_t max_threads,
                                   uint32_t vtcm_size, htp_rope_params* out) {
  const htp_status st = htp_rope_supported(dst, src, pos, ff, n_dims, mode);
  if (st != HTP_OK) return st;
  if (max_threads == 0) return HTP_ERR_INVALID_PARAMS;
  out->n_dims = n_dims;
  out->mode = mode;
  const uint64_t nr = htp_tensor_nrows(dst);
  if (nr == 0 || dst.ne[0] == 0) {  // nothing to compute; the kernel returns before any check
    out->n_threads = 1;
    return HTP_OK;
  }
  if (nr > 0xffffffffu) return HTP_ERR_NO_SUPPORT;
  const uint32_t n_threads = (uint32_t)(nr < max_threads ? nr : max_threads);
  const uint64_t rows_per_thread = (nr + n_threads - 1) / n_threads;
  const uint64_t run = htp_rope_planes_merge(src) ? (uint64_t)src.ne[1] * src.ne[2] : src.ne[1];
  const uint64_t stride = htp_align_up((uint64_t)dst.ne[0] * 4, HTP_VTCM_ALIGN);
  uint64_t hi = rows_per_thread < run ? rows_per_thread : run;
  if (HTP_ROPE_BLOCK_BYTES / stride < hi) hi = HTP_ROPE_BLOCK_BYTES / stride;
  if (hi == 0) hi = 1;
  // Largest block that fits the arena; thread_bytes grows with block_rows.
  uint64_t lo = 0, thread_bytes = 0;
  while (lo < hi) {
    const uint64_t mid = (lo + hi + 1) / 2;
    htp_rope_layout_build(dst.ne[0], n_dims, (uint32_t)mid, &thread_bytes);
    if (thread_bytes * n_threads <= vtcm_size)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == 0) return HTP_ERR_VTCM_TOO_SMALL;
  out->n_threads = n_threads;
  out->block_rows = (uint32_t)lo;
  out->ne1 = htp_fastdiv_init(dst.ne[1]);
  out->ne2 = htp_fastdiv_init(dst.ne[2]);
  out->layout = htp_rope_layout_build(dst.ne[0], n_dims, (uint32_t)lo, &thread_bytes);
  return HTP_OK;
}

// Device side (htp_kparams_match): the plan is rebuilt from the tensors, n_dims and mode (op
// params 0, 1) and the session. Of the float fields, freq_scale and ext_factor are the op
// params f[4], f[5] and are rebuilt; without YaRN (ext_factor 0) so are mscale (f[6]),
// corr_low and corr_denom. theta_scale, and with YaRN mscale, corr_low and corr_denom, need
// libm: they are taken as sent. They only enter the angle and magnitude arithmetic, so a wrong
// one gives wrong numbers, never a bad access. Call after htp_rope_supported, for a non-empty dst.
inline htp_status htp_rope_params_check(const htp_rope_params& p, const htp_tensor& dst, const htp_tensor& src,
                                        const htp_tensor& pos, const htp_tensor* ff, const int32_t* op_params,
                                        uint32_t max_threads, uint32_t vtcm_size) {
  auto param_f = [&](uint32_t i) {
    float f;
    __builtin_memcpy(&f, &op_params[i], 4);
    return f;
  };
  htp_rope_params want{};
  want.theta_scale = p.theta_scale;
  want.freq_scale = (float)(double)param_f(4);
  want.ext_factor = (float)(double)param_f(5);
  if (want.ext_factor != 0.0f) {
    want.mscale = p.mscale;
    want.corr_low = p.corr_low;
    want.corr_denom = p.corr_denom;
  } else {
    want.mscale = (double)param_f(6);
    want.corr_low = 0.0f;
    want.corr_denom = 1.0;
  }
  const htp_status st = htp_rope_plan(dst, src, pos, ff, (uint32_t)op_params[0], (uint32_t)op_params[1],
                                      max_threads, vtcm_size, &want);
  return htp_kparams_match(st, want, p);
}
