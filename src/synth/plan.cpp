// Preset + options -> the tensor table (names, shapes, types, value distributions) and the
// GGUF metadata, without drawing weights.
#include <cmath>

#include "base/error.h"
#include "synth/presets.h"
#include "synth/synth.h"
#include "synth/type_mix.h"
#include "synth/vocab.h"

namespace hexllm::synth {

namespace {

// Value distributions (golden README §3.3): the large output_norm spreads the logits so that
// top-1 margins are clear; it is chosen per model for a logit standard deviation of about
// kLogitStd (logit ~ output_norm * embd_std * sqrt(n_embd) for a unit-RMS hidden state).
constexpr float kEmbdStd = 0.15f;
constexpr float kGainQK = 1.5f;
constexpr float kGain = 1.3f;
constexpr float kRouterGain = 2.0f;  // router logits std ~2: distinct top-k choices
constexpr float kNormNoise = 0.1f;
constexpr float kQKNormMean = 1.5f;
constexpr float kPostNormMean = 3.0f;
constexpr float kBiasStd = 0.5f;
constexpr float kLogitStd = 20.0f;

class Planner {
 public:
  Planner(const Preset& p, const FileType& ft, const GenOptions& opt) : p_(p), ft_(ft), opt_(opt) {}

  void matrix(const std::string& name, Role role, int64_t layer, std::vector<int64_t> ne, float std,
              const std::string& seed_name = "", bool repeat_slabs = false) {
    TensorPlan t;
    t.name = name;
    const bool output_role = name == "output.weight" || (name == "token_embd.weight" && !opt_.untied_output);
    t.type = choose_type(ft_, MixInput{role, output_role, layer, p_.n_layer, ne[0]}, opt_.pure);
    t.ne = std::move(ne);
    t.std = std;
    t.seed_name = seed_name.empty() ? name : seed_name;
    t.repeat_slabs = repeat_slabs;
    out.push_back(std::move(t));
  }
  // W ~ N(0, (gain / sqrt(fan_in))^2), fan_in = row length.
  void weight(const std::string& name, Role role, int64_t layer, std::vector<int64_t> ne, float gain,
              const std::string& seed_name = "", bool repeat_slabs = false) {
    const float std = gain / std::sqrt(static_cast<float>(ne[0]));
    matrix(name, role, layer, std::move(ne), std, seed_name, repeat_slabs);
  }
  void vec(const std::string& name, int64_t n, float mean, float std) {
    TensorPlan t;
    t.name = t.seed_name = name;
    t.type = Type::F32;
    t.ne = {n};
    t.mean = mean;
    t.std = std;
    out.push_back(std::move(t));
  }
  void norm(const std::string& name, int64_t n, float mean) { vec(name, n, mean, kNormNoise * mean); }

  std::vector<TensorPlan> out;

