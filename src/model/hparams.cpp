#include "model/hparams.h"

#include <cmath>

#include "base/error.h"

namespace hexllm::model {

namespace {

struct ArchName {
  Arch arch;
  const char* name;
};
constexpr ArchName kArchNames[] = {
    {Arch::Llama, "llama"}, {Arch::Qwen2, "qwen2"}, {Arch::Qwen3, "qwen3"},
    {Arch::Qwen3Moe, "qwen3moe"}, {Arch::Gemma3, "gemma3"},
};

// Reads `{arch}.suffix` with the file and key named in every error.
class Keys {
 public:
  Keys(const gguf::File& f, std::string prefix) : f_(f), prefix_(std::move(prefix)) {}

  int64_t req_int(const char* suffix) const {
    const std::string key = prefix_ + suffix;
    const auto v = f_.get_int(key);
    if (!v) fail("%s: missing metadata key '%s'", f_.name().c_str(), key.c_str());
    return *v;
  }
  int64_t opt_int(const char* suffix, int64_t def) const { return f_.get_int(prefix_ + suffix).value_or(def); }
  float opt_float(const char* suffix, float def) const {
    return static_cast<float>(f_.get_float(prefix_ + suffix).value_or(def));
  }
  std::string opt_string(const char* suffix) const { return f_.get_string(prefix_ + suffix).value_or(""); }
  void positive(const char* suffix, int64_t v) const {
    if (v <= 0) fail("%s: metadata key '%s%s' must be positive (got %lld)", f_.name().c_str(), prefix_.c_str(),
                     suffix, static_cast<long long>(v));
  }

 private:
  const gguf::File& f_;
  std::string prefix_;
};

}  // namespace

const char* arch_name(Arch arch) {
  for (const ArchName& a : kArchNames)
    if (a.arch == arch) return a.name;
  return "?";
}

Arch arch_from_name(const std::string& name) {
  for (const ArchName& a : kArchNames)
    if (name == a.name) return a.arch;
  fail("unsupported architecture '%s' (supported: llama, qwen2, qwen3, qwen3moe, gemma3)", name.c_str());
}

HParams read_hparams(const gguf::File& file) {
  const auto arch_str = file.get_string("general.architecture");
  if (!arch_str) fail("%s: missing metadata key 'general.architecture'", file.name().c_str());
  HParams hp;
  hp.arch = arch_from_name(*arch_str);
  const Keys k(file, *arch_str + ".");

  hp.n_embd = k.req_int("embedding_length");
  hp.n_layer = k.req_int("block_count");
  hp.n_head = k.req_int("attention.head_count");
  hp.n_head_kv = k.opt_int("attention.head_count_kv", hp.n_head);
  hp.n_ff = k.opt_int("feed_forward_length", 0);
  hp.n_ctx_train = k.opt_int("context_length", 2048);
  for (const char* key : {"embedding_length", "block_count", "attention.head_count"})
    k.positive(key, k.req_int(key));
  k.positive("attention.head_count_kv", hp.n_head_kv);
  if (hp.n_head % hp.n_head_kv != 0)
    fail("%s: attention.head_count %lld is not a multiple of attention.head_count_kv %lld", file.name().c_str(),
         static_cast<long long>(hp.n_head), static_cast<long long>(hp.n_head_kv));

  hp.head_dim_k = k.opt_int("attention.key_length", hp.n_embd / hp.n_head);
  hp.head_dim_v = k.opt_int("attention.value_length", hp.head_dim_k);
  k.positive("attention.key_length", hp.head_dim_k);
  hp.norm_eps = k.opt_float("attention.layer_norm_rms_epsilon", 1e-5f);
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));

  hp.rope_dims = k.opt_int("rope.dimension_count", hp.head_dim_k);
  hp.rope_freq_base = k.opt_float("rope.freq_base", 10000.0f);
  const float rope_factor = k.opt_float("rope.scaling.factor", 0.0f);
  const std::string rope_scaling = k.opt_string("rope.scaling.type");
  if (rope_factor > 0.0f && rope_scaling != "none") hp.rope_freq_scale = 1.0f / rope_factor;
  hp.rope_ctx_orig = k.opt_int("rope.scaling.original_context_length", hp.n_ctx_train);
  if (hp.rope_dims <= 0 || hp.rope_dims > hp.head_dim_k || hp.rope_dims % 2 != 0)
    fail("%s: rope.dimension_count %lld must be even and at most the head size %lld", file.name().c_str(),
         static_cast<long long>(hp.rope_dims), static_cast<long long>(hp.head_dim_k));

  switch (hp.arch) {
    case Arch::Llama:
      hp.rope_mode = graph::kRopeNormal;
      break;
    case Arch::Qwen2:
    case Arch::Qwen3:
      hp.rope_mode = graph::kRopeNeox;
      break;
    case Arch::Qwen3Moe:
      hp.rope_mode = graph::kRopeNeox;
      hp.n_expert = k.req_int("expert_count");
      hp.n_expert_used = k.req_int("expert_used_count");
      hp.n_ff_expert = k.req_int("expert_feed_forward_length");
      k.positive("expert_count", hp.n_expert);
      k.positive("expert_feed_forward_length", hp.n_ff_expert);
      if (hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert)
        fail("%s: expert_used_count %lld must be in [1, expert_count = %lld]", file.name().c_str(),
             static_cast<long long>(hp.n_expert_used), static_cast<long long>(hp.n_expert));
      break;
    case Arch::Gemma3:
      // Gemma 3: every sixth layer is global; local layers use a fixed RoPE (base 10000, no
      // scaling) and a sliding window.
      hp.rope_mode = graph::kRopeNeox;
      hp.n_swa = k.opt_int("attention.sliding_window", 0);
      hp.swa_period = hp.n_swa > 0 ? 6 : 0;
      hp.rope_freq_base_swa = 10000.0f;
      hp.rope_freq_scale_swa = 1.0f;
      hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
      hp.final_logit_softcap = k.opt_float("final_logit_softcapping", 0.0f);
      hp.attn_logit_softcap = k.opt_float("attn_logit_softcapping", 0.0f);
      break;
  }
  if (hp.arch != Arch::Qwen3Moe) k.positive("feed_forward_length", hp.n_ff);
  return hp;
}

}  // namespace hexllm::model
