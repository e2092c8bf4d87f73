// Routes one validated op to its family's entry point (src/htp/ops/ops.h).
#pragma once

#include "htp/ops/ops.h"

namespace hexllm::htp {

// HTP_ERR_NO_SUPPORT for an opcode without a family.
htp_status dispatch_op(htp_op_ctx* ctx);

// Whether the opcode's family splits its rows across devices (ctx->mdev); the others run whole
// on device 0 of a group.
bool dispatch_splits(uint32_t opcode);

}  // namespace hexllm::htp
