// A graph: nodes in execution order, and the memory plan for its intermediate tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/tensor.h"

namespace hexllm::graph {

class Graph {
 public:
  // Appends `t` and everything it depends on that is not yet in the graph, sources first
  // (ggml_build_forward_expand semantics). Call order decides the order of independent
  // subgraphs.
  void expand(Tensor* t);

  // Compute nodes (op != NONE), in execution order. Layout ops are included: backends skip
  // them.
  const std::vector<Tensor*>& nodes() const { return nodes_; }
  // Leaves (op == NONE) reached from the nodes.
  const std::vector<Tensor*>& leafs() const { return leafs_; }
  // Replaces the node order with `order` (indices into nodes()). It must be a permutation
  // (throws otherwise) in which every node still comes after the nodes it reads: the caller's
  // guarantee (runs every token, so the dependencies are not checked again here).
  void reorder(const std::vector<uint32_t>& order);

  // A sealed graph is its owner's promise that neither the node list nor any field of its
  // tensors (shape, strides, params, sources, data locations) changes until it is unsealed;
  // only the data in the tensors may. Every seal() returns a new number, unique in the process,
  // so a backend that prepared the graph under one seal can reuse that work without reading
  // the graph again (the model keeps its decode graph: hashing it every token is wasted work).
  // expand() and reorder() unseal; 0 means not sealed.
  uint64_t seal();
  uint64_t seal_id() const { return seal_; }

  // Host time its owner spent building and planning the graph for the coming evaluation (0 when
  // it reuses one built before), for profilers.
  uint64_t build_ns() const { return build_ns_; }
  void set_build_ns(uint64_t ns) { build_ns_ = ns; }

 private:
  std::vector<Tensor*> nodes_;
  std::vector<Tensor*> leafs_;
  uint64_t build_ns_ = 0;
  uint64_t seal_ = 0;
  std::unordered_map<const Tensor*, bool> seen_;  // tensor -> finished (false while on the DFS stack)
};

// Plans one buffer for every tensor of the graph whose data is not yet bound: computed
// nodes that own storage, and input leaves. Storage is reused once its last reader has run;
// inputs and outputs (kFlagOutput) are never reused. Views get their data from their root.
// Unbound leaves count as inputs whatever their flags. Tensors that nothing in the graph reads
// (the graph's results) are kept like outputs. Plan before binding: a tensor with data is
// taken as bound by its owner (weights, KV cache) and left alone.
class MemoryPlan {
 public:
  explicit MemoryPlan(const Graph& graph, size_t alignment = 128);
  size_t size() const { return size_; }
  // Sets `data` of every planned tensor and of every view (base must hold size() bytes,
  // aligned to the plan's alignment).
  void bind(void* base) const;

 private:
  struct Slot {
    Tensor* tensor;
    size_t offset;
  };
  std::vector<Slot> slots_;
  std::vector<Tensor*> views_;  // in dependency order
  size_t size_ = 0;
  size_t alignment_ = 0;
};

}  // namespace hexllm::graph
