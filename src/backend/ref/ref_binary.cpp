// Elementwise binary ops: b is repeated over a (index modulo b's shape); ADD_ID adds one
// row of b chosen per (slot, token).
#include "backend/ref/ref_common.h"
#include "base/error.h"

namespace hexllm::backend::ref {

namespace {

double binary(const Tensor& node, double x, double y) {
  switch (node.op) {
    case Op::ADD: return x + y;
    case Op::SUB: return x - y;
    case Op::MUL: return x * y;
    case Op::DIV: return x / y;
    default: unsupported(node);
  }
}

void add_id(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const Tensor& ids = *node.src[2];
  std::vector<float> y((size_t)a.ne[0]);
  for_each_row(a, [&](int64_t i, int64_t t, int64_t i3) {
    const int64_t e = get_i(ids, i, t);
    if (e < 0 || e >= b.ne[1])
      fail("ref: ADD_ID '%s': ids[%lld, %lld] = %lld is out of range 0..%lld", node.name, (long long)i,
           (long long)t, (long long)e, (long long)b.ne[1] - 1);
    const std::vector<float> x = get_row(a, i, t, i3), bias = get_row(b, e, 0, 0);
    for (size_t i0 = 0; i0 < y.size(); i0++) y[i0] = x[i0] + bias[i0];
    set_row(node, i, t, i3, y.data());
  });
}

}  // namespace

void compute_binary(const Tensor& node) {
  if (node.op == Op::ADD_ID) return add_id(node);
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  std::vector<float> y((size_t)a.ne[0]);
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<float> x = get_row(a, i1, i2, i3);
    const std::vector<float> z = get_row(b, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
    for (size_t i0 = 0; i0 < y.size(); i0++) y[i0] = (float)binary(node, x[i0], z[i0 % z.size()]);
    set_row(node, i1, i2, i3, y.data());
  });
}

}  // namespace hexllm::backend::ref
