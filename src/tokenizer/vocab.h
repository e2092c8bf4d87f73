// Tokenizer vocabulary as stored in GGUF (`tokenizer.ggml.*`), with llama.cpp's defaults
// already applied by load_vocab. Tests and tools may also build one by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hexllm::gguf {
class File;
}

namespace hexllm::tokenizer {

// GGUF `tokenizer.ggml.token_type` values.
enum class TokenType : int32_t {
  UNDEFINED = 0,
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
};

struct Vocab {
  std::string model;  // "llama" (SentencePiece) or "gpt2" (byte-level BPE)
  std::string pre;    // BPE pre-tokenizer: "default", "gpt-2", "llama-bpe", "qwen2", ...
  std::vector<std::string> tokens;
  std::vector<float> scores;        // SPM merge priorities; empty = all 0
  std::vector<TokenType> types;     // empty = all NORMAL
  std::vector<std::string> merges;  // BPE, "left right" in rank order

  // Special token ids; -1 = none. eot/eom = -1 are found by their text
  // ("<|eot_id|>", "<|im_end|>", "<end_of_turn>", ...) when the tokenizer is built.
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t unk = -1;
  int32_t sep = -1;
  int32_t pad = -1;
  int32_t eot = -1;
  int32_t eom = -1;

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prepend a space to the text (also strips it on decode)

  std::string chat_template;  // tokenizer.chat_template (Jinja source), may be empty
  std::string arch;           // general.architecture (chat-style fallback)
  std::string name;           // general.name (llama.cpp keys a few per-model quirks on it)

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
};

// Reads the tokenizer keys of a GGUF file. Missing optional keys take llama.cpp's defaults:
// SPM ("llama"): bos 1, eos 2, unk 0, add_bos, add_space_prefix; BPE ("gpt2"): bos = eos = 11,
// add_bos only for the Llama-3 family of pre-tokenizers. Throws hexllm::Error naming the file
// and key when a required key is missing, has the wrong type or inconsistent lengths.
Vocab load_vocab(const gguf::File& file);

}  // namespace hexllm::tokenizer
