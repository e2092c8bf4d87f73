// MUL_MAT and MUL_MAT_ID with a weight repacked into tiles at load; other src0 (activation
// matrices, weights left untiled) are refused and run on the reference backend.
#include "htp-host/op_builders.h"
#include "htp/abi/matmul_params.h"

namespace hexllm::htp_host {

htp_status build_matmul(const OpBuild& b, htp_op_desc* op) {
  if (op->opcode != HTP_OP_MUL_MAT && op->opcode != HTP_OP_MUL_MAT_ID) return HTP_ERR_NO_SUPPORT;
  const bool is_id = op->opcode == HTP_OP_MUL_MAT_ID;
  if (b.src[0] == nullptr || b.src[1] == nullptr || (is_id && b.src[2] == nullptr)) return HTP_ERR_NO_SUPPORT;
  htp_mm_params p{};
  const htp_status st = htp_mm_params_build(op->opcode, *b.dst, *b.src[0], *b.src[1], is_id ? b.src[2] : nullptr,
                                            b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
