// ROPE (normal and NEOX, freq factors, YaRN): the libm-derived per-op constants, then the
// shared planner (htp/abi/rope_params.h).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "graph/ops.h"
#include "htp-host/op_builders.h"
#include "htp/abi/rope_params.h"

namespace hexllm::htp_host {

namespace {

// The pair index whose wavelength 2 pi base^(2i/n_dims) fits n_rot times into n_ctx_orig
// (the YaRN correction dimension; same formula as the reference backend).
double yarn_corr_dim(int n_dims, int n_ctx_orig, double base, double n_rot) {
  return n_dims * std::log(n_ctx_orig / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

}  // namespace

htp_status build_rope(const OpBuild& b, htp_op_desc* op) {
  const graph::Tensor& node = b.node;
  if (b.src[0] == nullptr || b.src[1] == nullptr) return HTP_ERR_NO_SUPPORT;
  const int n_dims = node.params[0];
  const int mode = node.params[1];
  const int n_ctx_orig = node.params[2];
  const double freq_base = node.param_f(3);
  const double freq_scale = node.param_f(4);
  const double ext_factor = node.param_f(5);
  const double attn_factor = node.param_f(6);
  const double beta_fast = node.param_f(7);
  const double beta_slow = node.param_f(8);
  if (n_dims <= 0 || mode < 0) return HTP_ERR_NO_SUPPORT;
  if (!(freq_base > 0.0) || !(freq_scale > 0.0) || !std::isfinite(freq_base) || !std::isfinite(freq_scale) ||
      !std::isfinite(ext_factor) || !std::isfinite(attn_factor))
    return HTP_ERR_NO_SUPPORT;

  htp_rope_params p{};
  p.theta_scale = std::pow(freq_base, -2.0 / n_dims);
  p.freq_scale = (float)freq_scale;
  p.ext_factor = (float)ext_factor;
  p.mscale = attn_factor;
  p.corr_low = 0.0f;
  p.corr_denom = 1.0;
  if (ext_factor != 0.0) {
    if (n_ctx_orig <= 0 || !std::isfinite(beta_fast) || !std::isfinite(beta_slow)) return HTP_ERR_NO_SUPPORT;
    const double low = std::max(0.0, std::floor(yarn_corr_dim(n_dims, n_ctx_orig, freq_base, beta_fast)));
    const double high =
        std::min(n_dims - 1.0, std::ceil(yarn_corr_dim(n_dims, n_ctx_orig, freq_base, beta_slow)));
    if (!std::isfinite(low) || !std::isfinite(high)) return HTP_ERR_NO_SUPPORT;
    p.corr_low = (float)low;  // an integer below n_dims: exact in float
    p.corr_denom = std::max(0.001, high - low);
    p.mscale *= 1.0 + 0.1 * std::log(1.0 / freq_scale);  // attention temperature sqrt(1/t)
  }
  const htp_tensor* ff = b.src[2];
  const htp_status st = htp_rope_plan(*b.dst, *b.src[0], *b.src[1], ff, (uint32_t)n_dims, (uint32_t)mode,
                                      b.n_threads, b.vtcm_size, &p);
  if (st == HTP_OK) htp_kparams_set(op, p);
  return st;
}

}  // namespace hexllm::htp_host
