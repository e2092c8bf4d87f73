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

}  // namespace hexllm::htp
