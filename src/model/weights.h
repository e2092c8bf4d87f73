// The model's parameters as graph leaves whose data points into the mapped GGUF file.
#pragma once

#include <vector>

#include "gguf/gguf.h"
#include "graph/context.h"
#include "model/hparams.h"

namespace hexllm::model {

struct LayerWeights {
  graph::Tensor* attn_norm = nullptr;
  graph::Tensor* wq = nullptr;
  graph::Tensor* wk = nullptr;
  graph::Tensor* wv = nullptr;
  graph::Tensor* wo = nullptr;
  graph::Tensor* bq = nullptr;  // qwen2 (optional for llama)
  graph::Tensor* bk = nullptr;
  graph::Tensor* bv = nullptr;
  graph::Tensor* bo = nullptr;
  graph::Tensor* q_norm = nullptr;  // qwen3, gemma3: per-head RMSNorm
  graph::Tensor* k_norm = nullptr;
  graph::Tensor* post_attn_norm = nullptr;  // gemma3 sandwich norms
  graph::Tensor* ffn_norm = nullptr;
  graph::Tensor* ffn_gate = nullptr;
  graph::Tensor* ffn_up = nullptr;
  graph::Tensor* ffn_down = nullptr;
  graph::Tensor* post_ffw_norm = nullptr;
  graph::Tensor* ffn_router = nullptr;  // qwen3moe: [n_embd, n_expert]
  graph::Tensor* ffn_gate_exps = nullptr;  // [n_embd, n_ff_expert, n_expert]
  graph::Tensor* ffn_up_exps = nullptr;
  graph::Tensor* ffn_down_exps = nullptr;  // [n_ff_expert, n_embd, n_expert]
};

struct Weights {
  graph::Tensor* token_embd = nullptr;
  graph::Tensor* output_norm = nullptr;
  graph::Tensor* output = nullptr;  // == token_embd when the output is tied
  graph::Tensor* rope_freqs = nullptr;
  std::vector<LayerWeights> layers;
  std::vector<graph::Tensor*> all;  // every tensor above, each once, in file order of lookup

  bool tied_output() const { return output == token_embd; }
};

// Creates the weight leaves in `ctx`, checking that every tensor the architecture needs is
// present with the expected shape; errors name the file, the tensor and both shapes.
Weights load_weights(const gguf::File& file, const HParams& hp, graph::Context& ctx);

}  // namespace hexllm::model
