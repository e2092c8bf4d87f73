// Kernel params of the gated-activation family: SWIGLU, GEGLU, SWIGLU_OAI on F32.
// Two-source form: gate a and up b of dst's shape. Split form (b absent): each row of a holds
// [first half | second half] (a.ne0 = 2 dst.ne0). In both, op params[0] != 0 swaps the roles
// (gate = second, up = first); SWIGLU_OAI takes alpha = f[2], limit = f[3] (graph/ops.h).
// Sources may be views with dense rows. Header-only, shared by host builder and kernel.
#pragma once

#include "htp/abi/htp_op.h"
#include "htp/abi/htp_opcode.h"
#include "htp/abi/rowwise_params.h"

struct htp_act_params {
  htp_rw_plan plan;
  htp_divisor chunks;  // plan.n_chunks: tile -> (row, chunk)
};
static_assert(sizeof(htp_act_params) <= HTP_KPARAMS_BYTES && sizeof(htp_act_params) % 8 == 0,
              "htp_act_params must fit the kernel-params blob");

constexpr htp_rw_shape htp_act_shape(const htp_tensor& dst) { return {dst.ne[0], {4, 4}, 0, 0}; }

// b == nullptr: the split form.
constexpr htp_status htp_act_supported(uint32_t opcode, const htp_tensor& dst, const htp_tensor& a,
                                       const htp_tensor* b) {
  if (opcode != HTP_OP_SWIGLU && opcode != HTP_OP_GEGLU && opcode != HTP_OP_SWIGLU_OAI)
    return HTP_ERR_NO_SUPPORT;
  if (!htp_rw_dense_rows(dst, HTP_TYPE_F32) || !htp_rw_dense_rows(a, HTP_TYPE_F32)) return HTP_ERR_NO_SUPPORT;
  if (b != nullptr) {
    if (!htp_rw_dense_rows(*b, HTP_TYPE_F32)) return HTP_ERR_NO_SUPPORT;
    if (!htp_rw_same_shape(dst, a) || !htp_rw_same_shape(dst, *b)) return HTP_ERR_INVALID_PARAMS;
  } else {
    if ((uint64_t)a.ne[0] != 2ull * dst.ne[0] || a.ne[1] != dst.ne[1] || a.ne[2] != dst.ne[2] ||
        a.ne[3] != dst.ne[3])
      return HTP_ERR_INVALID_PARAMS;
  }
  return HTP_OK;
}

constexpr htp_status htp_act_params_build(uint32_t opcode, const htp_tensor& dst, const htp_tensor& a,
                                          const htp_tensor* b, uint32_t max_threads, uint32_t vtcm_size,
                                          htp_act_params* out) {
  htp_status st = htp_act_supported(opcode, dst, a, b);
  if (st != HTP_OK) return st;
  *out = {};
  st = htp_rw_plan_build(htp_act_shape(dst), dst, true, max_threads, vtcm_size, &out->plan);
  if (st == HTP_OK) out->chunks = htp_fastdiv_init(out->plan.n_chunks);
  return st;
}

// Device side (htp_kparams_match); call after htp_act_supported, for a non-empty dst.
inline htp_status htp_act_params_check(const htp_act_params& p, uint32_t opcode, const htp_tensor& dst,
                                       const htp_tensor& a, const htp_tensor* b, uint32_t max_threads,
                                       uint32_t vtcm_size) {
  htp_act_params want{};
  return htp_kparams_match(htp_act_params_build(opcode, dst, a, b, max_threads, vtcm_size, &want), want, p);
}
