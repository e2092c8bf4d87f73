#include "model/weights.h"

#include <string>

#include "base/error.h"

namespace hexllm::model {

namespace {

std::string shape_str(std::span<const int64_t> ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

class Loader {
 public:
  Loader(const gguf::File& f, graph::Context& ctx, Weights& w) : f_(f), ctx_(ctx), w_(w) {}

  graph::Tensor* req(const std::string& name, std::initializer_list<int64_t> ne) {
    graph::Tensor* t = opt(name, ne);
    if (t == nullptr) fail("%s: tensor '%s' is missing", f_.name().c_str(), name.c_str());
    return t;
  }

  graph::Tensor* opt(const std::string& name, std::initializer_list<int64_t> ne) {
    const gguf::TensorInfo* info = f_.find_tensor(name);
    if (info == nullptr) return nullptr;
    const std::span<const int64_t> want(ne.begin(), ne.size());
    bool ok = true;  // trailing dims of size 1 are equivalent to absent ones
    for (size_t i = 0; i < 4; ++i) ok = ok && info->ne[i] == (i < want.size() ? want[i] : 1);
    if (!ok)
      fail("%s: tensor '%s' has shape %s, expected %s", f_.name().c_str(), name.c_str(),
           shape_str({info->ne, info->n_dims}).c_str(), shape_str(want).c_str());
    graph::Tensor* t = ctx_.new_tensor(info->type, std::span<const int64_t>(info->ne, 4));
    t->data = const_cast<uint8_t*>(f_.tensor_data(*info));
    t->flags |= graph::kFlagWeight;
    t->set_name("%s", name.c_str());
    w_.all.push_back(t);
    return t;
  }

 private:
  const gguf::File& f_;
  graph::Context& ctx_;
  Weights& w_;
};

}  // namespace

Weights load_weights(const gguf::File& file, const HParams& hp, graph::Context& ctx) {
  Weights w;
  Loader l(file, ctx, w);
  const int64_t E = hp.n_embd, V = hp.n_vocab;
  const int64_t q_out = hp.head_dim_k * hp.n_head, k_out = hp.n_embd_k_gqa(), v_out = hp.n_embd_v_gqa();
  const int64_t o_in = hp.head_dim_v * hp.n_head;

  w.token_embd = l.req("token_embd.weight", {E, V});
  w.output_norm = l.req("output_norm.weight", {E});
  w.output = l.opt("output.weight", {E, V});
  if (w.output == nullptr) w.output = w.token_embd;
  w.rope_freqs = l.opt("rope_freqs.weight", {hp.rope_dims / 2});

  const bool is_moe = hp.arch == Arch::Qwen3Moe;
  const bool has_qk_norm = hp.arch == Arch::Qwen3 || hp.arch == Arch::Qwen3Moe || hp.arch == Arch::Gemma3;
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    LayerWeights& L = w.layers[static_cast<size_t>(il)];
    const std::string p = "blk." + std::to_string(il) + ".";
    L.attn_norm = l.req(p + "attn_norm.weight", {E});
    L.wq = l.req(p + "attn_q.weight", {E, q_out});
    L.wk = l.req(p + "attn_k.weight", {E, k_out});
    L.wv = l.req(p + "attn_v.weight", {E, v_out});
    L.wo = l.req(p + "attn_output.weight", {o_in, E});
    if (hp.arch == Arch::Qwen2) {
      L.bq = l.req(p + "attn_q.bias", {q_out});
      L.bk = l.req(p + "attn_k.bias", {k_out});
      L.bv = l.req(p + "attn_v.bias", {v_out});
    } else if (hp.arch == Arch::Llama) {
      L.bq = l.opt(p + "attn_q.bias", {q_out});
      L.bk = l.opt(p + "attn_k.bias", {k_out});
      L.bv = l.opt(p + "attn_v.bias", {v_out});
      L.bo = l.opt(p + "attn_output.bias", {E});
    }
    if (has_qk_norm) {
      L.q_norm = l.req(p + "attn_q_norm.weight", {hp.head_dim_k});
      L.k_norm = l.req(p + "attn_k_norm.weight", {hp.head_dim_k});
    }
    if (hp.arch == Arch::Gemma3) L.post_attn_norm = l.req(p + "post_attention_norm.weight", {E});
    L.ffn_norm = l.req(p + "ffn_norm.weight", {E});
    if (is_moe) {
      L.ffn_router = l.req(p + "ffn_gate_inp.weight", {E, hp.n_expert});
      L.ffn_gate_exps = l.req(p + "ffn_gate_exps.weight", {E, hp.n_ff_expert, hp.n_expert});
      L.ffn_up_exps = l.req(p + "ffn_up_exps.weight", {E, hp.n_ff_expert, hp.n_expert});
      L.ffn_down_exps = l.req(p + "ffn_down_exps.weight", {hp.n_ff_expert, E, hp.n_expert});
    } else {
      L.ffn_gate = l.req(p + "ffn_gate.weight", {E, hp.n_ff});
      L.ffn_up = l.req(p + "ffn_up.weight", {E, hp.n_ff});
      L.ffn_down = l.req(p + "ffn_down.weight", {hp.n_ff, E});
    }
    if (hp.arch == Arch::Gemma3) L.post_ffw_norm = l.req(p + "post_ffw_norm.weight", {E});
  }
  return w;
}

}  // namespace hexllm::model
