// GET_ROWS (plain, quantized or tiled src -> F32) and SET_ROWS (F32 -> F32/F16/BF16) params.
#include "htp-host/op_builders.h"
#include "htp/abi/rows_params.h"

namespace hexllm::htp_host {

htp_status build_rows(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr || b.src[1] == nullptr) return HTP_ERR_NO_SUPPORT;
  htp_rows_params p{};
  const htp_status st =
      htp_rows_params_build(op->opcode, *b.dst, *b.src[0], *b.src[1], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
