// Kernel params of the normalization family on F32 rows (eps = op params f[0]):
//   RMS_NORM      x / sqrt(mean(x^2) + eps)
//   NORM          (x - mean) / sqrt(var + eps)
//   L2_NORM       x / max(||x||, eps)
//   RMS_NORM_MUL  rms_norm(x) * w: the fused RMS_NORM -> MUL the host forms; src[0] = x,
//                 src[1] = w, one F32 row of ne0 broadcast over every row; params f[0] = eps of
//                 the RMS_NORM node.
// src may be a view with dense rows; dst has its shape. A row stays on one worker; rows too
// long for VTCM stream in chunks, twice (statistics, then output). Header-only, shared by the
// host builder and the kernel (see rowwise_params.h).
#pragma once

#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/rowwise_params.h"

struct htp_norm_params {
  htp_rw_plan plan;
};
static_assert(sizeof(htp_norm_params) <= HTP_KPARAMS_BYTES && sizeof(htp_norm_params) % 8 == 0,
              "htp_norm_params must fit the kernel-params blob");

constexpr htp_rw_shape htp_norm_shape(uint32_t opcode, const htp_tensor& dst) {
  return {dst.ne[0], {4, 0}, 0, opcode == HTP_OP_RMS_NORM_MUL ? 4u : 0u};
}

// w: the RMS_NORM_MUL weight (nullptr for the others).
constexpr htp_status htp_norm_supported(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src,
                                        const htp_tensor* w) {
  if (opcode != HTP_OP_RMS_NORM && opcode != HTP_OP_NORM && opcode != HTP_OP_L2_NORM &&
      opcode != HTP_OP_RMS_NORM_MUL)
    return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_dense_rows(dst, HTP_TYPE_F32) || !htp_rw_dense_rows(src, HTP_TYPE_F32))
    return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_same_shape(dst, src)) return HTP_ERR_INVALID_PARAMS;
  if (opcode == HTP_OP_RMS_NORM_MUL) {
    if (w == nullptr) return HTP_ERR_INVALID_PARAMS;
    if (!htp_rw_dense_rows(*w, HTP_TYPE_F32)) return HTP_ERR_NO_SUPPORT;
    if (w->ne[0] != dst.ne[0] || w->ne[1] != 1 || w->ne[2] != 1 || w->ne[3] != 1) return HTP_ERR_NO_SUPPORT;
  }
  return HTP_OK;
}

constexpr htp_status htp_norm_params_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src,
                                           const htp_tensor* w, uint32_t max_threads, uint32_t vtcm_size,
                                           htp_norm_params* out) {
  const htp_status st = htp_norm_supported(opcode, dst, src, w);
  if (st != HTP_OK) return st;
  *out = {};
  return htp_rw_plan_build(htp_norm_shape(opcode, dst), dst, false, max_threads, vtcm_size, &out->plan);
}

// Device side (htp_kparams_match); call after htp_norm_supported, for a non-empty dst.
inline htp_status htp_norm_params_check(const htp_norm_params& p, uint32_t opcode, const htp_tensor& dst,
                                        const htp_tensor& src, const htp_tensor* w, uint32_t max_threads,
                                        uint32_t vtcm_size) {
  htp_norm_params want{};
  return htp_kparams_match(htp_norm_params_build(opcode, dst, src, w, max_threads, vtcm_size, &want), want, p);
}
