// Routes one validated op to its family's entry point (src/htp/ops/ops.h).
#pragma once

#include "htp/ops/ops.h"

namespace hexllm::htp {

// HTP_ERR_NO_SUPPORT for an opcode without a family.
htp_status dispatch_op(htp_op_ctx* ctx);

}  // namespace hexllm::htp
