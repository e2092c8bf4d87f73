// FLASH_ATTN_EXT (F32 Q, F16 K/V, optional F16 mask and F32 sinks, softcap, ALiBi, GQA): the
// libm-derived constants, then the shared planner (htp/abi/flash_attn_params.h).
#include <cmath>

#include "htp-host/op_builders.h"
#include "htp/abi/flash_attn_params.h"

namespace hexllm::htp_host {

htp_status build_flash_attn(const OpBuild& b, htp_op_desc* op) {
  const graph::Tensor& node = b.node;
  if (b.src[0] == nullptr || b.src[1] == nullptr || b.src[2] == nullptr) return HTP_ERR_NO_SUPPORT;
  const float scale = node.param_f(0);
  const float max_bias = node.param_f(1);
  const float softcap = node.param_f(2);
  if (!std::isfinite(scale) || !std::isfinite(max_bias) || !std::isfinite(softcap)) return HTP_ERR_NO_SUPPORT;

  htp_fa_params p{};
  p.softcap = softcap;
  p.q_scale = softcap != 0.0f ? scale / softcap : scale;
  if (max_bias > 0.0f) {
    // ALiBi (Press et al., 2022): geometric slopes over the heads, as the reference computes them.
    const uint32_t n_head = b.src[0]->ne[2];
    if (n_head == 0) return HTP_ERR_NO_SUPPORT;
    const double n_head_log2 = std::exp2(std::floor(std::log2((double)n_head)));
    p.n_head_log2 = (uint32_t)n_head_log2;
    p.alibi_m0 = std::exp2(-max_bias / n_head_log2);
    p.alibi_m1 = std::exp2(-max_bias / 2.0 / n_head_log2);
  }
  const htp_status st =
      htp_fa_plan(*b.dst, *b.src[0], *b.src[1], *b.src[2], b.src[3], b.src[4], b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
