#include "base/byte_size.h"

#include <cctype>

#include "base/error.h"

namespace hexllm {

namespace {

// Shift of a binary suffix letter; -1 when `c` is none.
int suffix_shift(char c) {
  switch (std::tolower(static_cast<unsigned char>(c))) {
    case 'k': return 10;
    case 'm': return 20;
    case 'g': return 30;
    case 't': return 40;
    default: return -1;
  }
}

// Writes a human form of a limit for the error message, e.g. "64K" or "4294967295".
std::string size_text(uint64_t v) {
  static const char* kUnits[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && v != 0 && v % 1024 == 0) v /= 1024, ++u;
  return std::to_string(v) + kUnits[u];
}

}  // namespace

uint64_t parse_byte_size(const std::string& text, const char* flag, uint64_t min, uint64_t max) {
  auto bad = [&](const char* why) -> uint64_t {
    fail("%s: '%s' is not a size: %s (e.g. 8M, 256K, 3.5G or a byte count, between %s and %s)", flag, text.c_str(),
         why, size_text(min).c_str(), size_text(max).c_str());
  };
  size_t i = 0;
  // Integer part, with overflow checked digit by digit.
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (whole > (UINT64_MAX - d) / 10) return bad("too large");
    whole = whole * 10 + d;
  }
  // Fraction: kept as numerator / denominator, at most 9 digits (finer than a byte at 1T).
  uint64_t frac = 0, denom = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits)
      if (denom < 1000000000) frac = frac * 10 + static_cast<uint64_t>(text[i] - '0'), denom *= 10;
  }
  if (digits == 0) return bad("no number");
  int shift = 0;
  if (i < text.size() && (shift = suffix_shift(text[i])) >= 0) {
    ++i;
    if (i < text.size() && (text[i] == 'i' || text[i] == 'I')) ++i;
    if (i < text.size() && (text[i] == 'b' || text[i] == 'B')) ++i;
  } else {
    shift = 0;
    if (i < text.size() && (text[i] == 'b' || text[i] == 'B')) ++i;
  }
  if (i != text.size()) return bad("unexpected characters");
  if (shift > 0 && whole > (UINT64_MAX >> shift)) return bad("too large");
  if (shift == 0 && frac != 0) return bad("a fraction of a byte");
  const uint64_t bytes_whole = whole << shift;
  const uint64_t bytes_frac = static_cast<uint64_t>((static_cast<unsigned __int128>(frac) << shift) / denom);
  if (bytes_whole > UINT64_MAX - bytes_frac) return bad("too large");
  const uint64_t bytes = bytes_whole + bytes_frac;
  if (bytes < min || bytes > max) return bad("out of range");
  return bytes;
}

}  // namespace hexllm
