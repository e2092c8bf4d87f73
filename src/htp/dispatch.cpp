// Opcode -> op family entry point, from the op table (abi/htp_opcode.h).
#include "htp/dispatch.h"

namespace hexllm::htp {

htp_status dispatch_op(htp_op_ctx* ctx) {
  switch (ctx->op->opcode) {
#define HTP_DISPATCH_CASE(name, value, family) \
  case HTP_OP_##name:                          \
    return op_##family(ctx);
    HTP_ALL_OPS(HTP_DISPATCH_CASE)
#undef HTP_DISPATCH_CASE
    default: return HTP_ERR_NO_SUPPORT;
  }
}

namespace {

// The families that partition across devices (each through op_device_rows or its own unit).
constexpr const char* kSplitFamilies[] = {"matmul", "unary", "act", "norm", "softmax"};

constexpr bool same(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

constexpr bool family_splits(const char* family) {
  for (const char* f : kSplitFamilies)
    if (same(f, family)) return true;
  return false;
}

}  // namespace

bool dispatch_splits(uint32_t opcode) {
  switch (opcode) {
#define HTP_SPLITS_CASE(name, value, family) \
  case HTP_OP_##name:                        \
    return family_splits(#family);
    HTP_ALL_OPS(HTP_SPLITS_CASE)
#undef HTP_SPLITS_CASE
    default: return false;
  }
}

}  // namespace hexllm::htp
