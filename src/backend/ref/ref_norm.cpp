// Row normalizations, with sums in double.
#include <algorithm>
#include <cmath>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

void compute_norm(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const double eps = node.param_f(0);
  const double n = (double)a.ne[0];
  std::vector<float> y((size_t)a.ne[0]);
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<float> x = get_row(a, i1, i2, i3);
    double sum = 0.0, sum_sq = 0.0;
    for (float v : x) sum += v;
    for (float v : x) sum_sq += (double)v * v;
    switch (node.op) {
      case Op::RMS_NORM: {  // x / sqrt(mean(x^2) + eps)
        const double rms = std::sqrt(sum_sq / n + eps);
        for (size_t i = 0; i < x.size(); i++) y[i] = (float)(x[i] / rms);
        break;
      }
      case Op::NORM: {  // (x - mean) / sqrt(var + eps)
        const double mean = sum / n;
        double var = 0.0;
        for (float v : x) var += (v - mean) * (v - mean);
        var /= n;
        const double sd = std::sqrt(var + eps);
        for (size_t i = 0; i < x.size(); i++) y[i] = (float)((x[i] - mean) / sd);
        break;
      }
      case Op::L2_NORM: {  // x / max(||x||, eps)
        const double len = std::max(std::sqrt(sum_sq), eps);
        for (size_t i = 0; i < x.size(); i++) y[i] = (float)(x[i] / len);
        break;
      }
      default: unsupported(node);
    }
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
