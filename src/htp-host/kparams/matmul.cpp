// MUL_MAT and MUL_MAT_ID with a weight repacked into tiles at load; other src0 (activation
// matrices, weights left untiled) are refused and run on the reference backend. The fused ops
// (MUL_MAT_ADD, MUL_MAT_QKV, MUL_MAT_FFN, MUL_MAT_ID_FFN) use the slots of matmul_fused_params.h;
// one that does not fit VTCM (or a dense FFN whose chunks would be short) is refused here, and
// the host then runs its nodes unfused.
#include "htp-host/op_builders.h"
#include "htp/abi/matmul_fused_params.h"

namespace hexllm::htp_host {

htp_status build_matmul(const OpBuild& b, htp_op_desc* op) {
  if (htp_mmf_is_fused(op->opcode)) {
    htp_mmf_tensors t{};
    t.x = b.src[0];
    for (uint32_t k = 0; k < HTP_MMF_MAX_PARTS; ++k) {
      t.w[k] = b.src[1 + k];
      t.addend[k] = b.src[HTP_MMF_ADDEND_SRC + k];
      t.out[k] = k == 0 ? b.dst : b.dst_ext[k - 1];
    }
    t.ids = b.src[HTP_MMF_IDS_SRC];
    htp_mmf_params p{};
    const htp_status st =
        htp_mmf_params_build(op->opcode, op->params, t, b.n_threads, b.vtcm_size, &p, b.gemm);
    if (st == HTP_OK) htp_kparams_set(op, p);
    return st;
  }
  if (op->opcode != HTP_OP_MUL_MAT && op->opcode != HTP_OP_MUL_MAT_ID) return HTP_ERR_NO_SUPPORT;
  const bool is_id = op->opcode == HTP_OP_MUL_MAT_ID;
  if (b.src[0] == nullptr || b.src[1] == nullptr || (is_id && b.src[2] == nullptr)) return HTP_ERR_NO_SUPPORT;
  htp_mm_params p{};
  const htp_status st = htp_mm_params_build(op->opcode, *b.dst, *b.src[0], *b.src[1], is_id ? b.src[2] : nullptr,
                                            b.n_threads, b.vtcm_size, &p, b.gemm);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
