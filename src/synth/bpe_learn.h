// Byte-level BPE (GPT-2 style) learned from text: the byte alphabet, a pre-splitter, and the
// greedy merge learner behind the built-in tokenizers of the synthetic models.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hexllm::synth {

// GPT-2's bytes-to-unicode table as UTF-8: the 188 printable bytes ('!'..'~', '¡'..'¬',
// '®'..'ÿ') map to the same code point, the other 68 to U+0100, U+0101, ... in byte order.
const std::array<std::string, 256>& byte_to_unicode();

// The bytes in GPT-2 token order: the printable ones first, then the remapped ones.
// Token id i (i < 256) is the single byte byte_token_order()[i].
const std::array<uint8_t, 256>& byte_token_order();

// Splits text into pre-tokens roughly like the GPT-2 / Llama-3 regexes, for ASCII: English
// contractions, an optional space followed by letters (bytes >= 0x80 count as letters),
// digit groups of at most 3, an optional space followed by punctuation, and whitespace runs
// (a run followed by a word leaves its last space to that word).
std::vector<std::string> pre_split(std::string_view text);

struct LearnedBpe {
  std::vector<std::string> tokens;                  // mapped strings: 256 bytes, then merge results
  std::vector<std::pair<int32_t, int32_t>> merges;  // in priority order
  std::vector<int32_t> merge_result;                // token id produced by each merge
};

// Learns merges greedily (most frequent adjacent pair first, ties to the smallest ids) until
// `max_tokens` tokens exist or every pre-token is a single token. A merge whose result string
// already exists reuses that token (as in real vocabularies).
LearnedBpe learn_bpe(std::string_view text, size_t max_tokens);

// learn_bpe(builtin_corpus(), unlimited), computed once per process.
const LearnedBpe& builtin_bpe();

}  // namespace hexllm::synth
