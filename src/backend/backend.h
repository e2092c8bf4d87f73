// A backend computes graph nodes. The scheduler gives each node to the first backend that
// supports it; the reference backend supports everything and is the oracle.
#pragma once

#include <span>

#include "graph/tensor.h"

namespace hexllm::backend {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Whether this backend can compute `node` (its op, types, shapes, and where its tensors
  // live). Layout ops (VIEW, RESHAPE, ...) need no support: nobody computes them.
  virtual bool supports(const graph::Tensor& node) const = 0;
  // Computes `nodes` in order (layout ops among them are skipped). Every source is ready.
  // Throws hexllm::Error naming the op on failure.
  virtual void compute(std::span<graph::Tensor* const> nodes) = 0;
};

}  // namespace hexllm::backend
