// MUL_MAT and MUL_MAT_ID: every output element is one dot product in double of a (dequantized)
// row of a with a row of b. Threads take disjoint output rows, so the result does not depend
// on their number.
#include "backend/ref/ref_common.h"
#include "base/error.h"

namespace hexllm::backend::ref {

namespace {

// out[m, n, i2, i3] = a[:, m, i2 / r2, i3 / r3] . b[:, n, i2, i3]
void mul_mat(const Tensor& node, int n_threads) {
  const Tensor& a = *node.src[0];  // [K, M, a2, a3]
  const Tensor& b = *node.src[1];  // [K, N, b2, b3]
  const int64_t K = a.ne[0], M = a.ne[1], N = b.ne[1];
  const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];

  const std::vector<std::vector<float>> b_rows = all_rows(b);  // row (n, i2, i3) at n + N (i2 + b2 i3)

  // One work item per row m of a and batch (i2, i3) of b.
  parallel_for(n_threads, M * b.ne[2] * b.ne[3], [&](int64_t begin, int64_t end) {
    std::vector<float> x((size_t)K);
    for (int64_t w = begin; w < end; w++) {
      const int64_t m = w % M, i2 = w / M % b.ne[2], i3 = w / (M * b.ne[2]);
      get_row(a, m, i2 / r2, i3 / r3, x.data());
      for (int64_t n = 0; n < N; n++) {
        const std::vector<float>& y = b_rows[(size_t)(n + N * (i2 + b.ne[2] * i3))];
        set_f(node, m, n, i2, i3, (float)dot(x.data(), y.data(), K));
      }
    }
  });
}

// out[:, i, t] = as[:, :, ids[i, t]] . b[:, i % n_b, t]
void mul_mat_id(const Tensor& node, int n_threads) {
  const Tensor& as = *node.src[0];   // [K, M, n_expert]
  const Tensor& b = *node.src[1];    // [K, n_b, n_tok]
  const Tensor& ids = *node.src[2];  // [n_used, n_tok]
  const int64_t K = as.ne[0], M = as.ne[1], n_expert = as.ne[2], n_used = ids.ne[0];

  // One work item per (slot i, token t).
  parallel_for(n_threads, n_used * ids.ne[1], [&](int64_t begin, int64_t end) {
    std::vector<float> x((size_t)K), w((size_t)K);
    for (int64_t r = begin; r < end; r++) {
      const int64_t i = r % n_used, t = r / n_used;
      const int64_t e = get_i(ids, i, t);
      if (e < 0 || e >= n_expert)
        fail("ref: MUL_MAT_ID '%s': ids[%lld, %lld] = %lld is out of range 0..%lld", node.name, (long long)i,
             (long long)t, (long long)e, (long long)n_expert - 1);
      get_row(b, i % b.ne[1], t, 0, x.data());
      for (int64_t m = 0; m < M; m++) {
        get_row(as, m, e, 0, w.data());
        set_f(node, m, i, t, 0, (float)dot(w.data(), x.data(), K));
      }
    }
  });
}

}  // namespace

void compute_matmul(const Tensor& node, int n_threads) {
  if (node.op == Op::MUL_MAT) return mul_mat(node, n_threads);
  if (node.op == Op::MUL_MAT_ID) return mul_mat_id(node, n_threads);
  unsupported(node);
}

}  // namespace hexllm::backend::ref
