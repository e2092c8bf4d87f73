#include "htp-host/op_builders.h"

namespace hexllm::htp_host {

OpRoute route_op(graph::Op op) {
  using graph::Op;
  switch (op) {
    case Op::MUL_MAT: return {HTP_OP_MUL_MAT, build_matmul};
    case Op::MUL_MAT_ID: return {HTP_OP_MUL_MAT_ID, build_matmul};
    case Op::ADD: return {HTP_OP_ADD, build_binary};
    case Op::SUB: return {HTP_OP_SUB, build_binary};
    case Op::MUL: return {HTP_OP_MUL, build_binary};
    case Op::DIV: return {HTP_OP_DIV, build_binary};
    case Op::ADD_ID: return {HTP_OP_ADD_ID, build_binary};
    case Op::RMS_NORM: return {HTP_OP_RMS_NORM, build_norm};
    case Op::NORM: return {HTP_OP_NORM, build_norm};
    case Op::L2_NORM: return {HTP_OP_L2_NORM, build_norm};
    case Op::SCALE: return {HTP_OP_SCALE, build_unary};
    case Op::CLAMP: return {HTP_OP_CLAMP, build_unary};
    case Op::SQR: return {HTP_OP_SQR, build_unary};
    case Op::SQRT: return {HTP_OP_SQRT, build_unary};
    case Op::SILU: return {HTP_OP_SILU, build_unary};
    case Op::GELU: return {HTP_OP_GELU, build_unary};
    case Op::GELU_QUICK: return {HTP_OP_GELU_QUICK, build_unary};
    case Op::SIGMOID: return {HTP_OP_SIGMOID, build_unary};
    case Op::EXP: return {HTP_OP_EXP, build_unary};
    case Op::NEG: return {HTP_OP_NEG, build_unary};
    case Op::SOFTPLUS: return {HTP_OP_SOFTPLUS, build_unary};
    case Op::TANH: return {HTP_OP_TANH, build_unary};
    case Op::SWIGLU: return {HTP_OP_SWIGLU, build_act};
    case Op::GEGLU: return {HTP_OP_GEGLU, build_act};
    case Op::SWIGLU_OAI: return {HTP_OP_SWIGLU_OAI, build_act};
    case Op::SOFT_MAX: return {HTP_OP_SOFT_MAX, build_softmax};
    case Op::ROPE: return {HTP_OP_ROPE, build_rope};
    case Op::FLASH_ATTN_EXT: return {HTP_OP_FLASH_ATTN_EXT, build_flash_attn};
    case Op::GET_ROWS: return {HTP_OP_GET_ROWS, build_rows};
    case Op::SET_ROWS: return {HTP_OP_SET_ROWS, build_rows};
    case Op::CPY: return {HTP_OP_CPY, build_copy};
    case Op::CONT: return {HTP_OP_CONT, build_copy};
    case Op::DUP: return {HTP_OP_DUP, build_copy};
    case Op::CONCAT: return {HTP_OP_CONCAT, build_copy};
    case Op::REPEAT: return {HTP_OP_REPEAT, build_copy};
    case Op::PAD: return {HTP_OP_PAD, build_copy};
    case Op::FILL: return {HTP_OP_FILL, build_copy};
    case Op::SUM_ROWS: return {HTP_OP_SUM_ROWS, build_reduce};
    case Op::ARGSORT: return {HTP_OP_ARGSORT, build_reduce};
    case Op::TOP_K: return {HTP_OP_TOP_K, build_reduce};
    default: return {HTP_OP_COUNT, nullptr};
  }
}

}  // namespace hexllm::htp_host
