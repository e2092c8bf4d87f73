// SWIGLU, GEGLU, SWIGLU_OAI on F32, two-source and split forms.
#include "htp-host/op_builders.h"
#include "htp/abi/act_params.h"

namespace hexllm::htp_host {

htp_status build_act(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  htp_act_params p{};
  const htp_status st =
      htp_act_params_build(op->opcode, *b.dst, *b.src[0], b.src[1], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
