// CPY, CONT, DUP, CONCAT, REPEAT, PAD, FILL: ROWS (VTCM pipeline) or FLAT (CPY-family fallback).
#include "htp-host/op_builders.h"
#include "htp/abi/copy_params.h"

namespace hexllm::htp_host {

htp_status build_copy(const OpBuild& b, htp_op_desc* op) {
  const uint32_t opcode = op->opcode;
  const htp_tensor* src0 = opcode == HTP_OP_FILL ? nullptr : b.src[0];
  const htp_tensor* src1 = opcode == HTP_OP_CONCAT ? b.src[1] : nullptr;
  if (opcode != HTP_OP_FILL && src0 == nullptr) return HTP_ERR_NO_SUPPORT;
  htp_copy_params p{};
  const htp_status st = htp_copy_params_build(opcode, op->params, *b.dst, src0, src1, b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
