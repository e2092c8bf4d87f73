// Runs a graph over a list of backends in priority order: each node goes to the first backend
// that supports it, and consecutive nodes of one backend are computed in one call. The last
// backend must support everything (the reference backend), so nothing aborts on an unknown op.
#pragma once

#include <vector>

#include "backend/backend.h"
#include "graph/graph.h"

namespace hexllm::backend {

class Scheduler {
 public:
  explicit Scheduler(std::vector<Backend*> backends);

  void compute(const graph::Graph& graph);
  Backend& primary() const { return *backends_.front(); }
  const std::vector<Backend*>& backends() const { return backends_; }
  // Nodes each backend computed in the last call (same order as backends()).
  const std::vector<size_t>& last_counts() const { return counts_; }

 private:
  std::vector<Backend*> backends_;
  std::vector<size_t> counts_;
  // Compute nodes of the sealed graph seen last (graph::Graph::seal): a decode step does not
  // walk its ~1000 nodes again only to count them.
  uint64_t counted_seal_ = 0;
  size_t counted_nodes_ = 0;
  std::vector<graph::Tensor*> run_;
};

}  // namespace hexllm::backend
