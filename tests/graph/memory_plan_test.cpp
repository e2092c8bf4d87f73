// MemoryPlan: reuse without overlap between tensors that are live at the same time, inputs and
// outputs kept, bound tensors left alone, views bound to their root.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "base/error.h"
#include "graph/graph.h"
#include "graph/ops.h"

namespace hexllm::graph {
namespace {

// A buffer aligned to 4096 bytes (more than any plan asks for).
struct Buffer {
  explicit Buffer(size_t n) : raw(new uint8_t[n + 4096]) {
    base = raw.get() + (4096 - reinterpret_cast<uintptr_t>(raw.get()) % 4096) % 4096;
  }
  std::unique_ptr<uint8_t[]> raw;
  uint8_t* base;
};

// The lifetime of a planned tensor, from the definition: from the node that creates it (-1 for
// leaves) to the last node that touches its storage through any tensor sharing it (itself, a
// view, a SET_ROWS/CPY into it); forever for inputs, outputs and tensors nobody reads.
struct Lifetime {
  long first, last;
};

std::map<const Tensor*, Lifetime> lifetimes(const Graph& g, const std::set<const Tensor*>& planned) {
  const long kForever = 1L << 40;
  std::map<const Tensor*, Lifetime> life;
  for (const Tensor* t : planned) life[t] = {-1, -1};
  const auto& nodes = g.nodes();
  for (long i = 0; i < (long)nodes.size(); i++) {
    if (planned.count(nodes[i]) != 0) life[nodes[i]].first = i;
    std::vector<const Tensor*> touched = {nodes[i]};
    for (const Tensor* s : nodes[i]->src)
      if (s != nullptr) touched.push_back(s);
    for (const Tensor* t : touched) {
      auto it = life.find(storage_root(t));
      if (it != life.end()) it->second.last = std::max(it->second.last, i);
    }
  }
  std::set<const Tensor*> read;
  for (const Tensor* n : nodes)
    for (const Tensor* s : n->src) read.insert(s);
  auto keep = [&](const Tensor* t) {
    if (t->has_flag(kFlagOutput) || t->has_flag(kFlagInput) || t->op == Op::NONE || read.count(t) == 0) {
      auto it = life.find(storage_root(t));
      if (it != life.end()) it->second.last = kForever;
    }
  };
  for (const Tensor* t : g.leafs()) keep(t);
  for (const Tensor* t : nodes) keep(t);
  return life;
}

// Brute force: every pair of planned tensors whose lifetimes meet must not share a byte.
// Returns the number of planned pairs that share memory (at different times).
int expect_no_conflicts(const Graph& g, const std::set<const Tensor*>& planned, const Buffer& buf,
                        size_t size, size_t alignment) {
  const auto life = lifetimes(g, planned);
  std::vector<const Tensor*> ts(planned.begin(), planned.end());
  for (const Tensor* t : ts) {
    EXPECT_NE(t->data, nullptr);
    if (t->data == nullptr) return 0;
    const auto* p = static_cast<const uint8_t*>(t->data);
    EXPECT_EQ((uintptr_t)(p - buf.base) % alignment, 0u);
    EXPECT_LE(p + t->n_bytes(), buf.base + size);
  }
  int overlaps_checked = 0;
  for (size_t i = 0; i < ts.size(); i++) {
    for (size_t j = i + 1; j < ts.size(); j++) {
      const auto* a = static_cast<const uint8_t*>(ts[i]->data);
      const auto* b = static_cast<const uint8_t*>(ts[j]->data);
      const bool share_bytes = a < b + ts[j]->n_bytes() && b < a + ts[i]->n_bytes();
      if (!share_bytes) continue;
      overlaps_checked++;
      const Lifetime la = life.at(ts[i]), lb = life.at(ts[j]);
      const bool both_live = la.first <= lb.last && lb.first <= la.last;
      EXPECT_FALSE(both_live) << "tensors " << ts[i]->name << " [" << la.first << ", " << la.last << "] and "
                              << ts[j]->name << " [" << lb.first << ", " << lb.last << "] share memory";
    }
  }
  return overlaps_checked;
}

// Tensors the plan must place: unbound leaves and unbound computed non-views.
std::set<const Tensor*> to_plan(const Graph& g) {
  std::set<const Tensor*> out;
  for (const Tensor* t : g.leafs())
    if (t->data == nullptr && t->view_src == nullptr) out.insert(t);
  for (const Tensor* t : g.nodes())
    if (t->data == nullptr && t->view_src == nullptr) out.insert(t);
  return out;
}

TEST(MemoryPlan, ChainReusesTwoBuffers) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {1024});
  x->flags |= kFlagInput;
  Tensor* t = x;
  for (int i = 0; i < 10; i++) t = silu(ctx, t);
  Graph g;
  g.expand(t);
  MemoryPlan plan(g);
  // Without reuse: 11 tensors of 4096 bytes. With it: the input, plus two buffers that the
  // chain alternates between (each step reads one and writes the other).
  EXPECT_LT(plan.size(), 11u * 4096u);
  EXPECT_EQ(plan.size(), 3u * 4096u);
  Buffer buf(plan.size());
  plan.bind(buf.base);
  expect_no_conflicts(g, to_plan(g), buf, plan.size(), 128);
  EXPECT_EQ(x->data, buf.base);  // inputs are placed first
}

