// A backend computes graph nodes. The scheduler gives each node to the first backend that
// supports it; the reference backend supports everything and is the oracle.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "graph/graph.h"
#include "graph/tensor.h"

namespace hexllm::backend {

enum class MemoryKind { Weights, Cache, Compute };

// Host-addressable memory that a backend can compute on.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
};

// Called with (done, total) while weights are prepared.
using Progress = std::function<void(size_t done, size_t total)>;
using WeightCopied = std::function<void(const graph::Tensor& weight)>;

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
  // Computes the whole graph and returns true when this backend takes every node of it (a
  // device backend can then prepare the graph once and reuse it); false leaves the graph
  // untouched for node-by-node scheduling. Only the first backend is asked.
  virtual bool compute_graph(const graph::Graph& graph) {
    (void)graph;
    return false;
  }
  // Called on the first backend before the graph's memory is planned: it may reorder the
  // nodes within their dependencies (graph::Graph::reorder), e.g. so that ops it fuses are
  // adjacent. The memory plan then follows the new order.
  virtual void schedule(graph::Graph& graph) { (void)graph; }

  // Memory for the KV cache and intermediate tensors, zero-filled. The default is 128-byte
  // aligned heap memory; a device backend returns memory from its shared pool.
  virtual std::unique_ptr<Buffer> alloc_buffer(MemoryKind kind, size_t bytes);
  // Gives the backend the model's weights once, after loading (a device backend copies or
  // repacks them into its pool). The tensors keep pointing at the original (mmapped) data,
  // which only a node another backend runs reads again; `copied` (may be empty) hears of each
  // weight the backend now holds a copy of, so the caller can let the original's pages go.
  virtual void load_weights(std::span<graph::Tensor* const> weights, const Progress& progress,
                            const WeightCopied& copied) {
    (void)weights;
    (void)progress;
    (void)copied;
  }
};

// Zero-filled heap memory, 128-byte aligned.
std::unique_ptr<Buffer> alloc_host_buffer(size_t bytes);

}  // namespace hexllm::backend
