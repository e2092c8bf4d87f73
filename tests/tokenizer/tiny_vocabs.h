// Hand-built vocabularies for the unit tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace hexllm::tokenizer::testing {

// SentencePiece-style: 0 <unk>, 1 <s>, 2 </s>, 3 + b = <0xBB> byte tokens, then `normal`
// (text with U+2581 for spaces, score) from id 259 on.
inline Vocab tiny_spm(const std::vector<std::pair<std::string, float>>& normal) {
  Vocab v;
  v.model = "llama";
  v.pre = "default";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::UNKNOWN, TokenType::CONTROL, TokenType::CONTROL};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    v.tokens.push_back(buf);
    v.types.push_back(TokenType::BYTE);
    v.scores.push_back(0);
  }
  for (const auto& [text, score] : normal) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::NORMAL);
    v.scores.push_back(score);
  }
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}
inline constexpr int32_t kSpmFirstNormal = 259;
inline int32_t spm_byte(int b) { return 3 + b; }

// Byte-level BPE: ids 0..255 are the single bytes (GPT-2 alphabet), then `extra` tokens
// (already in the GPT-2 alphabet, e.g. "Ġa" for " a") from id 256 on.
inline Vocab tiny_bpe(const std::string& pre, const std::vector<std::string>& extra,
                      const std::vector<std::string>& merges) {
  Vocab v;
  v.model = "gpt2";
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(unicode::byte_to_bpe_char(static_cast<uint8_t>(b)));
  for (const auto& t : extra) v.tokens.push_back(t);
  v.types.assign(v.tokens.size(), TokenType::NORMAL);
  v.merges = merges;
  return v;
}

}  // namespace hexllm::tokenizer::testing
