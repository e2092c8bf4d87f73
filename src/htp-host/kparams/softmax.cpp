// SOFT_MAX on F32 with optional F32/F16 mask (broadcast over dims 2/3), ALiBi and sinks.
#include <cmath>
#include <cstring>

#include "htp-host/op_builders.h"
#include "htp/abi/softmax_params.h"

namespace hexllm::htp_host {

htp_status build_softmax(const OpBuild& b, htp_op_desc* op) {
  if (b.src[0] == nullptr) return HTP_ERR_INVALID_PARAMS;
  htp_softmax_params p{};
  const htp_status st =
      htp_softmax_params_build(*b.dst, *b.src[0], b.src[1], b.src[2], b.n_threads, b.vtcm_size, &p);
  if (st != HTP_OK) return st;
  float max_bias = 0.0f;
  std::memcpy(&max_bias, &op->params[1], sizeof max_bias);
  if (max_bias > 0.0f) {  // the reference's slope bases, in double
    const double n_head_log2 = htp_softmax_n_head_log2(b.dst->ne[2]);
    p.m0 = std::exp2(-static_cast<double>(max_bias) / n_head_log2);
    p.m1 = std::exp2(-static_cast<double>(max_bias) / 2.0 / n_head_log2);
  }
  htp_kparams_set(op, p);
  return HTP_OK;
}

}  // namespace hexllm::htp_host
