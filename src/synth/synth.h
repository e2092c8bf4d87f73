// Synthetic GGUF models with random weights and a built-in byte-level BPE tokenizer, behind
// `hexllm gen-model`. Presets reproduce real model shapes (Llama-3.2-1B, Qwen2.5-0.5B) for
// benchmarks, plus small models of every supported architecture for tests.
//
// Weights are N(0, (gain / sqrt(fan_in))^2) and norms mean * (1 + 0.1 N(0,1)) as in
// /work/shared/golden/README.md §3.3, so random models have clear top-1 margins. The output is
// a pure function of (preset, type, seed, options): independent of the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/types.h"

namespace hexllm::synth {

struct Progress {
  size_t tensor_index;  // tensors finished so far, this one included
  size_t n_tensors;
  const std::string& name;  // the tensor just finished
  uint64_t bytes_done;      // tensor data bytes finished so far
  uint64_t bytes_total;
};
using ProgressFn = std::function<void(const Progress&)>;

struct GenOptions {
  std::string preset = "tiny";
  // File type: "F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "Q4_K",
  // "Q6_K", "Q4_K_M" as the preset allows (preset_types()); empty = the preset's default.
  std::string type;
  uint64_t seed = 0;
  int n_threads = 0;  // 0 = std::thread::hardware_concurrency()
  // Writes output.weight (drawn like token_embd, from its own stream) instead of tying the
  // output projection to token_embd.weight.
  bool untied_output = false;
  // tiny-qwen3moe only: every expert's ffn_{gate,up,down}_exps slab equals (byte for byte) the
  // blk.N.ffn_{gate,up,down}.weight of tiny-qwen3 generated with the same seed and type, and
  // every other tensor but the router equals tiny-qwen3's. With softmax top-k weights
  // renormalized to sum 1 (llama.cpp's qwen3moe), the MoE then computes the dense model.
  bool identical_experts = false;
  // Every matrix in the base type (llama-quantize --pure): no Q6_K output, no Q4_K_M mix.
  bool pure = false;
  ProgressFn progress;
};

std::vector<std::string> preset_names();
std::string preset_description(const std::string& preset);
// Supported file types of a preset, the default first. Throws for an unknown preset.
std::vector<std::string> preset_types(const std::string& preset);

// How a tensor's values are drawn.
struct TensorPlan {
  std::string name;
  Type type = Type::F32;
  std::vector<int64_t> ne;  // ggml order: ne[0] is the row length
  float mean = 0.0f;        // values mean + std * N(0, 1) ...
  float std = 0.0f;
  std::vector<float> values;  // ... unless given here (rope_freqs)
  // Random stream: drawn as if this were the tensor named `seed_name`; with `repeat_slabs`
  // every ne[2] slab repeats the same values (identical experts).
  std::string seed_name;
  bool repeat_slabs = false;

  int64_t n_elements() const;
  uint64_t nbytes() const;
};

struct ModelPlan {
  std::string preset, type;
  gguf::Writer metadata;  // every key, no tensors: metadata.to_bytes() is a valid GGUF
  std::vector<TensorPlan> tensors;
  uint64_t n_params() const;
  uint64_t tensor_bytes() const;
};

// The full tensor table and metadata without drawing any weight (the tokenizer is built).
// Throws hexllm::Error for an unknown preset (listing them) or an unsupported type (listing
// the preset's types).
ModelPlan plan_model(const GenOptions& opt);

// Draws the weights and writes the GGUF file (atomically). Tensors are produced one at a time,
// so memory stays near the largest tensor.
void generate_model(const GenOptions& opt, const std::string& out_path);
// The same file in memory (tests; small presets).
std::vector<uint8_t> generate_model_bytes(const GenOptions& opt);

// Values of one planned tensor as float, before conversion to its type (tests, inspection).
std::vector<float> draw_tensor(const TensorPlan& t, uint64_t seed, int n_threads = 1);

}  // namespace hexllm::synth
