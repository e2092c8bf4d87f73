#include "backend/scheduler.h"

#include "base/error.h"

namespace hexllm::backend {

Scheduler::Scheduler(std::vector<Backend*> backends) : backends_(std::move(backends)) {
  if (backends_.empty()) fail("scheduler: no backend");
  counts_.assign(backends_.size(), 0);
}

void Scheduler::compute(const graph::Graph& graph) {
  counts_.assign(backends_.size(), 0);
  if (backends_.front()->compute_graph(graph)) {
    if (graph.seal_id() == 0 || graph.seal_id() != counted_seal_) {
      counted_nodes_ = 0;
      for (const graph::Tensor* node : graph.nodes()) counted_nodes_ += graph::op_is_layout(node->op) ? 0 : 1;
      counted_seal_ = graph.seal_id();
    }
    counts_.front() = counted_nodes_;
    return;
  }
  size_t current = backends_.size();
  run_.clear();
  auto flush = [&] {
    if (!run_.empty()) backends_[current]->compute(run_);
    run_.clear();
  };
  for (graph::Tensor* node : graph.nodes()) {
    if (graph::op_is_layout(node->op)) continue;
    size_t chosen = backends_.size();
    for (size_t b = 0; b < backends_.size(); ++b) {
      if (backends_[b]->supports(*node)) {
        chosen = b;
        break;
      }
    }
    if (chosen == backends_.size())
      fail("no backend supports op %s of node '%s' (%s)", graph::op_name(node->op), node->name,
           type_name(node->type));
    if (chosen != current) {
      flush();
      current = chosen;
    }
    run_.push_back(node);
    counts_[chosen]++;
  }
  flush();
}

}  // namespace hexllm::backend
