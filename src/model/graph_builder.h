// Builds the forward graph of one batch: the pieces shared by every architecture (embedding,
// attention with the KV cache, feed-forward variants, output head). One architecture file
// assembles them (arch_*.cpp). The builder knows nothing about devices.
#pragma once

#include "graph/graph.h"
#include "graph/ops.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace hexllm::model {

// One batch of consecutive tokens of the single sequence.
struct BatchShape {
  int64_t n_tokens = 0;
  int64_t pos0 = 0;       // position of the first token
  int64_t n_kv = 0;       // KV cells visible to the attention (padded; see Context)
  int64_t n_outputs = 0;  // rows of logits wanted: n_tokens, or 1 (the last token)
};

// Input leaves the caller fills before evaluation.
struct GraphInputs {
  graph::Tensor* tokens = nullptr;     // I32 [n_tokens]
  graph::Tensor* positions = nullptr;  // I32 [n_tokens]; also the KV cell of each token
  graph::Tensor* mask = nullptr;       // F16 [n_kv, n_tokens]: 0 or -inf (causal)
  graph::Tensor* mask_swa = nullptr;   // F16 [n_kv, n_tokens]: causal and sliding window
  graph::Tensor* out_ids = nullptr;    // I32 [n_outputs] when n_outputs < n_tokens
};

class GraphBuilder {
 public:
  GraphBuilder(const Model& model, const KvCache& kv, const BatchShape& batch, graph::Context& ctx,
               graph::Graph& gf);

  const GraphInputs& inputs() const { return in_; }
  const HParams& hp() const { return hp_; }
  const LayerWeights& layer(int64_t il) const { return w_.layers[static_cast<size_t>(il)]; }
  graph::Context& ctx() { return ctx_; }

  graph::Tensor* embed();
  graph::Tensor* norm(graph::Tensor* x, graph::Tensor* weight);
  // Self-attention of layer il on the normed input: projections, Q/K norms, RoPE, KV cache
  // write, flash attention over the cache, output projection.
  graph::Tensor* attention(int64_t il, graph::Tensor* x);
  enum class Gate { Silu, Gelu };
  graph::Tensor* ffn(int64_t il, graph::Tensor* x, Gate gate);
  graph::Tensor* moe_ffn(int64_t il, graph::Tensor* x);
  // Keeps only the rows whose logits are wanted (applied before the last layer's residual).
  graph::Tensor* select_outputs(graph::Tensor* x);
  // Final norm and output projection: F32 [n_vocab, n_outputs].
  graph::Tensor* logits(graph::Tensor* x);

 private:
  graph::Tensor* input(Type type, std::initializer_list<int64_t> ne, const char* name);
  graph::Tensor* linear(graph::Tensor* w, graph::Tensor* x, graph::Tensor* bias);

  const HParams& hp_;
  const Weights& w_;
  const KvCache& kv_;
  BatchShape batch_;
  graph::Context& ctx_;
  graph::Graph& gf_;
  GraphInputs in_;
};

// The whole forward graph for the model's architecture; returns the logits node.
graph::Tensor* build_forward(GraphBuilder& b);

}  // namespace hexllm::model
