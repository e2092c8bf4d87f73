// Weak stand-ins for op families whose kernel file does not exist yet. A family's own file
// (ops/<family>.cpp) defines the strong symbol and replaces these at link time. CMake lists
// this file last in the archive so that the strong definitions are the ones the linker pulls.
#include "htp/ops/ops.h"

namespace hexllm::htp {

#define HTP_NOT_IMPLEMENTED(name) \
  __attribute__((weak)) htp_status name(htp_op_ctx*) { return HTP_ERR_NO_SUPPORT; }

HTP_NOT_IMPLEMENTED(op_matmul)
HTP_NOT_IMPLEMENTED(op_binary)
HTP_NOT_IMPLEMENTED(op_unary)
HTP_NOT_IMPLEMENTED(op_norm)
HTP_NOT_IMPLEMENTED(op_act)
HTP_NOT_IMPLEMENTED(op_softmax)
HTP_NOT_IMPLEMENTED(op_rope)
HTP_NOT_IMPLEMENTED(op_flash_attn)
HTP_NOT_IMPLEMENTED(op_rows)
HTP_NOT_IMPLEMENTED(op_copy)
HTP_NOT_IMPLEMENTED(op_reduce)

#undef HTP_NOT_IMPLEMENTED

}  // namespace hexllm::htp
