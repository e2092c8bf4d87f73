// Gemma 3: scaled embeddings, sandwich norms around attention and FFN, GELU-gated FFN,
// sliding-window local layers with their own RoPE (handled by GraphBuilder::attention).
//   x += post_attn_norm(attn(norm(x)));  x += post_ffw_norm(ffn(norm(x)))
#include "model/arch.h"

namespace hexllm::model {

graph::Tensor* build_gemma3(GraphBuilder& b) {
  const HParams& hp = b.hp();
  graph::Tensor* x = b.embed();
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& L = b.layer(il);
    graph::Tensor* cur = b.norm(b.attention(il, b.norm(x, L.attn_norm)), L.post_attn_norm);
    if (il == hp.n_layer - 1) {
      cur = b.select_outputs(cur);
      x = b.select_outputs(x);
    }
    x = graph::add(b.ctx(), x, cur);
    cur = b.ffn(il, b.norm(x, L.ffn_norm), GraphBuilder::Gate::Gelu);
    x = graph::add(b.ctx(), x, b.norm(cur, L.post_ffw_norm));
    x->set_name("l_out-%lld", static_cast<long long>(il));
  }
  return b.logits(x);
}

}  // namespace hexllm::model
