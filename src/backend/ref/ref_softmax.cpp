// SOFT_MAX: softmax(scale * x + slope * mask) per row, with an optional sink logit that only
// enters the denominator. Exponentials and the sum in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

void compute_softmax(const Tensor& node) {
  if (node.op != Op::SOFT_MAX) unsupported(node);
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const Tensor* sinks = node.src[2];
  const double scale = node.param_f(0);
  const float max_bias = node.param_f(1);
  const size_t n = (size_t)a.ne[0];
  if (n == 0) return;
  std::vector<double> s(n);
  std::vector<float> y(n);
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    const double slope = alibi_slope(max_bias, i2, a.ne[2]);
    const std::vector<float> x = get_row(a, i1, i2, i3);
    for (size_t j = 0; j < n; j++) {
      s[j] = scale * x[j];
      if (mask != nullptr) s[j] += slope * get_f(*mask, (int64_t)j, i1, i2 % mask->ne[2], i3 % mask->ne[3]);
    }
    const double sink =
        sinks != nullptr ? get_f(*sinks, i2, 0, 0, 0) : -std::numeric_limits<double>::infinity();
    const double max = std::max(sink, *std::max_element(s.begin(), s.end()));
    double sum = std::exp(sink - max);
    for (size_t j = 0; j < n; j++) sum += std::exp(s[j] - max);
    // A row whose every logit is -inf has no distribution: it gives zeros.
    for (size_t j = 0; j < n; j++) y[j] = std::isinf(max) ? 0.0f : (float)(std::exp(s[j] - max) / sum);
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
