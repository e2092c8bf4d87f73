// Hyperparameters of the supported architectures, read from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"
#include "graph/ops.h"

namespace hexllm::model {

enum class Arch { Llama, Qwen2, Qwen3, Qwen3Moe, Gemma3 };

const char* arch_name(Arch arch);
// Throws hexllm::Error naming the architecture and listing the supported ones.
Arch arch_from_name(const std::string& name);

struct HParams {
  Arch arch = Arch::Llama;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;  // attention.key_length, else n_embd / n_head
  int64_t head_dim_v = 0;
  int64_t n_ff = 0;
  float norm_eps = 1e-5f;

  // RoPE of the global (or only) attention layers.
  int32_t rope_mode = graph::kRopeNormal;
  int64_t rope_dims = 0;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  int64_t rope_ctx_orig = 0;

  // Sliding-window attention (gemma3): layers with il % swa_period < swa_period - 1 are local.
  int64_t n_swa = 0;
  int64_t swa_period = 0;
  float rope_freq_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;

  // Mixture of experts (qwen3moe).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_expert = 0;

  float embd_scale = 1.0f;  // gemma: sqrt(n_embd)
  float attn_scale = 0.0f;  // 1 / sqrt(head_dim_k)
  float final_logit_softcap = 0.0f;
  float attn_logit_softcap = 0.0f;

  int64_t n_embd_k_gqa() const { return head_dim_k * n_head_kv; }
  int64_t n_embd_v_gqa() const { return head_dim_v * n_head_kv; }
  bool is_swa_layer(int64_t il) const { return swa_period > 0 && il % swa_period < swa_period - 1; }
};

// Reads and checks the hyperparameters; errors name the file and the key.
HParams read_hparams(const gguf::File& file);

}  // namespace hexllm::model
