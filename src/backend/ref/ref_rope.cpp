// ROPE: rotates pairs of each head by position-dependent angles; dims past n_dims pass
// through. YaRN (Peng et al., 2023, "YaRN: Efficient Context Window Extension of Large
// Language Models") blends interpolated and extrapolated angles per dimension and scales the
// magnitude.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "backend/ref/ref_common.h"
#include "graph/ops.h"

namespace hexllm::backend::ref {

namespace {

struct Rope {
  int n_dims, mode, n_ctx_orig;
  double freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};

// The parameter layout of graph::rope.
Rope rope_params(const Tensor& node) {
  Rope p;
  p.n_dims = node.params[0];
  p.mode = node.params[1];
  p.n_ctx_orig = node.params[2];
  p.freq_base = node.param_f(3);
  p.freq_scale = node.param_f(4);
  p.ext_factor = node.param_f(5);
  p.attn_factor = node.param_f(6);
  p.beta_fast = node.param_f(7);
  p.beta_slow = node.param_f(8);
  return p;
}

// The pair index whose wavelength 2 pi base^(2i/n_dims) fits n_rot times into n_ctx_orig.
double yarn_corr_dim(const Rope& p, double n_rot) {
  return p.n_dims * std::log(p.n_ctx_orig / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(p.freq_base));
}

struct Angle {
  double cos, sin;  // already scaled by the magnitude factor
};

// Angle of pair i at position pos.
Angle rope_angle(const Rope& p, double pos, int i, double freq_factor) {
  const double theta_extrap = pos * std::pow(p.freq_base, -2.0 * i / p.n_dims) / freq_factor;
  const double theta_interp = p.freq_scale * theta_extrap;
  double theta = theta_interp;
  double mscale = p.attn_factor;
  if (p.ext_factor != 0.0) {
    // Pairs below the beta_fast dim (many rotations in the original context) keep their
    // extrapolated angle, pairs above beta_slow are interpolated; linear ramp in between.
    const double low = std::max(0.0, std::floor(yarn_corr_dim(p, p.beta_fast)));
    const double high = std::min(p.n_dims - 1.0, std::ceil(yarn_corr_dim(p, p.beta_slow)));
    const double ramp = 1.0 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
    const double mix = ramp * p.ext_factor;
    theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
    mscale *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);  // attention temperature sqrt(1/t)
  }
  return {std::cos(theta) * mscale, std::sin(theta) * mscale};
}

}  // namespace

void compute_rope(const Tensor& node) {
  if (node.op != Op::ROPE) unsupported(node);
  const Tensor& a = *node.src[0];
  const Tensor& pos = *node.src[1];
  const Tensor* freq_factors = node.src[2];
  const Rope p = rope_params(node);
  const int half = p.n_dims / 2;
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    const double position = (double)get_i(pos, i2);
    const std::vector<float> x = get_row(a, i1, i2, i3);
    std::vector<float> y = x;  // dims past n_dims pass through
    for (int i = 0; i < half; i++) {
      const double ff = freq_factors != nullptr ? get_f(*freq_factors, i, 0, 0, 0) : 1.0;
      const Angle r = rope_angle(p, position, i, ff);
      // Normal mode rotates (2i, 2i + 1); NEOX rotates (i, i + n_dims / 2).
      const size_t j0 = p.mode == graph::kRopeNeox ? (size_t)i : (size_t)(2 * i);
      const size_t j1 = p.mode == graph::kRopeNeox ? (size_t)(i + half) : (size_t)(2 * i + 1);
      y[j0] = (float)(x[j0] * r.cos - x[j1] * r.sin);
      y[j1] = (float)(x[j0] * r.sin + x[j1] * r.cos);
    }
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
