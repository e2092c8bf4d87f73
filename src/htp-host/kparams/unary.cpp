// SCALE, CLAMP, SQR, SQRT, SILU, GELU, GELU_QUICK, SIGMOID, EXP, NEG, SOFTPLUS, TANH on F32.
#include "htp-host/op_builders.h"
#include "htp/abi/unary_params.h"

namespace hexllm::htp_host {

htp_status build_unary(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  htp_unary_params p{};
  const htp_status st = htp_unary_params_build(op->opcode, *b.dst, *b.src[0], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
