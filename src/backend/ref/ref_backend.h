// The reference backend: scalar, simple, obviously correct (f64 accumulation where cheap),
// never tuned. Every other backend is tested against it.
#pragma once

#include "backend/backend.h"
#include "graph/tensor.h"

namespace hexllm::backend {

class RefBackend final : public Backend {
 public:
  // n_threads > 1 splits the rows of MUL_MAT/MUL_MAT_ID/FLASH_ATTN_EXT across threads; results
  // do not depend on the thread count.
  explicit RefBackend(int n_threads = 1) : n_threads_(n_threads < 1 ? 1 : n_threads) {}
  const char* name() const override { return "ref"; }
  bool supports(const graph::Tensor& node) const override;
  void compute(std::span<graph::Tensor* const> nodes) override;

 private:
  int n_threads_;
};

namespace ref {
// Computes one node whose sources are ready and whose data is bound. Throws hexllm::Error
// naming the op and types when the combination is not implemented.
void compute_node(graph::Tensor& node, int n_threads = 1);
}  // namespace ref

}  // namespace hexllm::backend
