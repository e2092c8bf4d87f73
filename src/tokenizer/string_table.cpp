#include "tokenizer/string_table.h"

namespace hexllm::tokenizer::detail {

uint32_t StringTable::hash_of(std::string_view s) {
  // FNV-1a with a final mix: keys are a few bytes long, where this is as fast as anything.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

void StringTable::build_from(const std::vector<std::string>* keys, const std::vector<int32_t>& picked,
                             bool last_wins) {
  keys_ = keys;
  size_t cap = 16;
  while (cap * 7 < picked.size() * 10) cap *= 2;  // load factor <= 0.7
  slots_.assign(cap, Slot{0, -1});
  const size_t mask = cap - 1;

  // Hashes first, so the slot of a key a few steps ahead can be prefetched: the inserts are
  // cache misses into a table of several MiB, and overlapping them is most of the build time.
  std::vector<uint32_t> hashes(picked.size());
  for (size_t k = 0; k < picked.size(); ++k) hashes[k] = hash_of((*keys)[picked[k]]);
  constexpr size_t kAhead = 16;
  for (size_t k = 0; k < picked.size(); ++k) {
    if (k + kAhead < picked.size()) __builtin_prefetch(&slots_[hashes[k + kAhead] & mask], 1);
    const int32_t index = picked[k];
    const uint32_t h = hashes[k];
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.index < 0) {
        s = Slot{h, index};
        break;
      }
      if (s.hash == h && (*keys)[s.index] == (*keys)[index]) {
        if (last_wins) s.index = index;
        break;
      }
    }
  }
}

int32_t StringTable::find(std::string_view key) const {
  if (slots_.empty()) return -1;
  const uint32_t h = hash_of(key);
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index < 0) return -1;
    if (s.hash == h && (*keys_)[s.index] == key) return s.index;
  }
}

}  // namespace hexllm::tokenizer::detail
