// SUM_ROWS, ARGSORT and TOP_K on F32 rows.
#include "htp-host/op_builders.h"
#include "htp/abi/reduce_params.h"

namespace hexllm::htp_host {

htp_status build_reduce(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr) return HTP_ERR_NO_SUPPORT;
  htp_reduce_params p{};
  const htp_status st =
      htp_reduce_params_build(op->opcode, op->params, *b.dst, *b.src[0], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
