// The synthetic model presets: architecture, shapes, hyperparameters, tokenizer and the
// file types each one can be written in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth/vocab.h"

namespace hexllm::synth {

// Llama-3 "rope_scaling" (rope_type llama3) parameters that produce rope_freqs.weight.
struct Llama3RopeScaling {
  float factor = 0;
  float low_freq_factor = 1;
  float high_freq_factor = 4;
  int64_t original_context = 8192;
};

struct Preset {
  std::string name, description;
  std::string arch;        // general.architecture
  std::string model_name;  // general.name
  int64_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0, n_ctx = 0;
  float rope_base = 10000.0f, norm_eps = 1e-5f;
  // Optional keys: llama.cpp has defaults for them, and the real files differ in which they carry.
  bool key_value_length_keys = true, rope_dims_key = true, vocab_size_key = true;
  Llama3RopeScaling rope_freqs;  // factor 0: no rope_freqs.weight
  bool qkv_bias = false, qk_norm = false, post_norms = false;
  int64_t sliding_window = 0;                                // gemma3
  float rope_linear_factor = 0.0f;                           // 0: no rope.scaling keys
  int64_t n_expert = 0, n_expert_used = 0, n_ff_expert = 0;  // qwen3moe
  VocabSpec vocab;
  std::string default_type;
  std::vector<std::string> types;  // supported file types, default first
};

const std::vector<Preset>& presets();
// Throws hexllm::Error naming the preset and listing the available ones.
const Preset& find_preset(const std::string& name);

// Llama-3 frequency factors (one per rotated pair) for head_dim and base.
std::vector<float> llama3_rope_freqs(const Llama3RopeScaling& s, int64_t head_dim, float base);

}  // namespace hexllm::synth
