// Gated linear units: act(gate) * up, with the gate and up rows from two tensors or from
// the two halves of one row.
#include <algorithm>
#include <cmath>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

namespace {

double gated(const Tensor& node, double gate, double up) {
  switch (node.op) {
    case Op::SWIGLU: return gate / (1.0 + std::exp(-gate)) * up;
    case Op::GEGLU: return gelu(gate) * up;
    case Op::SWIGLU_OAI: {
      // gpt-oss: x = min(gate, limit), y = clamp(up, -limit, limit), x * sigmoid(alpha x) * (y + 1).
      const double alpha = node.param_f(2), limit = node.param_f(3);
      const double x = std::min(gate, limit);
      const double y = std::clamp(up, -limit, limit);
      return x / (1.0 + std::exp(-alpha * x)) * (y + 1.0);
    }
    default: unsupported(node);
  }
}

}  // namespace

void compute_glu(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor* b = node.src[1];
  const size_t n = (size_t)node.ne[0];
  const bool swapped = node.params[0] != 0;
  std::vector<float> y(n);
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    std::vector<float> gate = get_row(a, i1, i2, i3), up;
    if (b != nullptr) {
      up = get_row(*b, i1, i2, i3);
    } else {  // one row [first half | second half]
      up.assign(gate.begin() + (ptrdiff_t)n, gate.end());
      gate.resize(n);
    }
    if (swapped) std::swap(gate, up);
    for (size_t i = 0; i < n; i++) y[i] = (float)gated(node, gate[i], up[i]);
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
