#include "htp-host/graph_cache.h"

#include <cstring>

#include "base/hash.h"

namespace hexllm::htp_host {

namespace {

void add_tensor(const graph::Tensor& t, std::vector<uint64_t>* key) {
  key->push_back(static_cast<uint64_t>(t.type) | static_cast<uint64_t>(t.flags) << 32);
  for (int d = 0; d < 4; ++d) key->push_back(static_cast<uint64_t>(t.ne[d]));
  for (int d = 0; d < 4; ++d) key->push_back(static_cast<uint64_t>(t.nb[d]));
  key->push_back(reinterpret_cast<uintptr_t>(t.data));
  // A weight's device copy is found by its storage root (a model tensor, the same every token),
  // and a view's offset names the bytes within it.
  const graph::Tensor* root = graph::storage_root(&t);
  key->push_back(root->has_flag(graph::kFlagWeight) ? reinterpret_cast<uintptr_t>(root) : 0);
  key->push_back(static_cast<uint64_t>(t.view_offs));
}

}  // namespace

void GraphCache::key_of(const graph::Graph& graph, std::vector<uint64_t>* key) {
  key->clear();
  for (const graph::Tensor* node : graph.nodes()) {
    if (graph::op_is_layout(node->op)) continue;
    uint32_t src_mask = 0;
    for (int k = 0; k < graph::kMaxSrc; ++k)
      if (node->src[k] != nullptr) src_mask |= 1u << k;
    key->push_back(static_cast<uint64_t>(node->op) | static_cast<uint64_t>(src_mask) << 32);
    static_assert(sizeof(node->params) % 8 == 0, "params hashed as words");
    const size_t at = key->size();
    key->resize(at + sizeof(node->params) / 8);
    std::memcpy(key->data() + at, node->params, sizeof(node->params));
    add_tensor(*node, key);
    for (const graph::Tensor* src : node->src)
      if (src != nullptr) add_tensor(*src, key);
  }
}

size_t GraphCache::Hash::operator()(const std::vector<uint64_t>& k) const {
  return hash_bytes(k.data(), k.size() * sizeof(uint64_t));
}

const PreparedGraph* GraphCache::find(const std::vector<uint64_t>& key) const {
  const auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

const PreparedGraph& GraphCache::insert(const std::vector<uint64_t>& key, PreparedGraph prepared) {
  if (map_.size() >= kMaxEntries) map_.clear();
  return map_.insert_or_assign(key, std::move(prepared)).first->second;
}

}  // namespace hexllm::htp_host
