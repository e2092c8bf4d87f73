// Row gather (GET_ROWS) and scatter (SET_ROWS).
#include "backend/ref/ref_common.h"
#include "base/error.h"

namespace hexllm::backend::ref {

namespace {

int64_t checked_row(const Tensor& node, const Tensor& idx, int64_t i, int64_t j, int64_t k, int64_t n_rows) {
  const int64_t r = get_i(idx, i, j, k);
  if (r < 0 || r >= n_rows)
    fail("ref: %s '%s': idx[%lld, %lld, %lld] = %lld is out of range 0..%lld", graph::op_name(node.op),
         node.name, (long long)i, (long long)j, (long long)k, (long long)r, (long long)n_rows - 1);
  return r;
}

// out[:, i, j, k] = a[:, idx[i, j, k], j, k]
void get_rows(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& idx = *node.src[1];
  std::vector<float> row((size_t)a.ne[0]);
  for_each_row(node, [&](int64_t i, int64_t j, int64_t k) {
    const int64_t r = checked_row(node, idx, i, j, k, a.ne[1]);
    get_row(a, r, j, k, row.data());
    set_row(node, i, j, k, row.data());
  });
}

// dst[:, idx[i, j % n2, k % n3], j, k] = src[:, i, j, k]; node is the view of dst.
void set_rows(const Tensor& node) {
  const Tensor& src = *node.src[0];
  const Tensor& idx = *node.src[1];
  std::vector<float> row((size_t)src.ne[0]);
  for_each_row(src, [&](int64_t i, int64_t j, int64_t k) {
    const int64_t r = checked_row(node, idx, i, j % idx.ne[1], k % idx.ne[2], node.ne[1]);
    get_row(src, i, j, k, row.data());
    set_row(node, r, j, k, row.data());
  });
}

}  // namespace

void compute_rows(const Tensor& node) {
  if (node.op == Op::GET_ROWS) return get_rows(node);
  if (node.op == Op::SET_ROWS) return set_rows(node);
  unsupported(node);
}

}  // namespace hexllm::backend::ref
