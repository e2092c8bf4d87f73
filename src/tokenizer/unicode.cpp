#include "tokenizer/unicode.h"

#include <array>

namespace hexllm::tokenizer::unicode {

namespace {

bool is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

struct ByteTable {
  std::array<std::string, 256> to_char;
  std::array<int16_t, 512> to_byte;  // mapped code points are all < U+0144

  ByteTable() {
    to_byte.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : 256u + static_cast<uint32_t>(extra++);
      append_utf8(to_char[b], cp);
      to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

}  // namespace

std::vector<uint32_t> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t b0 = p[i];
    if (b0 < 0x80) {
      out.push_back(b0);
      i += 1;
      continue;
    }
    const size_t len = (b0 & 0x40) == 0   ? 0
                       : (b0 & 0x20) == 0 ? 2
                       : (b0 & 0x10) == 0 ? 3
                       : (b0 & 0x08) == 0 ? 4
                                          : 0;
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = is_cont(p[i + k]);
    if (!ok) {
      out.push_back(kReplacement);
      i += 1;
      continue;
    }
    uint32_t cp = b0 & (0x7Fu >> len);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3Fu);
    if (cp > 0x10FFFF) {  // llama.cpp cannot re-encode these either; treat as malformed
      out.push_back(kReplacement);
      i += 1;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

const std::string& byte_to_bpe_char(uint8_t b) { return byte_table().to_char[b]; }

int bpe_char_to_byte(uint32_t cp) {
  const auto& t = byte_table().to_byte;
  return cp < t.size() ? t[cp] : -1;
}

int utf8_check(std::string_view s, size_t pos) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  const uint8_t b0 = p[pos];
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (size_t k = 1; k < len; ++k) {
    if (pos + k >= n) return 0;
    const uint8_t b = p[pos + k];
    const bool good = k == 1 ? (b >= lo && b <= hi) : is_cont(b);
    if (!good) return -static_cast<int>(k);
  }
  return static_cast<int>(len);
}

}  // namespace hexllm::tokenizer::unicode
