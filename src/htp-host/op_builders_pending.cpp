// Weak stand-ins for op families whose host builders have not landed yet: the device does not
// take those nodes, and the scheduler gives them to the reference backend. Each family's file
// in kparams/ overrides its builder.
#include "htp-host/op_builders.h"

namespace hexllm::htp_host {

#define HEXLLM_PENDING_BUILDER(name) \
  __attribute__((weak)) htp_status name(const OpBuild&, htp_op_desc*) { return HTP_ERR_NO_SUPPORT; }

HEXLLM_PENDING_BUILDER(build_matmul)
HEXLLM_PENDING_BUILDER(build_binary)
HEXLLM_PENDING_BUILDER(build_unary)
HEXLLM_PENDING_BUILDER(build_norm)
HEXLLM_PENDING_BUILDER(build_act)
HEXLLM_PENDING_BUILDER(build_softmax)
HEXLLM_PENDING_BUILDER(build_rope)
HEXLLM_PENDING_BUILDER(build_flash_attn)
HEXLLM_PENDING_BUILDER(build_rows)
HEXLLM_PENDING_BUILDER(build_copy)
HEXLLM_PENDING_BUILDER(build_reduce)

#undef HEXLLM_PENDING_BUILDER

}  // namespace hexllm::htp_host
