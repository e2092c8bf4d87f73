// Opcode -> op family entry point.
#include "htp/dispatch.h"

namespace hexllm::htp {

htp_status dispatch_op(htp_op_ctx* ctx) {
  switch (ctx->op->opcode) {
    case HTP_OP_MUL_MAT:
    case HTP_OP_MUL_MAT_ID:
    case HTP_OP_MUL_MAT_ADD:
    case HTP_OP_MUL_MAT_QKV:
    case HTP_OP_MUL_MAT_FFN:
      return op_matmul(ctx);
    case HTP_OP_ADD:
    case HTP_OP_SUB:
    case HTP_OP_MUL:
    case HTP_OP_DIV:
    case HTP_OP_ADD_ID:
      return op_binary(ctx);
    case HTP_OP_SCALE:
    case HTP_OP_CLAMP:
    case HTP_OP_SQR:
    case HTP_OP_SQRT:
    case HTP_OP_SILU:
    case HTP_OP_GELU:
    case HTP_OP_GELU_QUICK:
    case HTP_OP_SIGMOID:
    case HTP_OP_EXP:
    case HTP_OP_NEG:
    case HTP_OP_SOFTPLUS:
    case HTP_OP_TANH:
      return op_unary(ctx);
    case HTP_OP_RMS_NORM:
    case HTP_OP_NORM:
    case HTP_OP_L2_NORM:
    case HTP_OP_RMS_NORM_MUL:
      return op_norm(ctx);
    case HTP_OP_SWIGLU:
    case HTP_OP_GEGLU:
    case HTP_OP_SWIGLU_OAI:
      return op_act(ctx);
    case HTP_OP_SOFT_MAX:
      return op_softmax(ctx);
    case HTP_OP_ROPE:
      return op_rope(ctx);
    case HTP_OP_FLASH_ATTN_EXT:
      return op_flash_attn(ctx);
    case HTP_OP_GET_ROWS:
    case HTP_OP_SET_ROWS:
      return op_rows(ctx);
    case HTP_OP_CPY:
    case HTP_OP_CONT:
    case HTP_OP_DUP:
    case HTP_OP_CONCAT:
    case HTP_OP_REPEAT:
    case HTP_OP_PAD:
    case HTP_OP_FILL:
      return op_copy(ctx);
    case HTP_OP_SUM_ROWS:
    case HTP_OP_ARGSORT:
    case HTP_OP_TOP_K:
      return op_reduce(ctx);
    default:
      return HTP_ERR_NO_SUPPORT;
  }
}

}  // namespace hexllm::htp
