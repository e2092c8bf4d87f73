// Elementwise unary ops, evaluated in double and rounded once.
#include <algorithm>
#include <cmath>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double unary(const Tensor& node, double x) {
  switch (node.op) {
    case Op::SCALE: return node.param_f(0) * x + node.param_f(1);
    case Op::CLAMP: return std::clamp(x, (double)node.param_f(0), (double)node.param_f(1));
    case Op::SQR: return x * x;
    case Op::SQRT: return std::sqrt(x);
    case Op::SILU: return x * sigmoid(x);
    case Op::GELU: return gelu(x);
    case Op::GELU_QUICK: return x * sigmoid(1.702 * x);
    case Op::SIGMOID: return sigmoid(x);
    case Op::EXP: return std::exp(x);
    case Op::NEG: return -x;
    // log(1 + e^x), written so that large |x| neither overflows nor loses the small term.
    case Op::SOFTPLUS: return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
    case Op::TANH: return std::tanh(x);
    default: unsupported(node);
  }
}

}  // namespace

// Tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double gelu(double x) {
  const double sqrt_2_over_pi = 0.79788456080286535588;
  return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

void compute_unary(const Tensor& node) {
  const Tensor& a = *node.src[0];
  std::vector<float> x((size_t)a.ne[0]), y((size_t)a.ne[0]);
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    get_row(a, i1, i2, i3, x.data());
    for (size_t i = 0; i < x.size(); i++) y[i] = (float)unary(node, x[i]);
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
