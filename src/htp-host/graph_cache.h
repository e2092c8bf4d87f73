// Prepared graphs by content (docs/DESIGN.md §5, "Graph cache"). A graph's key lists what its
// prepared batches depend on: every compute node's op, op params, type, shape, strides and
// data location, and the same of its sources. Decode graphs repeat token after token (KV length
// padded, token ids, positions and masks reach the device as tensor data), so every decode call
// after the first finds its batches here and skips description, op preparation and batching.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "htp-host/batch_runner.h"

namespace hexllm::htp_host {

struct PreparedGraph {
  bool device_takes_all = false;  // false: some node runs elsewhere (scheduled node by node)
  std::vector<PreparedBatch> batches;
};

class GraphCache {
 public:
  // The key of `graph` into `key` (cleared first).
  static void key_of(const graph::Graph& graph, std::vector<uint64_t>* key);

  const PreparedGraph* find(const std::vector<uint64_t>& key) const;
  // Stores `prepared` under `key`; past kMaxEntries the cache starts over.
  const PreparedGraph& insert(const std::vector<uint64_t>& key, PreparedGraph prepared);
  void clear() { map_.clear(); }
  size_t size() const { return map_.size(); }

  // Prompts of every length make new graphs; decode needs a handful (one per 256-token KV step).
  static constexpr size_t kMaxEntries = 64;

 private:
  struct Hash {
    size_t operator()(const std::vector<uint64_t>& k) const;
  };
  std::unordered_map<std::vector<uint64_t>, PreparedGraph, Hash> map_;
};

}  // namespace hexllm::htp_host
