// Prepared graphs by content (docs/DESIGN.md §5, "Graph cache"). A graph's key lists what its
// prepared batches depend on: for every tensor of the graph (nodes, views and leaves) its type,
// op, flags, shape, strides, op params, data location and which tensors it reads. Decode graphs
// repeat token after token (the model keeps its graph, the KV length is padded, and token ids,
// positions and masks reach the device as tensor data), so every decode call after the first
// finds its batches here and skips description, op preparation and batching.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "htp-host/batch_runner.h"

namespace hexllm::htp_host {

using GraphDigest = std::array<uint64_t, 2>;

struct PreparedGraph {
  bool device_takes_all = false;  // false: some node runs elsewhere (scheduled node by node)
  std::vector<PreparedBatch> batches;
};

class GraphCache {
 public:
  // The key of `graph` into `key` (resized to fit).
  static void key_of(const graph::Graph& graph, std::vector<uint64_t>* key);
  // A 128-bit digest of the key, from the graph as it is read (no key built) or from a key:
  // both give the same value for the same content.
  static GraphDigest digest_of(const graph::Graph& graph);
  static GraphDigest digest_of(const std::vector<uint64_t>& key);

  // The batches prepared for a graph of this content, or nullptr. A sealed graph under the seal
  // of the entry found last is that entry without a look at the graph (graph::Graph::seal): the
  // model's decode calls hit it that way. Otherwise the entry found last is tried by digest, in
  // one pass over the graph that neither builds nor reads a stored key, and any other lookup
  // compares whole keys.
  const PreparedGraph* lookup(const graph::Graph& graph);
  // Stores `prepared` under the key of the graph the last lookup() missed.
  const PreparedGraph& store(PreparedGraph prepared);

  // By key; past kMaxEntries the cache starts over.
  const PreparedGraph* find(const std::vector<uint64_t>& key) const;
  const PreparedGraph& insert(const std::vector<uint64_t>& key, PreparedGraph prepared);
  void clear() {
    map_.clear();
    last_ = nullptr;
    last_seal_ = 0;
  }
  size_t size() const { return map_.size(); }

  // Prompts of every length make new graphs; decode needs a handful (one per 256-token KV step).
  static constexpr size_t kMaxEntries = 64;

 private:
  struct KeyHash {
    size_t operator()(const std::vector<uint64_t>& k) const;
  };
  using Entry = std::pair<const std::vector<uint64_t>, PreparedGraph>;
  void remember(const Entry* e, uint64_t seal);

  std::unordered_map<std::vector<uint64_t>, PreparedGraph, KeyHash> map_;
  const Entry* last_ = nullptr;
  GraphDigest last_digest_{};
  uint64_t last_seal_ = 0;     // the seal the entry found last was found under (0: none)
  uint64_t lookup_seal_ = 0;   // the seal of the graph of the last lookup
  std::vector<uint64_t> missed_;  // key of the graph the last lookup missed
};

}  // namespace hexllm::htp_host