TEST(MemoryPlan, InputsOutputsAndBoundTensors) {
  Context ctx;
  float weight_data[64 * 4] = {};
  Tensor* w = ctx.new_tensor(Type::F32, {64, 4});
  w->data = weight_data;
  w->flags |= kFlagWeight;
  Tensor* x = ctx.new_tensor(Type::F32, {64, 2});
  x->flags |= kFlagInput;
  Tensor* h = mul_mat(ctx, w, x);  // [4, 2]
  h->flags |= kFlagOutput;
  Tensor* t = h;
  for (int i = 0; i < 6; i++) t = exp(ctx, neg(ctx, t));
  Graph g;
  g.expand(t);
  MemoryPlan plan(g, 64);
  Buffer buf(plan.size());
  plan.bind(buf.base);
  EXPECT_EQ(w->data, weight_data);  // not planned
  const auto* xp = static_cast<const uint8_t*>(x->data);
  const auto* hp = static_cast<const uint8_t*>(h->data);
  for (const Tensor* n : g.nodes()) {
    if (n == h) continue;
    const auto* p = static_cast<const uint8_t*>(n->data);
    EXPECT_FALSE(p < xp + x->n_bytes() && xp < p + n->n_bytes()) << "input reused";
    EXPECT_FALSE(p < hp + h->n_bytes() && hp < p + n->n_bytes()) << "output reused";
  }
  expect_no_conflicts(g, to_plan(g), buf, plan.size(), 64);
}

TEST(MemoryPlan, ViewKeepsRootAlive) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {256});
  Tensor* a = neg(ctx, x);
  Tensor* v = view_1d(ctx, a, 128, 512);  // second half of a
  Tensor* b = neg(ctx, x);
  Tensor* c = neg(ctx, x);
  Tensor* s = add(ctx, view_1d(ctx, b, 128, 0), view_1d(ctx, c, 128, 0));
  Tensor* e = add(ctx, v, s);
  Graph g;
  g.expand(a);
  g.expand(e);  // order: a, v, b, view, c, view, s, e
  MemoryPlan plan(g);
  Buffer buf(plan.size());
  plan.bind(buf.base);
  // Nothing reads a itself after it is made, but e reads it through v: b, c and s are made while
  // a is still live, so none of them may take its place.
  EXPECT_EQ(v->data, static_cast<uint8_t*>(a->data) + 512);
  EXPECT_NE(b->data, a->data);
  EXPECT_NE(c->data, a->data);
  EXPECT_NE(s->data, a->data);
  expect_no_conflicts(g, to_plan(g), buf, plan.size(), 128);
}

TEST(MemoryPlan, SetRowsAndCpyAreViewsOfTheirDestination) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {8, 4});
  Tensor* dst = neg(ctx, x);  // planned destination
  Tensor* rows = ctx.new_tensor(Type::F32, {8, 1});
  Tensor* idx = ctx.new_tensor(Type::I32, {1});
  Tensor* upd = set_rows(ctx, dst, rows, idx);
  Tensor* out = sqr(ctx, upd);
  std::vector<uint16_t> cache_data(8 * 4);
  Tensor* cache = ctx.new_tensor(Type::F16, {8, 4});
  cache->data = cache_data.data();
  Tensor* c = cpy(ctx, out, cache);
  Graph g;
  g.expand(c);
  MemoryPlan plan(g);
  Buffer buf(plan.size());
  plan.bind(buf.base);
  EXPECT_EQ(upd->data, dst->data);
  EXPECT_EQ(c->data, cache_data.data());
  expect_no_conflicts(g, to_plan(g), buf, plan.size(), 128);
}

