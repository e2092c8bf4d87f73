// RMS_NORM, NORM, L2_NORM on F32, and the fused RMS_NORM_MUL (src[1] = the weight row).
#include "htp-host/op_builders.h"
#include "htp/abi/norm_params.h"

namespace hexllm::htp_host {

htp_status build_norm(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  const htp_tensor* w = op->opcode == HTP_OP_RMS_NORM_MUL ? b.src[1] : nullptr;
  htp_norm_params p{};
  const htp_status st = htp_norm_params_build(op->opcode, *b.dst, *b.src[0], w, b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
