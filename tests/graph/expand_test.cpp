// Graph::expand: sources before users, call order kept, each tensor once, deep chains.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "graph/graph.h"
#include "graph/ops.h"

namespace hexllm::graph {
namespace {

ptrdiff_t index_of(const std::vector<Tensor*>& v, const Tensor* t) {
  auto it = std::find(v.begin(), v.end(), t);
  return it == v.end() ? -1 : it - v.begin();
}

// Every source of every node precedes it; no tensor appears twice.
void expect_topological(const Graph& g) {
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); i++) {
    EXPECT_EQ(index_of(nodes, nodes[i]), (ptrdiff_t)i) << "duplicate node";
    for (const Tensor* s : nodes[i]->src) {
      if (s == nullptr) continue;
      if (s->op == Op::NONE) {
        EXPECT_GE(index_of(g.leafs(), s), 0);
      } else {
        EXPECT_LT(index_of(nodes, s), (ptrdiff_t)i);
      }
    }
  }
}

TEST(Expand, Diamond) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {4});
  Tensor* a = silu(ctx, x);
  Tensor* b = exp(ctx, x);
  Tensor* c = add(ctx, a, b);
  Tensor* d = mul(ctx, c, a);
  Graph g;
  g.expand(d);
  ASSERT_EQ(g.nodes().size(), 4u);
  ASSERT_EQ(g.leafs().size(), 1u);
  EXPECT_EQ(g.leafs()[0], x);
  // Post-order, sources in src order: a, b, c, d.
  EXPECT_EQ(g.nodes()[0], a);
  EXPECT_EQ(g.nodes()[1], b);
  EXPECT_EQ(g.nodes()[2], c);
  EXPECT_EQ(g.nodes()[3], d);
  expect_topological(g);
  g.expand(d);  // nothing new
  g.expand(c);
  EXPECT_EQ(g.nodes().size(), 4u);
}

TEST(Expand, CallOrderOfIndependentSubgraphs) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {4});
  Tensor* y = ctx.new_tensor(Type::F32, {4});
  Tensor* y1 = neg(ctx, y);
  Tensor* y2 = sqr(ctx, y1);
  Tensor* x1 = neg(ctx, x);
  Tensor* x2 = sqr(ctx, x1);
  Graph g;
  g.expand(x2);  // built last, expanded first
  g.expand(y2);
  ASSERT_EQ(g.nodes().size(), 4u);
  EXPECT_EQ(g.nodes()[0], x1);
  EXPECT_EQ(g.nodes()[1], x2);
  EXPECT_EQ(g.nodes()[2], y1);
  EXPECT_EQ(g.nodes()[3], y2);
  EXPECT_EQ(g.leafs()[0], x);
  EXPECT_EQ(g.leafs()[1], y);
}

TEST(Expand, ViewsAndInPlaceWrites) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {8, 2});
  Tensor* dst = neg(ctx, x);  // a computed destination
  Tensor* rows = ctx.new_tensor(Type::F32, {8, 1});
  Tensor* idx = ctx.new_tensor(Type::I32, {1});
  Tensor* upd = set_rows(ctx, dst, rows, idx);
  Tensor* v = view_1d(ctx, upd, 8, 0);
  Tensor* out = sqr(ctx, v);
  Graph g;
  g.expand(out);
  // dst is reached only through the set_rows view's storage root, and still comes first.
  EXPECT_LT(index_of(g.nodes(), dst), index_of(g.nodes(), upd));
  EXPECT_LT(index_of(g.nodes(), upd), index_of(g.nodes(), v));
  EXPECT_LT(index_of(g.nodes(), v), index_of(g.nodes(), out));
  EXPECT_EQ(g.nodes().size(), 4u);
  EXPECT_EQ(g.leafs().size(), 3u);
  expect_topological(g);
}

TEST(Expand, DeepChainDoesNotRecurse) {
  Context ctx;
  Tensor* t = ctx.new_tensor(Type::F32, {1});
  std::vector<Tensor*> chain;
  for (int i = 0; i < 20000; i++) {
    t = i % 2 == 0 ? neg(ctx, t) : scale(ctx, t, 1.0f);
    chain.push_back(t);
  }
  Graph g;
  g.expand(t);
  ASSERT_EQ(g.nodes().size(), chain.size());
  EXPECT_TRUE(std::equal(chain.begin(), chain.end(), g.nodes().begin()));
}

TEST(Expand, WideSharedSubexpressions) {
  Context ctx;
  Tensor* x = ctx.new_tensor(Type::F32, {4});
  std::vector<Tensor*> level = {x};
  // Every node uses two earlier nodes: many paths to the same tensors.
  for (int i = 0; i < 300; i++) {
    Tensor* a = level[(size_t)i * 7 % level.size()];
    Tensor* b = level[(size_t)i * 13 % level.size()];
    level.push_back(add(ctx, a, b));
  }
  Graph g;
  g.expand(level.back());
  expect_topological(g);
  EXPECT_EQ(g.leafs().size(), 1u);
}

TEST(Expand, NullThrows) {
  Graph g;
  EXPECT_THROW(g.expand(nullptr), Error);
}

}  // namespace
}  // namespace hexllm::graph
