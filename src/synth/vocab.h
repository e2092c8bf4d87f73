// The built-in tokenizers of the synthetic models: byte-level BPE (tokenizer.ggml.model = gpt2)
// from the learned merges, filler tokens up to the regular-token count, then a model family's
// special tokens, and the tokenizer.* metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hexllm::gguf {
class Writer;
}

namespace hexllm::synth {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum TokenType : int32_t {
  kTokenNormal = 1,
  kTokenUnknown = 2,
  kTokenControl = 3,
  kTokenUserDefined = 4,
  kTokenUnused = 5,
  kTokenByte = 6,
};

enum class VocabFamily { Llama3, Qwen2, Gemma3 };

struct VocabSpec {
  VocabFamily family = VocabFamily::Llama3;
  std::string pre;                  // tokenizer.ggml.pre
  int64_t n_regular = 0;            // byte tokens + learned merges + "[UNUSED_<id>]" fillers
  int64_t n_total = 0;              // after the family's specials, "[PAD<id>]" (UNUSED) up to here
  int64_t n_llama3_specials = 256;  // Llama3 only: how many of Llama-3.2's 256 specials to keep
};

struct Vocab {
  std::string pre;
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;  // "left right"
  int64_t n_learned = 0;            // byte tokens + merge results, before the fillers
  int32_t bos = -1, eos = -1, eot = -1, pad = -1;
  bool add_bos = false;
  std::string chat_template;
};

// Throws hexllm::Error when the counts do not fit the family (e.g. n_total too small).
Vocab build_vocab(const VocabSpec& spec);

// Writes tokenizer.ggml.* and tokenizer.chat_template.
void write_vocab(const Vocab& vocab, gguf::Writer& w);

}  // namespace hexllm::synth
