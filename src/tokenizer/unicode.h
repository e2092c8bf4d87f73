// UTF-8 helpers with the exact leniency of llama.cpp's tokenizer (so that odd input splits the
// same way), plus GPT-2's byte <-> printable-character table used by byte-level BPE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hexllm::tokenizer::unicode {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Length of the sequence announced by a lead byte, from its high nibble only: continuation and
// invalid bytes count as 1. Callers clamp to the bytes that remain.
inline size_t utf8_len(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decodes UTF-8 into code points. Malformed sequences (bad lead, missing continuation, value
// above U+10FFFF) become U+FFFD and consume one byte; overlong forms and surrogates are
// accepted as decoded, like llama.cpp.
std::vector<uint32_t> decode_utf8(std::string_view s);

// Appends the UTF-8 form of `cp` (surrogates are encoded like any other value <= U+FFFF).
void append_utf8(std::string& out, uint32_t cp);

// GPT-2 bytes_to_unicode: every byte maps to one printable code point (printable Latin-1
// bytes to themselves, the other 68 to U+0100 + n). Returned as UTF-8.
const std::string& byte_to_bpe_char(uint8_t b);
// Inverse: the byte a mapped code point stands for, or -1.
int bpe_char_to_byte(uint32_t cp);

// Strict well-formedness (Unicode table 3-7). For a position in `s`: returns the length of the
// well-formed sequence starting there (> 0), 0 when the bytes are a valid but incomplete prefix
// that runs into the end of `s`, or -n for an ill-formed subpart of n bytes (maximal subpart).
int utf8_check(std::string_view s, size_t pos);

}  // namespace hexllm::tokenizer::unicode
