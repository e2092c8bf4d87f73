#include "graph/graph.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <unordered_map>

#include "base/error.h"

namespace hexllm::graph {

namespace {

// Dependency `i` of t: the sources in order, then the storage root of views (which a SET_ROWS
// or CPY result reaches only that way). nullptr when there is none at this position.
Tensor* dependency(Tensor* t, int i) { return i < kMaxSrc ? t->src[i] : t->view_src; }

const char* label(const Tensor* t) { return t->name[0] != '\0' ? t->name : op_name(t->op); }

}  // namespace

uint64_t Graph::seal() {
  static std::atomic<uint64_t> seals{0};
  seal_ = seals.fetch_add(1, std::memory_order_relaxed) + 1;
  return seal_;
}

void Graph::reorder(const std::vector<uint32_t>& order) {
  if (order.size() != nodes_.size()) fail("Graph::reorder: %zu indices for %zu nodes", order.size(), nodes_.size());
  std::vector<uint8_t> used(nodes_.size(), 0);
  std::vector<Tensor*> next(nodes_.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= nodes_.size() || used[order[i]] != 0) fail("Graph::reorder: not a permutation");
    used[order[i]] = 1;
    next[i] = nodes_[order[i]];
  }
  nodes_ = std::move(next);
  seal_ = 0;
}

// Iterative post-order DFS: a model graph is a chain of thousands of nodes, deeper than the
// stack would like.
void Graph::expand(Tensor* root) {
  if (root == nullptr) fail("Graph::expand: null tensor");
  seal_ = 0;
  if (seen_.count(root) != 0) return;
  struct Frame {
    Tensor* t;
    int next;  // next dependency to look at
  };
  std::vector<Frame> stack;
  seen_[root] = false;
  stack.push_back({root, 0});
  while (!stack.empty()) {
    const size_t top = stack.size() - 1;
    if (stack[top].next <= kMaxSrc) {
      Tensor* dep = dependency(stack[top].t, stack[top].next++);
      if (dep == nullptr) continue;
      auto it = seen_.find(dep);
      if (it == seen_.end()) {
        seen_[dep] = false;
        stack.push_back({dep, 0});
      } else if (!it->second) {
        fail("Graph::expand: cycle through '%s' (%s)", label(dep), op_name(dep->op));
      }
      continue;
    }
    Tensor* t = stack[top].t;
    stack.pop_back();
    seen_[t] = true;
    (t->op == Op::NONE ? leafs_ : nodes_).push_back(t);
  }
}

namespace {

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Free blocks of the buffer, sorted by offset; `end` is the high-water mark.
class FreeList {
 public:
  size_t alloc(size_t size) {
    // Best fit: the smallest block that holds `size` (the lowest such on ties).
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (it->size >= size && (best == blocks_.end() || it->size < best->size)) best = it;
    if (best != blocks_.end()) {
      const size_t offset = best->offset;
      best->offset += size;
      best->size -= size;
      if (best->size == 0) blocks_.erase(best);
      return offset;
    }
    // Nothing fits: grow the buffer, starting in the last block if it touches the end.
    if (!blocks_.empty() && blocks_.back().offset + blocks_.back().size == end_) {
      const size_t offset = blocks_.back().offset;
      blocks_.pop_back();
      end_ = offset + size;
      return offset;
    }
    const size_t offset = end_;
    end_ += size;
    return offset;
  }

  void free(size_t offset, size_t size) {
    auto it = std::lower_bound(blocks_.begin(), blocks_.end(), offset,
                               [](const Block& b, size_t off) { return b.offset < off; });
    it = blocks_.insert(it, Block{offset, size});
    // Merge with the next block, then with the previous one.
    if (std::next(it) != blocks_.end() && it->offset + it->size == std::next(it)->offset) {
      it->size += std::next(it)->size;
      blocks_.erase(std::next(it));
    }
    if (it != blocks_.begin() && std::prev(it)->offset + std::prev(it)->size == it->offset) {
      std::prev(it)->size += it->size;
      blocks_.erase(it);
    }
  }

