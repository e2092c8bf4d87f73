#include "htp-host/graph_cache.h"

#include <cstddef>
#include <cstring>

#include "base/digest.h"

namespace hexllm::htp_host {

namespace {

using graph::Tensor;

// A tensor's words: a header (type, op, flags), then the fields from ne to data as they lie in
// the struct: shape, strides, params, the sources and view source by identity, the view offset
// and the data pointer. Sources are named by identity because each is itself in the key (as a
// node or a leaf), so equal keys mean equal contents and equal edges.
constexpr size_t kFieldsBegin = offsetof(Tensor, ne);
constexpr size_t kFieldsEnd = offsetof(Tensor, data) + sizeof(Tensor::data);
constexpr size_t kFieldWords = (kFieldsEnd - kFieldsBegin) / 8;
constexpr size_t kTensorWords = 1 + kFieldWords;
static_assert(kFieldsEnd - kFieldsBegin ==
                  sizeof(Tensor::ne) + sizeof(Tensor::nb) + sizeof(Tensor::params) + sizeof(Tensor::src) +
                      sizeof(Tensor::view_src) + sizeof(Tensor::view_offs) + sizeof(Tensor::data),
              "the key's fields lie in the tensor without padding");
static_assert((kFieldsEnd - kFieldsBegin) % 8 == 0, "fields copied as words");
static_assert(sizeof(Tensor::type) == 4 && sizeof(Tensor::op) == 2, "header packing");

// A model weight is fixed from load on (its device copy is placed then, by identity), so the
// header alone stands for it: the key reads one cache line of it instead of five. Returns the
// words that count (the rest of the block is zero).
size_t tensor_words(const Tensor& t, uint64_t* w) {
  w[0] = static_cast<uint64_t>(static_cast<uint16_t>(t.type)) | static_cast<uint64_t>(t.op) << 16 |
         static_cast<uint64_t>(t.flags) << 32;
  if (t.op == graph::Op::NONE && t.has_flag(graph::kFlagWeight)) {
    std::memset(w + 1, 0, kFieldWords * 8);
    return 1;
  }
  std::memcpy(w + 1, reinterpret_cast<const uint8_t*>(&t) + kFieldsBegin, kFieldWords * 8);
  return kTensorWords;
}

size_t counted_words(uint64_t header) {
  const auto op = static_cast<graph::Op>(header >> 16 & 0xffff);
  return op == graph::Op::NONE && ((header >> 32) & graph::kFlagWeight) != 0 ? 1 : kTensorWords;
}

// The graph's tensors are read one after another from scattered allocations: fetch a few ahead.
constexpr size_t kPrefetchAhead = 12;
void prefetch(const std::vector<Tensor*>& list, size_t i) {
  if (i + kPrefetchAhead >= list.size()) return;
  const auto* p = reinterpret_cast<const char*>(list[i + kPrefetchAhead]);
  for (size_t line = 0; line < kFieldsEnd; line += 64) __builtin_prefetch(p + line);
}

size_t key_words(const graph::Graph& g) { return (g.nodes().size() + g.leafs().size()) * kTensorWords; }

}  // namespace

void GraphCache::key_of(const graph::Graph& graph, std::vector<uint64_t>* key) {
  key->resize(key_words(graph));
  uint64_t* w = key->data();
  for (const auto* list : {&graph.nodes(), &graph.leafs()})
    for (size_t i = 0; i < list->size(); ++i, w += kTensorWords) {
      prefetch(*list, i);
      tensor_words(*(*list)[i], w);
    }
}

GraphDigest GraphCache::digest_of(const graph::Graph& graph) {
  WordDigest d;
  uint64_t w[kTensorWords];
  for (const auto* list : {&graph.nodes(), &graph.leafs()})
    for (size_t i = 0; i < list->size(); ++i) {
      prefetch(*list, i);
      d.add_block(w, tensor_words(*(*list)[i], w));
    }
  return d.finish();
}

GraphDigest GraphCache::digest_of(const std::vector<uint64_t>& key) {
  WordDigest d;
  size_t at = 0;
  for (; at + kTensorWords <= key.size(); at += kTensorWords) d.add_block(key.data() + at, counted_words(key[at]));
  if (at < key.size()) d.add_block(key.data() + at, key.size() - at);  // not a graph's key: hashed whole
  return d.finish();
}

// Only the bucket depends on it; equality of keys is exact.
size_t GraphCache::KeyHash::operator()(const std::vector<uint64_t>& k) const {
  return static_cast<size_t>(digest_of(k)[0]);
}

const PreparedGraph* GraphCache::lookup(const graph::Graph& graph) {
  lookup_seal_ = graph.seal_id();
  if (last_ != nullptr && lookup_seal_ != 0 && lookup_seal_ == last_seal_) return &last_->second;
  if (last_ != nullptr && digest_of(graph) == last_digest_) {
    last_seal_ = lookup_seal_;
    return &last_->second;
  }
  key_of(graph, &missed_);
  const auto it = map_.find(missed_);
  if (it == map_.end()) return nullptr;
  remember(&*it, lookup_seal_);
  return &it->second;
}

void GraphCache::remember(const Entry* e, uint64_t seal) {
  last_ = e;
  last_digest_ = digest_of(e->first);
  last_seal_ = seal;
}

const PreparedGraph& GraphCache::store(PreparedGraph prepared) {
  const PreparedGraph& stored = insert(missed_, std::move(prepared));
  last_seal_ = lookup_seal_;
  return stored;
}

const PreparedGraph* GraphCache::find(const std::vector<uint64_t>& key) const {
  const auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

const PreparedGraph& GraphCache::insert(const std::vector<uint64_t>& key, PreparedGraph prepared) {
  if (map_.size() >= kMaxEntries) clear();
  const auto it = map_.insert_or_assign(key, std::move(prepared)).first;
  remember(&*it, 0);
  return it->second;
}

}  // namespace hexllm::htp_host
