// Row reductions and orderings: SUM_ROWS, ARGSORT, TOP_K. Sorting is stable, so ties keep
// index order.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <numeric>

#include "backend/ref/ref_common.h"
#include "graph/ops.h"

namespace hexllm::backend::ref {

namespace {

// Indices 0..n-1 of x ordered by value (stable).
std::vector<int32_t> order_of(const std::vector<float>& x, bool descending) {
  std::vector<int32_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  if (descending)
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int32_t l, int32_t r) { return x[(size_t)l] > x[(size_t)r]; });
  else
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int32_t l, int32_t r) { return x[(size_t)l] < x[(size_t)r]; });
  return idx;
}

// The k largest of x, largest first, ties by lower index: the prefix of the stable descending
// order, without sorting the rest (a vocabulary row under top-k sampling).
std::vector<int32_t> top_of(const std::vector<float>& x, size_t k) {
  std::vector<int32_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), [&](int32_t l, int32_t r) {
    return x[(size_t)l] > x[(size_t)r] || (x[(size_t)l] == x[(size_t)r] && l < r);
  });
  return idx;
}

void store_indices(const Tensor& node, int64_t i1, int64_t i2, int64_t i3, const std::vector<int32_t>& idx) {
  for (int64_t i0 = 0; i0 < node.ne[0]; i0++) {
    const int32_t v = idx[(size_t)i0];
    std::memcpy(node.at(i0, i1, i2, i3), &v, 4);
  }
}

}  // namespace

void compute_sort(const Tensor& node) {
  const Tensor& a = *node.src[0];
  for_each_row(a, [&](int64_t i1, int64_t i2, int64_t i3) {
    const std::vector<float> x = get_row(a, i1, i2, i3);
    switch (node.op) {
      case Op::SUM_ROWS: {
        double sum = 0.0;
        for (float v : x) sum += v;
        set_f(node, 0, i1, i2, i3, (float)sum);
        break;
      }
      case Op::ARGSORT:
        store_indices(node, i1, i2, i3, order_of(x, node.params[0] == (int32_t)graph::SortOrder::Descending));
        break;
      case Op::TOP_K: store_indices(node, i1, i2, i3, top_of(x, (size_t)node.ne[0])); break;
      default: unsupported(node);
    }
  });
}

}  // namespace hexllm::backend::ref
