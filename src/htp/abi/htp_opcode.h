// The device ops: one table from which the opcode enum, the names, the device dispatch
// (htp/dispatch.cpp), the family entry points (htp/ops/ops.h), the host's routing of graph ops
// and its param builders (htp-host/op_builders.h) are all generated. Adding an op is one row
// here plus its kernel and its param builder.
//
// Opcode values are wire ABI: append only, never renumber (bump HTP_ABI_VERSION if that ever
// has to change).
#pragma once

#include <stdint.h>

// X(family): one kernel file src/htp/ops/<family>.cpp defines op_<family>, and one host file
// src/htp-host/kparams/<family>.cpp defines build_<family>. A family without either is a link
// error, never a silent fallback.
#define HTP_OP_FAMILIES(X) \
  X(matmul)                \
  X(binary)                \
  X(unary)                 \
  X(norm)                  \
  X(act)                   \
  X(softmax)               \
  X(rope)                  \
  X(flash_attn)            \
  X(rows)                  \
  X(copy)                  \
  X(reduce)

// X(NAME, opcode, family): ops that have a graph op of the same name (graph::Op::NAME).
#define HTP_GRAPH_OPS(X)          \
  X(MUL_MAT, 0, matmul)           \
  X(MUL_MAT_ID, 1, matmul)        \
  X(ADD, 2, binary)               \
  X(SUB, 3, binary)               \
  X(MUL, 4, binary)               \
  X(DIV, 5, binary)               \
  X(ADD_ID, 6, binary)            \
  X(RMS_NORM, 7, norm)            \
  X(NORM, 8, norm)                \
  X(L2_NORM, 9, norm)             \
  X(SCALE, 10, unary)             \
  X(CLAMP, 11, unary)             \
  X(SQR, 12, unary)               \
  X(SQRT, 13, unary)              \
  X(SILU, 14, unary)              \
  X(GELU, 15, unary)              \
  X(GELU_QUICK, 16, unary)        \
  X(SIGMOID, 17, unary)           \
  X(EXP, 18, unary)               \
  X(NEG, 19, unary)               \
  X(SOFTPLUS, 20, unary)          \
  X(TANH, 21, unary)              \
  X(SWIGLU, 22, act)              \
  X(GEGLU, 23, act)               \
  X(SWIGLU_OAI, 24, act)          \
  X(SOFT_MAX, 25, softmax)        \
  X(ROPE, 26, rope)               \
  X(FLASH_ATTN_EXT, 27, flash_attn) \
  X(GET_ROWS, 28, rows)           \
  X(SET_ROWS, 29, rows)           \
  X(CPY, 30, copy)                \
  X(CONT, 31, copy)               \
  X(DUP, 32, copy)                \
  X(CONCAT, 33, copy)             \
  X(REPEAT, 34, copy)             \
  X(SUM_ROWS, 35, reduce)         \
  X(ARGSORT, 36, reduce)          \
  X(TOP_K, 37, reduce)            \
  X(PAD, 38, copy)                \
  X(FILL, 39, copy)

// X(NAME, opcode, family): fused ops the host forms from several graph nodes.
#define HTP_FUSED_OPS(X)        \
  X(RMS_NORM_MUL, 40, norm)     \
  X(MUL_MAT_ADD, 41, matmul)    \
  X(MUL_MAT_QKV, 42, matmul)    \
  X(MUL_MAT_FFN, 43, matmul)    \
  X(MUL_MAT_ID_FFN, 44, matmul)

#define HTP_ALL_OPS(X) HTP_GRAPH_OPS(X) HTP_FUSED_OPS(X)

enum htp_opcode : uint32_t {
#define HTP_OPCODE_ENUM(name, value, family) HTP_OP_##name = value,
  HTP_ALL_OPS(HTP_OPCODE_ENUM)
#undef HTP_OPCODE_ENUM
  HTP_OP_COUNT
};

inline const char* htp_opcode_name(uint32_t op) {
  switch (op) {
#define HTP_OPCODE_NAME(name, value, family) \
  case HTP_OP_##name:                        \
    return #name;
    HTP_ALL_OPS(HTP_OPCODE_NAME)
#undef HTP_OPCODE_NAME
    default: return "UNKNOWN_OP";
  }
}
