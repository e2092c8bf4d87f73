// Device opcodes: one per device op. Values are wire ABI: append only, never renumber
// (bump HTP_ABI_VERSION if that ever has to change).
#pragma once

#include <stdint.h>

enum htp_opcode : uint32_t {
  HTP_OP_MUL_MAT = 0,
  HTP_OP_MUL_MAT_ID = 1,
  HTP_OP_ADD = 2,
  HTP_OP_SUB = 3,
  HTP_OP_MUL = 4,
  HTP_OP_DIV = 5,
  HTP_OP_ADD_ID = 6,
  HTP_OP_RMS_NORM = 7,
  HTP_OP_NORM = 8,
  HTP_OP_L2_NORM = 9,
  HTP_OP_SCALE = 10,
  HTP_OP_CLAMP = 11,
  HTP_OP_SQR = 12,
  HTP_OP_SQRT = 13,
  HTP_OP_SILU = 14,
  HTP_OP_GELU = 15,
  HTP_OP_GELU_QUICK = 16,
  HTP_OP_SIGMOID = 17,
  HTP_OP_EXP = 18,
  HTP_OP_NEG = 19,
  HTP_OP_SOFTPLUS = 20,
  HTP_OP_TANH = 21,
  HTP_OP_SWIGLU = 22,
  HTP_OP_GEGLU = 23,
  HTP_OP_SWIGLU_OAI = 24,
  HTP_OP_SOFT_MAX = 25,
  HTP_OP_ROPE = 26,
  HTP_OP_FLASH_ATTN_EXT = 27,
  HTP_OP_GET_ROWS = 28,
  HTP_OP_SET_ROWS = 29,
  HTP_OP_CPY = 30,
  HTP_OP_CONT = 31,
  HTP_OP_DUP = 32,
  HTP_OP_CONCAT = 33,
  HTP_OP_REPEAT = 34,
  HTP_OP_SUM_ROWS = 35,
  HTP_OP_ARGSORT = 36,
  HTP_OP_TOP_K = 37,
  HTP_OP_PAD = 38,
  HTP_OP_FILL = 39,
  // Fused ops the host forms from several graph nodes (kernels come later).
  HTP_OP_RMS_NORM_MUL = 40,
  HTP_OP_MUL_MAT_ADD = 41,
  HTP_OP_MUL_MAT_QKV = 42,
  HTP_OP_MUL_MAT_FFN = 43,
  HTP_OP_COUNT
};

inline const char* htp_opcode_name(uint32_t op) {
  switch (op) {
    case HTP_OP_MUL_MAT: return "MUL_MAT";
    case HTP_OP_MUL_MAT_ID: return "MUL_MAT_ID";
    case HTP_OP_ADD: return "ADD";
    case HTP_OP_SUB: return "SUB";
    case HTP_OP_MUL: return "MUL";
    case HTP_OP_DIV: return "DIV";
    case HTP_OP_ADD_ID: return "ADD_ID";
    case HTP_OP_RMS_NORM: return "RMS_NORM";
    case HTP_OP_NORM: return "NORM";
    case HTP_OP_L2_NORM: return "L2_NORM";
    case HTP_OP_SCALE: return "SCALE";
    case HTP_OP_CLAMP: return "CLAMP";
    case HTP_OP_SQR: return "SQR";
    case HTP_OP_SQRT: return "SQRT";
    case HTP_OP_SILU: return "SILU";
    case HTP_OP_GELU: return "GELU";
    case HTP_OP_GELU_QUICK: return "GELU_QUICK";
    case HTP_OP_SIGMOID: return "SIGMOID";
    case HTP_OP_EXP: return "EXP";
    case HTP_OP_NEG: return "NEG";
    case HTP_OP_SOFTPLUS: return "SOFTPLUS";
    case HTP_OP_TANH: return "TANH";
    case HTP_OP_SWIGLU: return "SWIGLU";
    case HTP_OP_GEGLU: return "GEGLU";
    case HTP_OP_SWIGLU_OAI: return "SWIGLU_OAI";
    case HTP_OP_SOFT_MAX: return "SOFT_MAX";
    case HTP_OP_ROPE: return "ROPE";
    case HTP_OP_FLASH_ATTN_EXT: return "FLASH_ATTN_EXT";
    case HTP_OP_GET_ROWS: return "GET_ROWS";
    case HTP_OP_SET_ROWS: return "SET_ROWS";
    case HTP_OP_CPY: return "CPY";
    case HTP_OP_CONT: return "CONT";
    case HTP_OP_DUP: return "DUP";
    case HTP_OP_CONCAT: return "CONCAT";
    case HTP_OP_REPEAT: return "REPEAT";
    case HTP_OP_SUM_ROWS: return "SUM_ROWS";
    case HTP_OP_ARGSORT: return "ARGSORT";
    case HTP_OP_TOP_K: return "TOP_K";
    case HTP_OP_PAD: return "PAD";
    case HTP_OP_FILL: return "FILL";
    case HTP_OP_RMS_NORM_MUL: return "RMS_NORM_MUL";
    case HTP_OP_MUL_MAT_ADD: return "MUL_MAT_ADD";
    case HTP_OP_MUL_MAT_QKV: return "MUL_MAT_QKV";
    case HTP_OP_MUL_MAT_FFN: return "MUL_MAT_FFN";
    default: return "UNKNOWN_OP";
  }
}
