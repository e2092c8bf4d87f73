// The llama family: llama (Llama 2/3, Mistral, TinyLlama), qwen2 (QKV biases), qwen3
// (per-head Q/K norm) and qwen3moe (mixture-of-experts FFN). Pre-norm blocks:
//   x += attn(norm(x));  x += ffn(norm(x))
#include "model/arch.h"

namespace hexllm::model {

graph::Tensor* build_llama_family(GraphBuilder& b) {
  const HParams& hp = b.hp();
  graph::Tensor* x = b.embed();
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& L = b.layer(il);
    graph::Tensor* cur = b.attention(il, b.norm(x, L.attn_norm));
    if (il == hp.n_layer - 1) {
      cur = b.select_outputs(cur);
      x = b.select_outputs(x);
    }
    x = graph::add(b.ctx(), x, cur);
    cur = b.norm(x, L.ffn_norm);
    cur = hp.arch == Arch::Qwen3Moe ? b.moe_ffn(il, cur) : b.ffn(il, cur, GraphBuilder::Gate::Silu);
    x = graph::add(b.ctx(), x, cur);
    x->set_name("l_out-%lld", static_cast<long long>(il));
  }
  return b.logits(x);
}

}  // namespace hexllm::model
