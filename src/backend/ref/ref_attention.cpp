// FLASH_ATTN_EXT, computed the plain way: per query row and head, all scores, a softmax in
// double, then the weighted sum of the value rows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/ref/ref_common.h"

namespace hexllm::backend::ref {

void compute_attention(const Tensor& node, int n_threads) {
  if (node.op != Op::FLASH_ATTN_EXT) unsupported(node);
  const Tensor& q = *node.src[0];  // [D, n_q, n_head, n_seq]
  const Tensor& k = *node.src[1];  // [D, n_kv, n_head_kv, n_seq_kv]
  const Tensor& v = *node.src[2];  // [Dv, n_kv, n_head_kv, n_seq_kv]
  const Tensor* mask = node.src[3];
  const Tensor* sinks = node.src[4];
  const double scale = node.param_f(0);
  const float max_bias = node.param_f(1);
  const double softcap = node.param_f(2);
  const int64_t D = q.ne[0], n_q = q.ne[1], n_head = q.ne[2], n_seq = q.ne[3];
  const int64_t Dv = v.ne[0], n_kv = k.ne[1];
  const int64_t gqa = n_head / k.ne[2];  // query heads per KV head
  const int64_t seq_ratio = n_seq / k.ne[3];
  // K and V as floats, read once: row (j, hk, isk) at j + n_kv (hk + n_head_kv isk).
  const std::vector<std::vector<float>> k_rows = all_rows(k), v_rows = all_rows(v);
  auto kv_index = [&](int64_t j, int64_t hk, int64_t isk) {
    return (size_t)(j + n_kv * (hk + k.ne[2] * isk));
  };

  // One work item per output row (head h, query iq, sequence is).
  parallel_for(n_threads, n_head * n_q * n_seq, [&](int64_t begin, int64_t end) {
    std::vector<float> y((size_t)Dv);
    std::vector<double> s((size_t)n_kv), acc((size_t)Dv);
    for (int64_t r = begin; r < end; r++) {
      const int64_t h = r % n_head, iq = r / n_head % n_q, is = r / (n_head * n_q);
      const int64_t hk = h / gqa, isk = is / seq_ratio;
      const double slope = alibi_slope(max_bias, h, n_head);
      const std::vector<float> qr = get_row(q, iq, h, is);

      // s_j = scale q.k_j (soft-capped) + slope mask_j
      for (int64_t j = 0; j < n_kv; j++) {
        double sj = scale * dot(qr.data(), k_rows[kv_index(j, hk, isk)].data(), D);
        if (softcap != 0.0) sj = softcap * std::tanh(sj / softcap);
        if (mask != nullptr) sj += slope * get_f(*mask, j, iq, h % mask->ne[2], is % mask->ne[3]);
        s[(size_t)j] = sj;
      }

      // p_j = exp(s_j - max) / (sum_j exp(s_j - max) + exp(sink - max))
      const double sink =
          sinks != nullptr ? get_f(*sinks, h, 0, 0, 0) : -std::numeric_limits<double>::infinity();
      double max = sink;
      for (double sj : s) max = std::max(max, sj);
      double sum = std::exp(sink - max);
      for (double& sj : s) {
        sj = std::exp(sj - max);
        sum += sj;
      }

      // out = sum_j p_j v_j (zeros when every key is masked out and there is no sink)
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < n_kv; j++) {
        const std::vector<float>& vj = v_rows[kv_index(j, hk, isk)];
        for (int64_t d = 0; d < Dv; d++) acc[(size_t)d] += s[(size_t)j] * vj[(size_t)d];
      }
      for (int64_t d = 0; d < Dv; d++) y[(size_t)d] = std::isinf(max) ? 0.0f : (float)(acc[(size_t)d] / sum);
      set_row(node, h, iq, is, y.data());
    }
  });
}

}  // namespace hexllm::backend::ref
