// SentencePiece BPE as llama.cpp runs it on `tokenizer.ggml.scores`.
#include <queue>

#include "base/error.h"
#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace hexllm::tokenizer::detail {

namespace {

struct Symbol {
  int prev;
  int next;
  size_t offset;
  size_t n;  // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t size;
};

struct BigramOrder {
  // priority_queue pops the "largest": highest score first, then the leftmost pair.
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void spm_encode(const SpmModel& m, std::string_view text, std::vector<int32_t>& out) {
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(unicode::utf8_len(static_cast<uint8_t>(text[off])), text.size() - off);
    const int idx = static_cast<int>(symbols.size());
    symbols.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, off, n});
    off += n;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string_view pair = text.substr(symbols[left].offset, symbols[left].n + symbols[right].n);
    const int32_t id = m.ids->find(pair);
    if (id < 0) return;
    queue.push({left, right, (*m.scores)[id], pair.size()});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[b.left];
    Symbol& r = symbols[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  // Merged symbols are tokens by construction; single characters may not be.
  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    const std::string_view piece = text.substr(s.offset, s.n);
    if (const int32_t id = m.ids->find(piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t id = m.byte_tokens[static_cast<uint8_t>(c)];
      if (id < 0) {
        fail("tokenizer: SPM vocab has no byte token <0x%02X> and no unknown token for an unknown character",
             static_cast<unsigned>(static_cast<uint8_t>(c)));
      }
      out.push_back(id);
    }
  }
}

}  // namespace hexllm::tokenizer::detail
