// The KV cache: per layer, K and V rows in F16, one row (all KV heads) per context cell.
// Cell i holds the token at position i (one sequence).
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "graph/context.h"
#include "model/hparams.h"

namespace hexllm::model {

class KvCache {
 public:
  KvCache(const HParams& hp, int64_t n_ctx, backend::Backend& backend);

  graph::Tensor* k(int64_t il) const { return k_[static_cast<size_t>(il)]; }  // [n_embd_k_gqa, n_ctx]
  graph::Tensor* v(int64_t il) const { return v_[static_cast<size_t>(il)]; }  // [n_embd_v_gqa, n_ctx]
  int64_t n_ctx() const { return n_ctx_; }
  size_t bytes() const { return buffer_->size(); }

 private:
  int64_t n_ctx_;
  graph::Context ctx_;
  std::unique_ptr<backend::Buffer> buffer_;
  std::vector<graph::Tensor*> k_, v_;
};

}  // namespace hexllm::model
