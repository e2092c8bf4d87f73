#include "htp-host/op_cache.h"

#include <cstring>

namespace hexllm::htp_host {

size_t OpCache::Hash::operator()(const OpKey& k) const {
  // FNV-1a over 64-bit words (the key is a multiple of 8 bytes).
  static_assert(sizeof(OpKey) % 8 == 0, "OpKey hashes in 8-byte words");
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const uint8_t*>(&k);
  for (size_t i = 0; i < sizeof k; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

bool OpCache::Equal::operator()(const OpKey& a, const OpKey& b) const { return std::memcmp(&a, &b, sizeof a) == 0; }

const OpCache::Entry* OpCache::find(const OpKey& key) const {
  const auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

void OpCache::insert(const OpKey& key, const Entry& entry) {
  if (map_.size() >= kMaxEntries) map_.clear();
  map_.insert_or_assign(key, entry);
}

}  // namespace hexllm::htp_host
