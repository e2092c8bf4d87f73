// Owns the tensors of one graph build; pointers stay valid for the context's lifetime.
#pragma once

#include <deque>
#include <initializer_list>
#include <span>

#include "graph/tensor.h"

namespace hexllm::graph {

class Context {
 public:
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // A leaf with contiguous strides and no data (bound later by a loader or the allocator).
  Tensor* new_tensor(Type type, std::span<const int64_t> ne);
  Tensor* new_tensor(Type type, std::initializer_list<int64_t> ne) {
    return new_tensor(type, std::span<const int64_t>(ne.begin(), ne.size()));
  }
  // A node computed by `op` with the given output shape (contiguous strides).
  Tensor* new_node(Op op, Type type, std::span<const int64_t> ne);
  // A tensor that aliases `src`'s storage at `offset` with the given shape and strides.
  Tensor* new_view(Op op, Tensor* src, std::span<const int64_t> ne, std::span<const size_t> nb, size_t offset);

  size_t size() const { return tensors_.size(); }
  void clear() { tensors_.clear(); }

 private:
  std::deque<Tensor> tensors_;
};

}  // namespace hexllm::graph