  size_t end() const { return end_; }

 private:
  struct Block {
    size_t offset;
    size_t size;
  };
  std::vector<Block> blocks_;
  size_t end_ = 0;
};

// A tensor that owns storage the plan must provide.
bool needs_storage(const Tensor* t) { return t->view_src == nullptr && t->data == nullptr; }

}  // namespace

MemoryPlan::MemoryPlan(const Graph& graph, size_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    fail("MemoryPlan: alignment %zu is not a power of two", alignment);
  const std::vector<Tensor*>& nodes = graph.nodes();

  // Liveness per storage root: the last node that reads it (through any view) or writes it
  // (SET_ROWS/CPY into it). Roots that must survive the graph are pinned.
  struct Life {
    size_t last = 0;
    bool pinned = false;
  };
  std::unordered_map<const Tensor*, Life> life;
  std::unordered_map<const Tensor*, int> n_readers;
  for (size_t i = 0; i < nodes.size(); i++) {
    const Tensor* node = nodes[i];
    if (node->view_src != nullptr) {
      Life& l = life[storage_root(node)];
      l.last = std::max(l.last, i);
    }
    for (const Tensor* s : node->src) {
      if (s == nullptr) continue;
      n_readers[s]++;
      Life& l = life[storage_root(s)];
      l.last = std::max(l.last, i);
    }
  }
  auto pin_if_needed = [&](const Tensor* t) {
    const bool keep = t->has_flag(kFlagOutput) || t->has_flag(kFlagInput) || t->has_flag(kFlagCache) ||
                      n_readers.count(t) == 0;
    if (keep) life[storage_root(t)].pinned = true;
  };
  for (const Tensor* t : graph.leafs()) pin_if_needed(t);
  for (const Tensor* t : nodes) pin_if_needed(t);

  // Inputs first, never freed; then the nodes in execution order, each root freed after its
  // last use (its own buffer is taken before its sources are released: no op runs in place).
  FreeList heap;
  auto slot_size = [&](const Tensor* t) { return align_up(std::max<size_t>(t->n_bytes(), 1), alignment); };
  auto place = [&](Tensor* t) {
    slots_.push_back({t, heap.alloc(slot_size(t))});
    return slots_.back();
  };
  for (Tensor* t : graph.leafs()) {
    if (needs_storage(t)) place(t);
    if (t->view_src != nullptr) views_.push_back(t);
  }
  std::vector<std::vector<Slot>> free_after(nodes.size());
  for (size_t i = 0; i < nodes.size(); i++) {
    Tensor* node = nodes[i];
    if (node->view_src != nullptr) views_.push_back(node);
    if (needs_storage(node)) {
      const Slot slot = place(node);
      const Life& l = life[node];
      if (!l.pinned) free_after[l.last].push_back(slot);
    }
    for (const Slot& s : free_after[i]) heap.free(s.offset, slot_size(s.tensor));
  }
  size_ = heap.end();
}

void MemoryPlan::bind(void* base) const {
  if (size_ > 0 && base == nullptr) fail("MemoryPlan::bind: null base for %zu bytes", size_);
  if (reinterpret_cast<uintptr_t>(base) % alignment_ != 0)
    fail("MemoryPlan::bind: base %p is not aligned to %zu bytes", base, alignment_);
  for (const Slot& s : slots_) s.tensor->data = static_cast<uint8_t*>(base) + s.offset;
  for (Tensor* v : views_) {
    if (v->view_src->data == nullptr)
      fail("MemoryPlan::bind: view '%s' (%s) of '%s': the viewed tensor has no data", label(v),
           op_name(v->op), label(v->view_src));
    v->data = static_cast<uint8_t*>(v->view_src->data) + v->view_offs;
  }
}

}  // namespace hexllm::graph