 private:
  const Preset& p_;
  const FileType& ft_;
  const GenOptions& opt_;
};

std::vector<TensorPlan> plan_tensors(const Preset& p, const FileType& ft, const GenOptions& opt,
                                     int64_t n_vocab) {
  Planner pl(p, ft, opt);
  const int64_t E = p.n_embd, D = p.head_dim, q_out = p.n_head * D, kv_out = p.n_head_kv * D;
  pl.matrix("token_embd.weight", Role::Embedding, -1, {E, n_vocab}, kEmbdStd);
  if (p.rope_freqs.factor > 0) {
    TensorPlan t;
    t.name = t.seed_name = "rope_freqs.weight";
    t.type = Type::F32;
    t.ne = {D / 2};
    t.values = llama3_rope_freqs(p.rope_freqs, D, p.rope_base);
    pl.out.push_back(std::move(t));
  }
  for (int64_t il = 0; il < p.n_layer; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    pl.norm(b + "attn_norm.weight", E, 1.0f);
    pl.weight(b + "attn_q.weight", Role::AttnQ, il, {E, q_out}, kGainQK);
    if (p.qkv_bias) pl.vec(b + "attn_q.bias", q_out, 0.0f, kBiasStd);
    pl.weight(b + "attn_k.weight", Role::AttnK, il, {E, kv_out}, kGainQK);
    if (p.qkv_bias) pl.vec(b + "attn_k.bias", kv_out, 0.0f, kBiasStd);
    pl.weight(b + "attn_v.weight", Role::AttnV, il, {E, kv_out}, kGain);
    if (p.qkv_bias) pl.vec(b + "attn_v.bias", kv_out, 0.0f, kBiasStd);
    if (p.qk_norm) {
      pl.norm(b + "attn_q_norm.weight", D, kQKNormMean);
      pl.norm(b + "attn_k_norm.weight", D, kQKNormMean);
    }
    pl.weight(b + "attn_output.weight", Role::AttnOut, il, {q_out, E}, kGain);
    if (p.post_norms) pl.norm(b + "post_attention_norm.weight", E, kPostNormMean);
    pl.norm(b + "ffn_norm.weight", E, 1.0f);
    if (p.n_expert > 0) {
      const int64_t F = p.n_ff_expert, X = p.n_expert;
      const bool same = opt.identical_experts;
      pl.weight(b + "ffn_gate_inp.weight", Role::Router, il, {E, X}, kRouterGain);
      pl.weight(b + "ffn_gate_exps.weight", Role::FfnGate, il, {E, F, X}, kGain,
                same ? b + "ffn_gate.weight" : "", same);
      pl.weight(b + "ffn_up_exps.weight", Role::FfnUp, il, {E, F, X}, kGain, same ? b + "ffn_up.weight" : "",
                same);
      pl.weight(b + "ffn_down_exps.weight", Role::FfnDown, il, {F, E, X}, kGain,
                same ? b + "ffn_down.weight" : "", same);
    } else {
      pl.weight(b + "ffn_gate.weight", Role::FfnGate, il, {E, p.n_ff}, kGain);
      pl.weight(b + "ffn_up.weight", Role::FfnUp, il, {E, p.n_ff}, kGain);
      pl.weight(b + "ffn_down.weight", Role::FfnDown, il, {p.n_ff, E}, kGain);
    }
    if (p.post_norms) pl.norm(b + "post_ffw_norm.weight", E, kPostNormMean);
  }
  pl.norm("output_norm.weight", E, kLogitStd / (kEmbdStd * std::sqrt(static_cast<float>(E))));
  if (opt.untied_output) pl.matrix("output.weight", Role::Output, -1, {E, n_vocab}, kEmbdStd);
  return std::move(pl.out);
}

void plan_metadata(const Preset& p, const FileType& ft, const GenOptions& opt, const Vocab& vocab,
                   gguf::Writer& w) {
  const std::string a = p.arch + ".";
  const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  w.set_string("general.architecture", p.arch);
  w.set_string("general.type", "model");
  w.set_string("general.name", p.model_name);
  w.set_string("general.description",
               strprintf("synthetic random weights: hexllm gen-model --preset %s --type %s --seed %llu%s%s%s",
                         p.name.c_str(), ft.name, static_cast<unsigned long long>(opt.seed),
                         opt.untied_output ? " --untied-output" : "",
                         opt.identical_experts ? " --identical-experts" : "", opt.pure ? " --pure" : ""));
  w.set_u32(a + "context_length", u32(p.n_ctx));
  w.set_u32(a + "embedding_length", u32(p.n_embd));
  w.set_u32(a + "feed_forward_length", u32(p.n_ff));
  w.set_u32(a + "block_count", u32(p.n_layer));
  w.set_u32(a + "attention.head_count", u32(p.n_head));
  w.set_u32(a + "attention.head_count_kv", u32(p.n_head_kv));
  w.set_f32(a + "rope.freq_base", p.rope_base);
  w.set_f32(a + "attention.layer_norm_rms_epsilon", p.norm_eps);
  if (p.key_value_length_keys) {
    w.set_u32(a + "attention.key_length", u32(p.head_dim));
    w.set_u32(a + "attention.value_length", u32(p.head_dim));
  }
  if (p.rope_dims_key) w.set_u32(a + "rope.dimension_count", u32(p.head_dim));
  if (p.vocab_size_key) w.set_u32(a + "vocab_size", u32(static_cast<int64_t>(vocab.tokens.size())));
  if (p.sliding_window > 0) w.set_u32(a + "attention.sliding_window", u32(p.sliding_window));
  if (p.rope_linear_factor > 0) {
    w.set_string(a + "rope.scaling.type", "linear");
    w.set_f32(a + "rope.scaling.factor", p.rope_linear_factor);
  }
  if (p.n_expert > 0) {
    w.set_u32(a + "expert_count", u32(p.n_expert));
    w.set_u32(a + "expert_used_count", u32(p.n_expert_used));
    w.set_u32(a + "expert_feed_forward_length", u32(p.n_ff_expert));
  }
  w.set_u32("general.file_type", ft.gguf_ftype);
  w.set_u32("general.quantization_version", 2);
  write_vocab(vocab, w);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : presets()) names.emplace_back(p.name);
  return names;
}

std::string preset_description(const std::string& preset) { return find_preset(preset).description; }

std::vector<std::string> preset_types(const std::string& preset) { return find_preset(preset).types; }

int64_t TensorPlan::n_elements() const {
  int64_t n = 1;
  for (const int64_t d : ne) n *= d;
  return n;
}

uint64_t TensorPlan::nbytes() const {
  return row_size(type, ne[0]) * static_cast<uint64_t>(n_elements() / ne[0]);
}

uint64_t ModelPlan::n_params() const {
  uint64_t n = 0;
  for (const TensorPlan& t : tensors) n += static_cast<uint64_t>(t.n_elements());
  return n;
}

uint64_t ModelPlan::tensor_bytes() const {
  uint64_t n = 0;
  for (const TensorPlan& t : tensors) n += t.nbytes();
  return n;
}

ModelPlan plan_model(const GenOptions& opt) {
  const Preset& p = find_preset(opt.preset);
  const FileType* ft = find_file_type(opt.type.empty() ? p.default_type : opt.type);
  // The canonical spelling from here on (metadata, messages): "q4_k_m" is Q4_K_M.
  const std::string type = ft != nullptr ? ft->name : opt.type;
  bool allowed = false;
  for (const std::string& t : p.types) allowed = allowed || t == type;
  if (ft == nullptr || !allowed)
    fail("model preset '%s' does not support type '%s' (supported: %s)", p.name.c_str(), type.c_str(),
         join(p.types).c_str());
  if (opt.identical_experts && p.n_expert == 0)
    fail("model preset '%s' has no experts: identical_experts applies to MoE presets only", p.name.c_str());

  ModelPlan plan;
  plan.preset = p.name;
  plan.type = type;
  const Vocab vocab = build_vocab(p.vocab);
  plan_metadata(p, *ft, opt, vocab, plan.metadata);
  plan.tensors = plan_tensors(p, *ft, opt, static_cast<int64_t>(vocab.tokens.size()));
  return plan;
}

}  // namespace hexllm::synth
