// ADD, SUB, MUL, DIV on F32 with src1 broadcast, and ADD_ID (src1 rows chosen by ids).
#include "htp-host/op_builders.h"
#include "htp/abi/binary_params.h"

namespace hexllm::htp_host {

htp_status build_binary(const OpBuild& b, htp_op_desc* op) {
  if (op->opcode == HTP_OP_ADD_ID) {
    if (b.src[0] == nullptr || b.src[1] == nullptr || b.src[2] == nullptr) return HTP_ERR_NO_SUPPORT;
    htp_add_id_params p{};
    const htp_status st =
        htp_add_id_params_build(*b.dst, *b.src[0], *b.src[1], *b.src[2], b.n_threads, b.vtcm_size, &p);
    if (st == HTP_OK) htp_kparams_set(op, p);
    return st;
  }
  if (b.src[0] == nullptr || b.src[1] == nullptr) return HTP_ERR_NO_SUPPORT;
  htp_binary_params p{};
  const htp_status st = htp_binary_params_build(*b.dst, *b.src[0], *b.src[1], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
