#include "model/graph_builder.h"

namespace hexllm::model {

using graph::Tensor;

GraphBuilder::GraphBuilder(const Model& model, const KvCache& kv, const BatchShape& batch, graph::Context& ctx,
                           graph::Graph& gf)
    : hp_(model.hparams()), w_(model.weights()), kv_(kv), batch_(batch), ctx_(ctx), gf_(gf) {
  const int64_t n = batch.n_tokens;
  in_.tokens = input(Type::I32, {n}, "inp_tokens");
  in_.positions = input(Type::I32, {n}, "inp_pos");
  in_.mask = input(Type::F16, {batch.n_kv, n}, "kq_mask");
  if (hp_.n_swa > 0) in_.mask_swa = input(Type::F16, {batch.n_kv, n}, "kq_mask_swa");
  if (batch.n_outputs < n) in_.out_ids = input(Type::I32, {batch.n_outputs}, "inp_out_ids");
}

Tensor* GraphBuilder::input(Type type, std::initializer_list<int64_t> ne, const char* name) {
  Tensor* t = ctx_.new_tensor(type, ne);
  t->flags |= graph::kFlagInput;
  t->set_name("%s", name);
  return t;
}

Tensor* GraphBuilder::embed() {
  Tensor* x = graph::get_rows(ctx_, w_.token_embd, in_.tokens);
  x->set_name("inp_embd");
  if (hp_.embd_scale != 1.0f) x = graph::scale(ctx_, x, hp_.embd_scale);
  return x;
}

Tensor* GraphBuilder::norm(Tensor* x, Tensor* weight) {
  return graph::mul(ctx_, graph::rms_norm(ctx_, x, hp_.norm_eps), weight);
}

Tensor* GraphBuilder::linear(Tensor* w, Tensor* x, Tensor* bias) {
  Tensor* y = graph::mul_mat(ctx_, w, x);
  return bias != nullptr ? graph::add(ctx_, y, bias) : y;
}

Tensor* GraphBuilder::attention(int64_t il, Tensor* x) {
  const LayerWeights& L = layer(il);
  const int64_t n = batch_.n_tokens, hd = hp_.head_dim_k, hdv = hp_.head_dim_v;

  Tensor* q = graph::reshape_3d(ctx_, linear(L.wq, x, L.bq), hd, hp_.n_head, n);
  Tensor* k = graph::reshape_3d(ctx_, linear(L.wk, x, L.bk), hd, hp_.n_head_kv, n);
  Tensor* v = linear(L.wv, x, L.bv);  // [n_embd_v_gqa, n]
  if (L.q_norm != nullptr) q = norm(q, L.q_norm);
  if (L.k_norm != nullptr) k = norm(k, L.k_norm);

  const bool swa = hp_.is_swa_layer(il);
  graph::RopeParams rp;
  rp.n_dims = static_cast<int32_t>(hp_.rope_dims);
  rp.mode = hp_.rope_mode;
  rp.n_ctx_orig = static_cast<int32_t>(hp_.rope_ctx_orig);
  rp.freq_base = swa ? hp_.rope_freq_base_swa : hp_.rope_freq_base;
  rp.freq_scale = swa ? hp_.rope_freq_scale_swa : hp_.rope_freq_scale;
  q = graph::rope(ctx_, q, in_.positions, w_.rope_freqs, rp);
  k = graph::rope(ctx_, k, in_.positions, w_.rope_freqs, rp);

  // Write this batch's K and V into the cache cells given by the positions, then attend over
  // the first n_kv cells through views that depend on the writes.
  Tensor* kc = graph::set_rows(ctx_, kv_.k(il), graph::reshape_2d(ctx_, k, hd * hp_.n_head_kv, n), in_.positions);
  Tensor* vc = graph::set_rows(ctx_, kv_.v(il), v, in_.positions);
  const size_t f16 = sizeof(uint16_t);
  Tensor* K = graph::view_3d(ctx_, kc, hd, hp_.n_head_kv, batch_.n_kv, hd * f16, kc->nb[1], 0);
  Tensor* V = graph::view_3d(ctx_, vc, hdv, hp_.n_head_kv, batch_.n_kv, hdv * f16, vc->nb[1], 0);
  K = graph::permute(ctx_, K, 0, 2, 1, 3);  // [hd, n_kv, n_head_kv]
  V = graph::permute(ctx_, V, 0, 2, 1, 3);
  Tensor* Q = graph::permute(ctx_, q, 0, 2, 1, 3);  // [hd, n, n_head]

  Tensor* o = graph::flash_attn_ext(ctx_, Q, K, V, swa ? in_.mask_swa : in_.mask, hp_.attn_scale, 0.0f,
                                    hp_.attn_logit_softcap);
  o = graph::reshape_2d(ctx_, o, hdv * hp_.n_head, n);
  return linear(L.wo, o, L.bo);
}

Tensor* GraphBuilder::ffn(int64_t il, Tensor* x, Gate gate) {
  const LayerWeights& L = layer(il);
  Tensor* g = graph::mul_mat(ctx_, L.ffn_gate, x);
  Tensor* u = graph::mul_mat(ctx_, L.ffn_up, x);
  Tensor* h = gate == Gate::Silu ? graph::swiglu(ctx_, g, u) : graph::geglu(ctx_, g, u);
  return graph::mul_mat(ctx_, L.ffn_down, h);
}

Tensor* GraphBuilder::moe_ffn(int64_t il, Tensor* x) {
  const LayerWeights& L = layer(il);
  const int64_t n = x->ne[1], n_exp = hp_.n_expert, n_used = hp_.n_expert_used;

  // Router: softmax over experts, the top n_used, their probabilities renormalized to sum 1.
  Tensor* probs = graph::soft_max(ctx_, graph::mul_mat(ctx_, L.ffn_router, x), nullptr, 1.0f, 0.0f);
  Tensor* selected = graph::top_k(ctx_, probs, static_cast<int>(n_used));  // [n_used, n]
  Tensor* w = graph::get_rows(ctx_, graph::reshape_3d(ctx_, probs, 1, n_exp, n), selected);  // [1, n_used, n]
  Tensor* w2 = graph::reshape_2d(ctx_, w, n_used, n);
  w2 = graph::div(ctx_, w2, graph::sum_rows(ctx_, w2));
  w = graph::reshape_3d(ctx_, w2, 1, n_used, n);

  Tensor* x3 = graph::reshape_3d(ctx_, x, hp_.n_embd, 1, n);
  Tensor* g = graph::mul_mat_id(ctx_, L.ffn_gate_exps, x3, selected);  // [n_ff_expert, n_used, n]
  Tensor* u = graph::mul_mat_id(ctx_, L.ffn_up_exps, x3, selected);
  Tensor* d = graph::mul_mat_id(ctx_, L.ffn_down_exps, graph::swiglu(ctx_, g, u), selected);  // [E, n_used, n]
  d = graph::mul(ctx_, d, w);

  Tensor* out = nullptr;
  for (int64_t i = 0; i < n_used; ++i) {
    Tensor* e = graph::view_2d(ctx_, d, hp_.n_embd, n, d->nb[2], static_cast<size_t>(i) * d->nb[1]);
    out = out == nullptr ? e : graph::add(ctx_, out, e);
  }
  return n_used == 1 ? graph::cont(ctx_, out) : out;
}

Tensor* GraphBuilder::select_outputs(Tensor* x) {
  return in_.out_ids != nullptr ? graph::get_rows(ctx_, x, in_.out_ids) : x;
}

Tensor* GraphBuilder::logits(Tensor* x) {
  x = norm(x, w_.output_norm);
  x->set_name("result_norm");
  Tensor* y = graph::mul_mat(ctx_, w_.output, x);
  if (hp_.final_logit_softcap > 0.0f) {
    y = graph::scale(ctx_, y, 1.0f / hp_.final_logit_softcap);
    y = graph::scale(ctx_, graph::tanh(ctx_, y), hp_.final_logit_softcap);
  }
  y->set_name("result_output");
  y->flags |= graph::kFlagOutput;
  gf_.expand(y);
  return y;
}

}  // namespace hexllm::model

#include "model/arch.h"

namespace hexllm::model {

graph::Tensor* build_forward(GraphBuilder& b) {
  switch (b.hp().arch) {
    case Arch::Llama:
    case Arch::Qwen2:
    case Arch::Qwen3:
    case Arch::Qwen3Moe:
      return build_llama_family(b);
    case Arch::Gemma3:
      return build_gemma3(b);
  }
  return nullptr;
}

}  // namespace hexllm::model