// A pseudo-random graph mixing every kind of storage: inputs, weights, computed nodes, views,
// reshapes, transposes, in-place writes and outputs.
Graph random_graph(Context& ctx, uint32_t seed, std::vector<float>& weight_store) {
  auto next = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  std::vector<Tensor*> pool;  // all [16, 8] F32 tensors
  for (int i = 0; i < 3; i++) {
    Tensor* in = ctx.new_tensor(Type::F32, {16, 8});
    in->flags |= kFlagInput;
    in->set_name("in%d", i);
    pool.push_back(in);
  }
  weight_store.assign(16 * 8, 0.0f);
  Tensor* w = ctx.new_tensor(Type::F32, {16, 8});
  w->data = weight_store.data();
  pool.push_back(w);
  Graph g;
  for (int i = 0; i < 400; i++) {
    Tensor* a = pool[next() % pool.size()];
    Tensor* b = pool[pool.size() - 1 - next() % std::min<size_t>(pool.size(), 12)];
    Tensor* t = nullptr;
    switch (next() % 9) {
      case 0: t = add(ctx, a, b); break;
      case 1: t = silu(ctx, b); break;
      case 2: t = mul_mat(ctx, transpose(ctx, cont(ctx, transpose(ctx, a))), b); break;  // [8, 8]
      case 3: t = reshape_2d(ctx, cont(ctx, b), 16, 8); break;
      case 4: t = scale(ctx, view_2d(ctx, b, 16, 8, b->nb[1], 0), 2.0f); break;
      case 5:
        t = set_rows(ctx, cont(ctx, a), view_2d(ctx, b, 16, 2, b->nb[1], 0), ctx.new_tensor(Type::I32, {2}));
        break;
      case 6:
        t = concat(ctx, view_2d(ctx, a, 8, 8, a->nb[1], 0), view_2d(ctx, b, 8, 8, b->nb[1], 32), 0);
        break;
      case 7: t = mul(ctx, a, b); break;
      default: t = sqr(ctx, a); break;
    }
    if (t->ne[0] != 16 || t->ne[1] != 8) t = pad(ctx, t, (int)(16 - t->ne[0]), (int)(8 - t->ne[1]), 0, 0);
    t->set_name("t%d", i);
    if (next() % 23 == 0) t->flags |= kFlagOutput;
    pool.push_back(t);
    if (next() % 37 == 0) g.expand(t);  // some intermediate results are expanded early
  }
  g.expand(pool.back());
  return g;
}

TEST(MemoryPlan, RandomGraphHasNoLiveOverlap) {
  for (uint32_t seed : {1u, 7u, 42u, 1234u}) {
    Context ctx;
    std::vector<float> weights;
    Graph g = random_graph(ctx, seed, weights);
    MemoryPlan plan(g, 256);
    size_t no_reuse = 0;
    const auto planned = to_plan(g);
    for (const Tensor* t : planned) no_reuse += (t->n_bytes() + 255) / 256 * 256;
    EXPECT_LT(plan.size(), no_reuse);
    Buffer buf(plan.size());
    plan.bind(buf.base);
    EXPECT_GT(expect_no_conflicts(g, planned, buf, plan.size(), 256), 0) << "no memory was reused";
    for (const Tensor* t : g.nodes()) {
      ASSERT_NE(t->data, nullptr) << t->name;
      if (t->view_src != nullptr) {
        EXPECT_EQ(t->data, static_cast<uint8_t*>(t->view_src->data) + t->view_offs);
      }
    }
  }
}

TEST(MemoryPlan, BadArguments) {
  Context ctx;
  Graph g;
  g.expand(neg(ctx, ctx.new_tensor(Type::F32, {4})));
  EXPECT_THROW(MemoryPlan(g, 100), Error);
  MemoryPlan plan(g, 128);
  EXPECT_THROW(plan.bind(nullptr), Error);
  Buffer buf(plan.size() + 1);
  EXPECT_THROW(plan.bind(buf.base + 1), Error);
}

}  // namespace
}  // namespace hexllm::graph
