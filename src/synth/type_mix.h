// File types (`--type`) and the per-tensor type each one gives, following llama-quantize's
// default rules for the types we offer: 1-D tensors and the MoE router stay F32, the output
// projection (token_embd when tied) gets Q6_K unless the file is Q8_0 or float, Q4_K_M gives
// attn_v/ffn_down Q6_K in the "more bits" layers, and K-quants that do not fit a row length fall
// back (Q4_K -> Q5_0, Q6_K -> Q8_0).
#pragma once

#include <cstdint>
#include <string>

#include "quant/types.h"

namespace hexllm::synth {

struct FileType {
  const char* name;     // as given to --type, e.g. "Q4_K_M"
  uint32_t gguf_ftype;  // general.file_type (llama_ftype numbering)
  Type base;            // the type of most matrices
};

// nullptr when unknown.
const FileType* find_file_type(const std::string& name);

enum class Role { Embedding, Output, AttnQ, AttnK, AttnV, AttnOut, FfnGate, FfnUp, FfnDown, Router, Vector };

struct MixInput {
  Role role;
  bool output_role;  // the output projection: output.weight, or token_embd.weight when tied
  int64_t layer;     // -1 for non-layer tensors
  int64_t n_layer;
  int64_t row_length;  // ne[0]
};

// `pure` gives every matrix the base type (llama-quantize --pure).
Type choose_type(const FileType& ft, const MixInput& in, bool pure);

// llama-quantize's use_more_bits(i, n): first and last eighth, and every third layer between.
bool use_more_bits(int64_t layer, int64_t n_layer);

}  // namespace hexllm::synth
