#include "synth/bpe_learn.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "synth/corpus.h"

namespace hexllm::synth {

namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

bool printable_byte(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

struct ByteTables {
  std::array<std::string, 256> to_unicode;
  std::array<uint8_t, 256> order;
  ByteTables() {
    int n_remapped = 0, pos = 0;
    for (int b = 0; b < 256; ++b)
      if (printable_byte(b)) {
        to_unicode[b] = utf8(static_cast<uint32_t>(b));
        order[pos++] = static_cast<uint8_t>(b);
      }
    for (int b = 0; b < 256; ++b)
      if (!printable_byte(b)) {
        to_unicode[b] = utf8(static_cast<uint32_t>(256 + n_remapped++));
        order[pos++] = static_cast<uint8_t>(b);
      }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables t;
  return t;
}

bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Length of an English contraction ('s 't 'm 'd 're 've 'll) at s[i] == '\'', else 0.
size_t contraction(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) return 0;
  const char a = lower(s[i + 1]);
  const char b = i + 2 < s.size() ? lower(s[i + 2]) : '\0';
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  return 0;
}

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

const std::array<std::string, 256>& byte_to_unicode() { return byte_tables().to_unicode; }
const std::array<uint8_t, 256>& byte_token_order() { return byte_tables().order; }

std::vector<std::string> pre_split(std::string_view s) {
  std::vector<std::string> out;
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t j = i;
    if (c == '\'' && contraction(s, i) > 0) {
      j = i + contraction(s, i);
    } else if (!is_space(c) || (c == ' ' && i + 1 < n && !is_space(static_cast<unsigned char>(s[i + 1])) &&
                                !is_digit(static_cast<unsigned char>(s[i + 1])))) {
      size_t k = c == ' ' ? i + 1 : i;  // optional leading space
      const unsigned char first = static_cast<unsigned char>(s[k]);
      if (is_letter(first)) {
        while (k < n && is_letter(static_cast<unsigned char>(s[k]))) ++k;
      } else if (is_digit(first)) {
        const size_t end = k + 3;
        while (k < n && k < end && is_digit(static_cast<unsigned char>(s[k]))) ++k;
      } else {
        while (k < n) {
          const unsigned char d = static_cast<unsigned char>(s[k]);
          if (is_space(d) || is_letter(d) || is_digit(d)) break;
          ++k;
        }
      }
      j = k;
    } else {
      size_t k = i;
      while (k < n && is_space(static_cast<unsigned char>(s[k]))) ++k;
      // Leave the run's last space to a following word, as "\s+(?!\S)" does.
      if (k < n && k - i > 1 && s[k - 1] == ' ') --k;
      j = k;
    }
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

LearnedBpe learn_bpe(std::string_view text, size_t max_tokens) {
  LearnedBpe bpe;
  const auto& order = byte_token_order();
  const auto& mapped = byte_to_unicode();
  int32_t byte_id[256];
  for (int i = 0; i < 256; ++i) {
    byte_id[order[i]] = i;
    bpe.tokens.push_back(mapped[order[i]]);
  }
  std::unordered_map<std::string, int32_t> token_id;
  for (int i = 0; i < 256; ++i) token_id.emplace(bpe.tokens[i], i);

  // Unique pre-tokens with their counts; std::map keeps the order (and so ties) deterministic.
  std::map<std::string, int64_t> counts;
  for (std::string& w : pre_split(text)) ++counts[w];
  struct Word {
    std::vector<int32_t> syms;
    int64_t freq;
  };
  std::vector<Word> words;
  for (const auto& [w, f] : counts) {
    Word word{{}, f};
    for (const char ch : w) word.syms.push_back(byte_id[static_cast<unsigned char>(ch)]);
    words.push_back(std::move(word));
  }

  std::unordered_map<uint64_t, int64_t> pairs;
  auto count_pairs = [&](const Word& w, int64_t sign) {
    for (size_t k = 0; k + 1 < w.syms.size(); ++k) pairs[pair_key(w.syms[k], w.syms[k + 1])] += sign * w.freq;
  };
  for (const Word& w : words) count_pairs(w, 1);

  while (bpe.tokens.size() < max_tokens) {
    uint64_t best = 0;
    int64_t best_count = 0;
    for (const auto& [key, cnt] : pairs)
      if (cnt > best_count || (cnt == best_count && cnt > 0 && key < best)) {
        best = key;
        best_count = cnt;
      }
    if (best_count <= 0) break;
    const int32_t a = static_cast<int32_t>(best >> 32), b = static_cast<int32_t>(best & 0xffffffffu);
    const std::string merged = bpe.tokens[a] + bpe.tokens[b];
    auto [it, is_new] = token_id.emplace(merged, static_cast<int32_t>(bpe.tokens.size()));
    if (is_new) bpe.tokens.push_back(merged);
    const int32_t result = it->second;
    bpe.merges.emplace_back(a, b);
    bpe.merge_result.push_back(result);

    for (Word& w : words) {
      bool has = false;
      for (size_t k = 0; k + 1 < w.syms.size() && !has; ++k) has = w.syms[k] == a && w.syms[k + 1] == b;
      if (!has) continue;
      count_pairs(w, -1);
      std::vector<int32_t> next;
      next.reserve(w.syms.size());
      for (size_t k = 0; k < w.syms.size(); ++k) {
        if (k + 1 < w.syms.size() && w.syms[k] == a && w.syms[k + 1] == b) {
          next.push_back(result);
          ++k;
        } else {
          next.push_back(w.syms[k]);
        }
      }
      w.syms = std::move(next);
      count_pairs(w, 1);
    }
    // Drop exhausted pairs so the scan above stays short.
    std::erase_if(pairs, [](const auto& kv) { return kv.second <= 0; });
  }
  return bpe;
}

const LearnedBpe& builtin_bpe() {
  static const LearnedBpe bpe = learn_bpe(builtin_corpus(), SIZE_MAX);
  return bpe;
}

}  // namespace hexllm::synth
