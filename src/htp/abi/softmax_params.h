// Kernel params of SOFT_MAX on F32: softmax(scale * a + slope * mask) per row (graph/ops.h).
// src[0] = a (a view with dense rows), src[1] = optional mask F32/F16 [ne0, >= ne1, m2, m3]
// broadcast over dims 2/3 (m2 | ne2, m3 | ne3), src[2] = optional sinks F32 [ne2] (one logit
// per head that only enters the denominator). Op params f[0] = scale, f[1] = max_bias (ALiBi
// slope per head i2 when > 0: m0^(i2+1) below n_head_log2, else m1^(2 (i2 - n_head_log2) + 1),
// n_head_log2 = the largest power of two <= ne2; the host computes m0 and m1 in double).
// A row whose largest logit is +-inf gives zeros. A row stays on one worker; rows too long for
// VTCM stream in chunks twice (online max / sum, then output). Header-only, shared by the host
// builder and the kernel (see rowwise_params.h).
#pragma once

#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/rowwise_params.h"

struct htp_softmax_params {
  htp_rw_plan plan;
  htp_divisor m2;  // mask ne[2]: plane i2 reads mask plane i2 % m2
  htp_divisor m3;  // mask ne[3]
  double m0, m1;   // ALiBi slope bases (0 when max_bias <= 0)
};
static_assert(sizeof(htp_softmax_params) <= HTP_KPARAMS_BYTES && sizeof(htp_softmax_params) % 8 == 0,
              "htp_softmax_params must fit the kernel-params blob");

constexpr htp_rw_shape htp_softmax_shape(const htp_tensor& dst, const htp_tensor* mask,
                                         const htp_tensor* sinks) {
  return {dst.ne[0],
          {4, mask != nullptr ? htp_type_geometry(mask->type).type_size : 0u},
          sinks != nullptr ? dst.ne[2] * 4 : 0u,
          0};
}

constexpr uint32_t htp_softmax_n_head_log2(uint32_t ne2) {
  uint32_t p = 1;
  while (p <= ne2 / 2) p *= 2;
  return p;
}

constexpr htp_status htp_softmax_supported(const htp_tensor& dst, const htp_tensor& a, const htp_tensor* mask,
                                           const htp_tensor* sinks) {
  if (!htp_rw_dense_rows(dst, HTP_TYPE_F32) || !htp_rw_dense_rows(a, HTP_TYPE_F32)) return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_same_shape(dst, a)) return HTP_ERR_INVALID_PARAMS;
  if (mask != nullptr) {
    if (!htp_rw_dense_rows(*mask, HTP_TYPE_F32) && !htp_rw_dense_rows(*mask, HTP_TYPE_F16))
      return HTP_ERR_NO_SUPPORT;
    if (mask->ne[0] != dst.ne[0] || mask->ne[1] < dst.ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
        dst.ne[2] % mask->ne[2] != 0 || dst.ne[3] % mask->ne[3] != 0)
      return HTP_ERR_INVALID_PARAMS;
  }
  if (sinks != nullptr) {
    if (!htp_rw_dense_rows(*sinks, HTP_TYPE_F32)) return HTP_ERR_NO_SUPPORT;
    if (sinks->ne[0] != dst.ne[2] || sinks->ne[1] != 1 || sinks->ne[2] != 1 || sinks->ne[3] != 1)
      return HTP_ERR_INVALID_PARAMS;
  }
  return HTP_OK;
}

// The ALiBi bases m0, m1 are left to the caller (they need exp2 in double).
constexpr htp_status htp_softmax_params_build(const htp_tensor& dst, const htp_tensor& a,
                                              const htp_tensor* mask, const htp_tensor* sinks,
                                              uint32_t max_threads, uint32_t vtcm_size,
                                              htp_softmax_params* out) {
  htp_status st = htp_softmax_supported(dst, a, mask, sinks);
  if (st != HTP_OK) return st;
  *out = {};
  st = htp_rw_plan_build(htp_softmax_shape(dst, mask, sinks), dst, false, max_threads, vtcm_size, &out->plan);
  if (st != HTP_OK) return st;
  out->m2 = htp_fastdiv_init(mask != nullptr ? mask->ne[2] : 1);
  out->m3 = htp_fastdiv_init(mask != nullptr ? mask->ne[3] : 1);
  return HTP_OK;
}

// Device side (htp_kparams_match); call after htp_softmax_supported, for a non-empty dst.
// Every integer field is rebuilt and compared. m0 and m1 need exp2 in double, so with
// max_bias > 0 they are taken as sent: they only scale mask values (wrong numbers, never a bad
// access); with max_bias <= 0 they must be 0 like everything else the host did not set.
inline htp_status htp_softmax_params_check(const htp_softmax_params& p, const htp_tensor& dst, const htp_tensor& a,
                                           const htp_tensor* mask, const htp_tensor* sinks, float max_bias,
                                           uint32_t max_threads, uint32_t vtcm_size) {
  htp_softmax_params want{};
  const htp_status st = htp_softmax_params_build(dst, a, mask, sinks, max_threads, vtcm_size, &want);
  if (max_bias > 0.0f) {
    want.m0 = p.m0;
    want.m1 = p.m1;
  }
  return htp_kparams_match(st, want, p);
}
