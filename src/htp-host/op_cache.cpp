#include "htp-host/op_cache.h"

#include <cstring>

#include "base/hash.h"

namespace hexllm::htp_host {

size_t OpCache::Hash::operator()(const OpKey& k) const { return static_cast<size_t>(hash_bytes(&k, sizeof k)); }

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
