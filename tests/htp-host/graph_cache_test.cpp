// The graph cache: decode calls after the first find their prepared batches (hits), a hit gives
// the bits a fresh preparation gives (cache on against off, on every architecture family), and a
// key changes with anything the batches depend on.
#include "htp-host/graph_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "graph/context.h"
#include "graph/ops.h"
#include "hexllm/engine.h"
#include "htp-host/htp_backend.h"
#include "synth/synth.h"
#include "tiny_model.h"

namespace hexllm {
namespace {

struct DecodeRun {
  std::vector<float> logits;  // prompt's last row, then each decode step's
  uint64_t hits = 0, misses = 0;
};

DecodeRun decode(const std::string& model, const std::string& graph_cache, int steps) {
  const test::HtpEngine h = test::open_htp_engine(model, graph_cache);
  Engine* e = h.engine.get();
  htp_host::HtpBackend* htp = h.htp;
  DecodeRun r;
  const std::vector<int32_t> prompt = {1, 400, 17, 902, 33};
  e->context->decode(prompt, false);
  r.logits.assign(e->context->last_logits().begin(), e->context->last_logits().end());
  int32_t token = 5;
  for (int i = 0; i < steps; ++i) {
    e->context->decode(std::span<const int32_t>(&token, 1), false);
    r.logits.insert(r.logits.end(), e->context->last_logits().begin(), e->context->last_logits().end());
    token = (token * 31 + 7) % 200;
  }
  r.hits = htp->graph_hits();
  r.misses = htp->graph_misses();
  return r;
}

std::string model_of(const std::string& preset) {
  if (preset == "tiny") return test::tiny_model_path();
  const std::string path = test::generated_model_path("graph-cache-" + preset);
  if (!std::filesystem::exists(path)) {
    synth::GenOptions g;
    g.preset = preset;
    g.n_threads = 1;
    synth::generate_model(g, path);
  }
  return path;
}

class GraphCacheModels : public testing::TestWithParam<std::string> {};

TEST_P(GraphCacheModels, DecodeHitsAndHitsGiveTheBitsOfAFreshPreparation) {
  const std::string model = model_of(GetParam());
  const DecodeRun on = decode(model, "on", 6);
  const DecodeRun off = decode(model, "off", 6);
  // Prompt and first decode step are new graphs; the other five steps repeat the first.
  EXPECT_EQ(on.misses, 2u);
  EXPECT_EQ(on.hits, 5u);
  EXPECT_EQ(off.hits + off.misses, 0u);
  ASSERT_EQ(on.logits.size(), off.logits.size());
  EXPECT_EQ(std::memcmp(on.logits.data(), off.logits.data(), on.logits.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Presets, GraphCacheModels, testing::Values("tiny", "tiny-qwen3moe", "tiny-gemma3"),
                         [](const testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param;
                           for (char& c : s) c = c == '-' ? '_' : c;
                           return s;
                         });

// The prepare stage's mechanisms switch at run time on one engine (the ablation's way): with
// fusions off the device runs no fused op, with them on again it does, and the logits are the
// same bits either way (fused and unfused ops compute the same sums).
TEST(GraphCache, MechanismsSwitchAtRunTime) {
  const test::HtpEngine h = test::open_htp_engine(test::tiny_model_path());
  Engine* e = h.engine.get();
  htp_host::HtpBackend* htp = h.htp;
  ASSERT_NE(htp, nullptr);
  auto step = [&](std::vector<float>* logits) {
    e->context->reset();
    const std::vector<int32_t> prompt = {1, 400, 17};
    e->context->decode(prompt, false);
    const int32_t token = 5;
    e->context->decode(std::span<const int32_t>(&token, 1), false);
    logits->assign(e->context->last_logits().begin(), e->context->last_logits().end());
    const std::vector<uint32_t>& ops = htp->last_opcodes();
    return std::count(ops.begin(), ops.end(), static_cast<uint32_t>(HTP_OP_MUL_MAT_QKV));
  };
  std::vector<float> fused, unfused, again;
  EXPECT_GT(step(&fused), 0);
  htp->set_prepare_mechanisms("none", true, false);
  e->context->rebuild_graph();
  EXPECT_EQ(step(&unfused), 0);
  htp->set_prepare_mechanisms("all", true, true);
  e->context->rebuild_graph();
  EXPECT_GT(step(&again), 0);
  EXPECT_EQ(fused, unfused);
  EXPECT_EQ(fused, again);
  EXPECT_THROW(htp->set_prepare_mechanisms("qkv,nonsense", true, true), Error);
}

// Each thing a prepared batch depends on changes the key: op params, shapes, data location.
TEST(GraphCache, KeyFollowsParamsShapesAndLocations) {
  graph::Context ctx;
  graph::Tensor* a = ctx.new_tensor(Type::F32, {8, 4});
  graph::Tensor* b = ctx.new_tensor(Type::F32, {8, 4});
  std::vector<float> da(32), db(32);
  a->data = da.data();
  b->data = db.data();
  graph::Tensor* s = graph::scale(ctx, graph::add(ctx, a, b), 2.0f);
  std::vector<float> out1(32), out2(32);
  auto key = [&](graph::Tensor* out) {
    graph::Graph g;
    g.expand(out);
    for (graph::Tensor* n : g.nodes())
      if (n->data == nullptr) n->data = out1.data();
    std::vector<uint64_t> k;
    htp_host::GraphCache::key_of(g, &k);
    return k;
  };
  const std::vector<uint64_t> k0 = key(s);
  EXPECT_EQ(key(s), k0);  // the same graph, the same key
  s->set_param_f(0, 3.0f);
  EXPECT_NE(key(s), k0);
  s->set_param_f(0, 2.0f);
  EXPECT_EQ(key(s), k0);
  b->data = out2.data();
  EXPECT_NE(key(s), k0);
  b->data = db.data();
  b->nb[1] = 64;  // another stride
  EXPECT_NE(key(s), k0);
}

// Two bound F32 leaves [8, 4] and a buffer for the nodes built on them.
struct TwoLeaves {
  graph::Context ctx;
  std::vector<float> da = std::vector<float>(32), db = std::vector<float>(32), out = std::vector<float>(32);
  graph::Tensor* a = bound(da);
  graph::Tensor* b = bound(db);
  graph::Tensor* bound(std::vector<float>& data) {
    graph::Tensor* t = ctx.new_tensor(Type::F32, {8, 4});
    t->data = data.data();
    return t;
  }
};

// The entry found last is tried first, by its digest: any change to the graph makes it a miss.
TEST(GraphCache, TheLastEntryFoundIsComparedInFull) {
  TwoLeaves l;
  graph::Context& ctx = l.ctx;
  graph::Tensor *a = l.a, *b = l.b;
  graph::Tensor* s = graph::scale(ctx, graph::add(ctx, a, b), 2.0f);
  graph::Graph g;
  g.expand(s);
  for (graph::Tensor* n : g.nodes()) n->data = l.out.data();

  htp_host::GraphCache cache;
  EXPECT_EQ(cache.lookup(g), nullptr);
  htp_host::PreparedGraph p;
  p.device_takes_all = true;
  cache.store(std::move(p));
  const htp_host::PreparedGraph* hit = cache.lookup(g);
  ASSERT_NE(hit, nullptr);
  EXPECT_TRUE(hit->device_takes_all);
  s->set_param_f(0, 3.0f);
  EXPECT_EQ(cache.lookup(g), nullptr);
  s->set_param_f(0, 2.0f);
  EXPECT_EQ(cache.lookup(g), hit);
  b->ne[0] = 4, b->nb[1] = 16;  // a leaf's shape
  EXPECT_EQ(cache.lookup(g), nullptr);
  b->ne[0] = 8, b->nb[1] = 32;
  EXPECT_EQ(cache.lookup(g), hit);
  s->src[0] = b;  // another edge, same contents everywhere else
  EXPECT_EQ(cache.lookup(g), nullptr);
}

// The digest read from a graph equals the digest of its key, and moves with any change to it,
// including the order of two nodes (the lanes are scrambled between tensors).
TEST(GraphCache, DigestOfAGraphIsTheDigestOfItsKey) {
  TwoLeaves l;
  graph::Context& ctx = l.ctx;
  graph::Tensor *a = l.a, *b = l.b;
  b->flags |= graph::kFlagWeight;
  graph::Tensor* x = graph::scale(ctx, a, 2.0f);
  graph::Tensor* y = graph::scale(ctx, b, 2.0f);
  auto digests = [&](graph::Tensor* first, graph::Tensor* second) {
    graph::Graph g;
    g.expand(first);
    g.expand(second);
    for (graph::Tensor* n : g.nodes()) n->data = l.out.data();
    std::vector<uint64_t> k;
    htp_host::GraphCache::key_of(g, &k);
    const htp_host::GraphDigest from_graph = htp_host::GraphCache::digest_of(g);
    EXPECT_EQ(from_graph, htp_host::GraphCache::digest_of(k));
    return from_graph;
  };
  const htp_host::GraphDigest d0 = digests(x, y);
  EXPECT_EQ(digests(x, y), d0);
  EXPECT_NE(digests(y, x), d0);  // the same tensors in another order
  x->set_param_f(0, 3.0f);
  EXPECT_NE(digests(x, y), d0);
  x->set_param_f(0, 2.0f);
  a->nb[1] = 64;
  EXPECT_NE(digests(x, y), d0);
  a->nb[1] = 32;
  EXPECT_EQ(digests(x, y), d0);
}

// A sealed graph under the seal its entry was found with is that entry without a look at the
// graph: an edit the owner made without unsealing (breaking the promise, on purpose here) is
// not seen. A new seal, an unsealed graph or another graph under its own seal is read again.
TEST(GraphCache, ASealedGraphIsFoundByItsSeal) {
  TwoLeaves l;
  graph::Tensor* s = graph::scale(l.ctx, graph::add(l.ctx, l.a, l.b), 2.0f);
  graph::Graph g;
  g.expand(s);
  for (graph::Tensor* n : g.nodes()) n->data = l.out.data();
  EXPECT_EQ(g.seal_id(), 0u);
  const uint64_t first = g.seal();
  EXPECT_NE(first, 0u);

  htp_host::GraphCache cache;
  EXPECT_EQ(cache.lookup(g), nullptr);
  const htp_host::PreparedGraph* stored = &cache.store({});
  EXPECT_EQ(cache.lookup(g), stored);
  s->set_param_f(0, 3.0f);               // the promise broken: the seal still stands for the graph
  EXPECT_EQ(cache.lookup(g), stored);
  EXPECT_NE(g.seal(), first);            // sealed again: read again, and the edit is a miss
  EXPECT_EQ(cache.lookup(g), nullptr);
  s->set_param_f(0, 2.0f);
  EXPECT_EQ(cache.lookup(g), stored);    // found by digest, and remembered under the new seal
  s->set_param_f(0, 3.0f);
  EXPECT_EQ(cache.lookup(g), stored);
  s->set_param_f(0, 2.0f);

  g.expand(s);  // expand (and reorder) unseal: every lookup reads the graph
  EXPECT_EQ(g.seal_id(), 0u);
  EXPECT_EQ(cache.lookup(g), stored);
  s->set_param_f(0, 3.0f);
  EXPECT_EQ(cache.lookup(g), nullptr);
  s->set_param_f(0, 2.0f);

  graph::Graph other;  // the same content under another seal: found by digest
  other.expand(s);
  other.seal();
  EXPECT_EQ(cache.lookup(other), stored);
  s->set_param_f(0, 3.0f);
  EXPECT_EQ(cache.lookup(g), nullptr);  // g is unsealed: read, and the edit is a miss
}

TEST(GraphCache, StartsOverPastItsBound) {
  htp_host::GraphCache cache;
  for (uint64_t i = 0; i <= htp_host::GraphCache::kMaxEntries; ++i) cache.insert({i}, {});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find({0}), nullptr);
  EXPECT_NE(cache.find({htp_host::GraphCache::kMaxEntries}), nullptr);
}

}  // namespace
}  // namespace hexllm
