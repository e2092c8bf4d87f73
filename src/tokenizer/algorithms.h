// The two merge algorithms behind Tokenizer (internal header).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/string_table.h"

namespace hexllm::tokenizer::detail {

// SentencePiece (llama.cpp's "SPM"): start from UTF-8 characters, repeatedly merge the adjacent
// pair whose concatenation is the highest-scoring token (ties: leftmost); pieces that are not
// tokens are emitted as byte tokens.
struct SpmModel {
  const StringTable* ids = nullptr;            // text -> id (last id wins for repeated texts)
  const std::vector<float>* scores = nullptr;  // one per token
  std::array<int32_t, 256> byte_tokens{};      // -1 where the vocab has neither <0xXX> nor the byte
};

// `text` is already whitespace-escaped (spaces as U+2581).
void spm_encode(const SpmModel& m, std::string_view text, std::vector<int32_t>& out);

// Byte-level BPE: start from the characters of the byte-mapped word and repeatedly apply the
// lowest-ranked merge (ties: leftmost).
struct BpeModel {
  const StringTable* ids = nullptr;  // text -> id (last id wins for repeated texts)
  StringTable ranks;                 // "left right" -> rank; the first occurrence of a pair wins
  bool ignore_merges = false;        // Llama-3: a word that is a token is taken whole
};

// `word` is the byte-mapped (GPT-2 alphabet) form of one pre-tokenized word.
void bpe_encode_word(const BpeModel& m, std::string_view word, std::vector<int32_t>& out);

}  // namespace hexllm::tokenizer::detail
