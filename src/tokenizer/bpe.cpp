// Byte-level BPE as llama.cpp runs it on `tokenizer.ggml.merges`.
#include <queue>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace hexllm::tokenizer::detail {

namespace {

struct Symbol {
  int prev;
  int next;
  size_t offset;
  size_t n;
};

struct Bigram {
  int left;
  int right;
  int32_t rank;
  size_t size;
};

struct BigramOrder {
  // priority_queue pops the "largest": lowest rank first, then the leftmost pair.
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

void bpe_encode_word(const BpeModel& m, std::string_view word, std::vector<int32_t>& out) {
  if (word.empty()) return;
  if (m.ignore_merges) {
    if (const int32_t id = m.ids->find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }

  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t off = 0; off < word.size();) {
    const size_t n = std::min(unicode::utf8_len(static_cast<uint8_t>(word[off])), word.size() - off);
    const int idx = static_cast<int>(symbols.size());
    symbols.push_back({idx - 1, off + n == word.size() ? -1 : idx + 1, off, n});
    off += n;
  }

  std::string key;  // "left right", reused
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    key.assign(word.substr(l.offset, l.n));
    key += ' ';
    key.append(word.substr(r.offset, r.n));
    const int32_t rank = m.ranks.find(key);
    if (rank < 0) return;
    queue.push({left, right, rank, l.n + r.n});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[b.left];
    Symbol& r = symbols[b.right];
    // Symbols only grow, so a pair whose total length changed is outdated.
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    const std::string_view piece = word.substr(s.offset, s.n);
    if (const int32_t id = m.ids->find(piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    // Not a token: fall back to its single bytes that are tokens (llama.cpp drops the rest).
    for (size_t k = 0; k < piece.size(); ++k) {
      if (const int32_t id = m.ids->find(piece.substr(k, 1)); id >= 0) out.push_back(id);
    }
  }
}

}  // namespace hexllm::tokenizer::detail
