// Host side of each device op family: checks that the device can run a graph node and
// precomputes its kernel params (shapes, tiling, thread counts, fastdiv constants, VTCM layout)
// with the same header-only builders the kernel uses (src/htp/abi/*_params.h).
#pragma once

#include "graph/tensor.h"
#include "htp/abi/htp_abi.h"

namespace hexllm::htp_host {

struct OpBuild {
  const graph::Tensor& node;
  const htp_tensor* src[HTP_MAX_SRC];  // device descriptors; nullptr where the node has no source
  const htp_tensor* dst;
  const htp_tensor* dst_ext[HTP_MAX_DST - 1];  // a fused op's further outputs; nullptr where none
  uint32_t n_threads;  // the session's workers
  uint32_t vtcm_size;  // the session's VTCM bytes
  htp_gemm_prefs gemm;  // the session's GEMM preferences (htp_hwinfo)
};

// Each fills op->kparams (and may adjust op->params); opcode, params, src and dst are set by the
// caller. Returns HTP_OK or why the device cannot take the node.
using OpBuilder = htp_status (*)(const OpBuild& b, htp_op_desc* op);

#define HEXLLM_OP_BUILDER(family) htp_status build_##family(const OpBuild& b, htp_op_desc* op);
HTP_OP_FAMILIES(HEXLLM_OP_BUILDER)
#undef HEXLLM_OP_BUILDER

struct OpRoute {
  uint32_t opcode;  // HTP_OP_COUNT: the device has no such op
  OpBuilder build;
};

// The device opcode and builder of a graph op.
OpRoute route_op(graph::Op op);

}  // namespace hexllm::htp_host
