// Kernel params of the unary family: SCALE (s x + b), CLAMP, SQR, SQRT, SILU, GELU, GELU_QUICK,
// SIGMOID, EXP, NEG, SOFTPLUS, TANH on F32. src may be any view whose rows are dense; dst has
// src's shape. Op params as in graph/ops.h (SCALE f[0] = s, f[1] = b; CLAMP f[0] = min,
// f[1] = max). Header-only, shared by the host builder and the kernel (see rowwise_params.h).
#pragma once

#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/rowwise_params.h"

struct htp_unary_params {
  htp_rw_plan plan;
  htp_divisor chunks;  // plan.n_chunks: tile -> (row, chunk)
};
static_assert(sizeof(htp_unary_params) <= HTP_KPARAMS_BYTES && sizeof(htp_unary_params) % 8 == 0,
              "htp_unary_params must fit the kernel-params blob");

constexpr bool htp_unary_opcode(uint32_t op) {
  switch (op) {
    case HTP_OP_SCALE:
    case HTP_OP_CLAMP:
    case HTP_OP_SQR:
    case HTP_OP_SQRT:
    case HTP_OP_SILU:
    case HTP_OP_GELU:
    case HTP_OP_GELU_QUICK:
    case HTP_OP_SIGMOID:
    case HTP_OP_EXP:
    case HTP_OP_NEG:
    case HTP_OP_SOFTPLUS:
    case HTP_OP_TANH: return true;
    default: return false;
  }
}

constexpr htp_rw_shape htp_unary_shape(const htp_tensor& dst) { return {dst.ne[0], {4, 0}, 0, 0}; }

constexpr htp_status htp_unary_supported(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src) {
  if (!htp_unary_opcode(opcode)) return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_dense_rows(dst, HTP_TYPE_F32) || !htp_rw_dense_rows(src, HTP_TYPE_F32))
    return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_same_shape(dst, src)) return HTP_ERR_INVALID_PARAMS;
  return HTP_OK;
}

constexpr htp_status htp_unary_params_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& src,
                                            uint32_t max_threads, uint32_t vtcm_size, htp_unary_params* out) {
  htp_status st = htp_unary_supported(opcode, dst, src);
  if (st != HTP_OK) return st;
  *out = {};
  st = htp_rw_plan_build(htp_unary_shape(dst), dst, true, max_threads, vtcm_size, &out->plan);
  if (st == HTP_OK) out->chunks = htp_fastdiv_init(out->plan.n_chunks);
  return st;
}

// Device side (htp_kparams_match); call after htp_unary_supported, for a non-empty dst.
inline htp_status htp_unary_params_check(const htp_unary_params& p, uint32_t opcode, const htp_tensor& dst,
                                         const htp_tensor& src, uint32_t max_threads, uint32_t vtcm_size) {
  htp_unary_params want{};
  return htp_kparams_match(htp_unary_params_build(opcode, dst, src, max_threads, vtcm_size, &want), want, p);
}
