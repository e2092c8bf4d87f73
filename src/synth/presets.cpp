#include "synth/presets.h"

#include <cmath>
#include <numbers>

#include "base/error.h"

namespace hexllm::synth {

namespace {

// File types of the small presets: every matrix row length is a multiple of 256, so all of
// these apply without fallbacks.
const std::vector<std::string> kSmallTypes = {"F32",  "F16",  "BF16", "Q8_0", "Q4_0",   "Q4_1",
                                              "Q5_0", "Q5_1", "Q4_K", "Q6_K", "IQ4_NL", "Q4_K_M"};

std::vector<std::string> small_types(const std::string& def) {
  std::vector<std::string> types = kSmallTypes;
  std::erase(types, def);
  types.insert(types.begin(), def);
  return types;
}

// The small presets share a 1000-token regular vocabulary (bytes + learned merges).
constexpr int64_t kSmallRegular = 1000;

Preset llama_3_2_1b() {
  // Shapes, keys and rope_freqs of /work/shared/golden/baseline.md §3.
  Preset p;
  p.name = "llama-3.2-1b";
  p.description = "Llama-3.2-1B shapes (1.24B params), Llama-3 vocabulary layout";
  p.arch = "llama";
  p.model_name = "Llama-3.2-1B (synthetic)";
  p.n_embd = 2048, p.n_layer = 16, p.n_head = 32, p.n_head_kv = 8, p.head_dim = 64, p.n_ff = 8192;
  p.n_ctx = 131072, p.rope_base = 500000.0f, p.norm_eps = 1e-5f;
  p.rope_freqs = {32.0f, 1.0f, 4.0f, 8192};
  p.vocab = {VocabFamily::Llama3, "llama-bpe", 128000, 128256, 256};
  p.default_type = "Q4_0";
  p.types = {"Q4_0", "Q8_0", "Q4_K_M", "F16"};
  return p;
}

Preset qwen2_5_0_5b() {
  Preset p;
  p.name = "qwen2.5-0.5b";
  p.description = "Qwen2.5-0.5B shapes (494M params), Qwen2.5 vocabulary layout";
  p.arch = "qwen2";
  p.model_name = "Qwen2.5-0.5B (synthetic)";
  p.n_embd = 896, p.n_layer = 24, p.n_head = 14, p.n_head_kv = 2, p.head_dim = 64, p.n_ff = 4864;
  p.n_ctx = 32768, p.rope_base = 1000000.0f, p.norm_eps = 1e-6f;
  p.key_value_length_keys = p.rope_dims_key = p.vocab_size_key = false;  // as in baseline.md §3.3
  p.qkv_bias = true;
  p.vocab = {VocabFamily::Qwen2, "qwen2", 151643, 151936, 0};
  p.default_type = "Q4_0";
  p.types = {"Q4_0", "Q8_0", "Q4_K_M", "F16"};
  return p;
}

Preset tiny() {
  Preset p;
  p.name = "tiny";
  p.description = "small Llama-3-style model (4 layers, n_embd 256, 1016 tokens)";
  p.arch = "llama";
  p.model_name = "tiny (synthetic)";
  p.n_embd = 256, p.n_layer = 4, p.n_head = 4, p.n_head_kv = 2, p.head_dim = 64, p.n_ff = 768;
  p.n_ctx = 4096, p.rope_base = 500000.0f, p.norm_eps = 1e-5f;
  p.rope_freqs = {8.0f, 1.0f, 4.0f, 256};  // short original context: the factors matter early
  p.vocab = {VocabFamily::Llama3, "llama-bpe", kSmallRegular, kSmallRegular + 16, 16};
  p.default_type = "Q8_0";
  p.types = small_types(p.default_type);
  return p;
}

Preset tiny_qwen2() {
  Preset p;
  p.name = "tiny-qwen2";
  p.description = "small Qwen2 model (QKV biases, NeoX RoPE, 1024 tokens)";
  p.arch = "qwen2";
  p.model_name = "tiny-qwen2 (synthetic)";
  p.n_embd = 256, p.n_layer = 4, p.n_head = 4, p.n_head_kv = 2, p.head_dim = 64, p.n_ff = 512;
  p.n_ctx = 32768, p.rope_base = 1000000.0f, p.norm_eps = 1e-6f;
  p.qkv_bias = true;
  p.vocab = {VocabFamily::Qwen2, "qwen2", kSmallRegular, 1024, 0};
  p.default_type = "F16";
  p.types = small_types(p.default_type);
  return p;
}

// tiny-qwen3 and tiny-qwen3moe differ only in the FFN (n_ff == n_ff_expert), so that a MoE
// with identical experts computes the same function as the dense model.
Preset tiny_qwen3(bool moe) {
  Preset p;
  p.name = moe ? "tiny-qwen3moe" : "tiny-qwen3";
  p.description = moe ? "small Qwen3-MoE model (4 experts, 2 used), tiny-qwen3 otherwise"
                      : "small Qwen3 model (head_dim 128 != n_embd / n_head, Q/K norms)";
  p.arch = moe ? "qwen3moe" : "qwen3";
  p.model_name = p.name + " (synthetic)";
  p.n_embd = 256, p.n_layer = 3, p.n_head = 4, p.n_head_kv = 2, p.head_dim = 128, p.n_ff = 256;
  p.n_ctx = 40960, p.rope_base = 1000000.0f, p.norm_eps = 1e-6f;
  p.qk_norm = true;
  if (moe) {
    p.n_expert = 4;
    p.n_expert_used = 2;
    p.n_ff_expert = p.n_ff;
  }
  p.vocab = {VocabFamily::Qwen2, "qwen2", kSmallRegular, 1024, 0};
  p.default_type = "F16";
  p.types = small_types(p.default_type);
  return p;
}

Preset tiny_gemma3() {
  Preset p;
  p.name = "tiny-gemma3";
  p.description = "small Gemma-3 model (sliding window 8, layer 5 global, linear RoPE x8)";
  p.arch = "gemma3";
  p.model_name = "tiny-gemma3 (synthetic)";
  p.n_embd = 256, p.n_layer = 6, p.n_head = 4, p.n_head_kv = 2, p.head_dim = 64, p.n_ff = 512;
  p.n_ctx = 32768, p.rope_base = 1000000.0f, p.norm_eps = 1e-6f;
  p.qk_norm = p.post_norms = true;
  p.sliding_window = 8;
  p.rope_linear_factor = 8.0f;
  p.vocab = {VocabFamily::Gemma3, "gpt-2", kSmallRegular, 1008, 0};
  p.default_type = "F16";
  p.types = small_types(p.default_type);
  return p;
}

std::vector<Preset> make_presets() {
  return {llama_3_2_1b(),    qwen2_5_0_5b(),   tiny(),       tiny_qwen2(),
          tiny_qwen3(false), tiny_qwen3(true), tiny_gemma3()};
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = make_presets();
  return p;
}

const Preset& find_preset(const std::string& name) {
  std::string list;
  for (const Preset& p : presets()) {
    if (name == p.name) return p;
    list += (list.empty() ? "" : ", ") + p.name;
  }
  fail("unknown model preset '%s' (available: %s)", name.c_str(), list.c_str());
}

// Wavelengths shorter than original_context / high_freq_factor keep their frequency, longer
// than original_context / low_freq_factor are slowed down by `factor`, and the band between
// is interpolated smoothly (Meta's Llama-3.1 "rope_scaling" definition).
std::vector<float> llama3_rope_freqs(const Llama3RopeScaling& s, int64_t head_dim, float base) {
  std::vector<float> f;
  const double low_wavelen = static_cast<double>(s.original_context) / s.low_freq_factor;
  const double high_wavelen = static_cast<double>(s.original_context) / s.high_freq_factor;
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const double freq = std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / head_dim);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double factor;
    if (wavelen < high_wavelen) {
      factor = 1.0;
    } else if (wavelen > low_wavelen) {
      factor = s.factor;
    } else {
      const double smooth =
          (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      factor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    f.push_back(static_cast<float>(factor));
  }
  return f;
}

}  // namespace hexllm::synth
