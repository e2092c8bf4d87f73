// End to end: a pseudo-random graph computed in memory shared by the MemoryPlan gives exactly
// the results of the same graph with a private buffer per tensor. Any storage reused too
// early would change a result.
#include <gtest/gtest.h>

#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

struct Built {
  std::vector<Tensor*> inputs;   // unbound leaves, filled after binding
  std::vector<Tensor*> outputs;  // flagged outputs, in creation order
  Graph graph;
};

Built build(Context& ctx, uint32_t seed) {
  auto next = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  Built b;
  auto input = [&](Type type, std::initializer_list<int64_t> ne) {
    Tensor* t = ctx.new_tensor(type, ne);
    t->flags |= kFlagInput;
    b.inputs.push_back(t);
    return t;
  };
  std::vector<Tensor*> pool;  // F32 [16, 8]
  for (int i = 0; i < 3; i++) pool.push_back(input(Type::F32, {16, 8}));
  Tensor* idx = input(Type::I32, {4});
  Tensor* pos = input(Type::I32, {8});
  Tensor* mask = input(Type::F32, {16, 8});
  for (int i = 0; i < 250; i++) {
    Tensor* a = pool[pool.size() - 1 - next() % std::min<size_t>(pool.size(), 6)];
    Tensor* c = pool[next() % pool.size()];
    Tensor* t = nullptr;
    switch (next() % 12) {
      case 0: t = add(ctx, a, c); break;
      case 1: t = mul(ctx, a, scale(ctx, c, 0.5f, 0.25f)); break;
      case 2: t = silu(ctx, a); break;
      case 3: t = rms_norm(ctx, a, 1e-5f); break;
      case 4: t = soft_max(ctx, a, mask, 0.5f, 0.0f); break;
      case 5: t = pad(ctx, mul_mat(ctx, a, c), 8, 0, 0, 0); break;  // [8, 8] -> [16, 8]
      case 6: t = set_rows(ctx, cont(ctx, a), view_2d(ctx, c, 16, 4, c->nb[1], 0), idx); break;
      case 7: {
        Tensor* r = rope(ctx, reshape_3d(ctx, cont(ctx, a), 4, 4, 8), pos, nullptr, RopeParams{4, 0});
        t = reshape_2d(ctx, r, 16, 8);
        break;
      }
      case 8:
        t = concat(ctx, view_2d(ctx, a, 8, 8, a->nb[1], 0), view_2d(ctx, c, 8, 8, c->nb[1], 32), 0);
        break;
      case 9: t = reshape_2d(ctx, cont(ctx, transpose(ctx, a)), 16, 8); break;
      case 10: {
        Tensor* h16 = input(Type::F16, {16, 8});
        t = gelu(ctx, cpy(ctx, a, h16));
        break;
      }
      default: t = tanh(ctx, a); break;
    }
    if (next() % 19 == 0) {
      t->flags |= kFlagOutput;
      b.outputs.push_back(t);
    }
    pool.push_back(t);
  }
  pool.back()->flags |= kFlagOutput;
  b.outputs.push_back(pool.back());
  for (Tensor* o : b.outputs) b.graph.expand(o);
  return b;
}

void fill_inputs(const Built& b) {
  uint32_t seed = 5;
  for (Tensor* t : b.inputs) {
    if (t->data == nullptr) continue;  // in a branch that no output reads
    const int64_t n = t->n_elements();
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1664525u + 1013904223u;
      const float v = (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
      if (t->type == Type::I32)
        static_cast<int32_t*>(t->data)[i] = (int32_t)((seed >> 8) % 8);  // rows, positions
      if (t->type == Type::F32) static_cast<float*>(t->data)[i] = v;
      if (t->type == Type::F16) static_cast<uint16_t*>(t->data)[i] = fp32_to_fp16(v);
    }
  }
}

TEST(RefGraphExec, MemoryPlanMatchesPrivateBuffers) {
  for (uint32_t seed : {3u, 99u}) {
    // Shared memory from the plan.
    Context ctx1;
    Built planned = build(ctx1, seed);
    MemoryPlan plan(planned.graph);
    std::vector<uint8_t> arena(plan.size() + 128);
    uint8_t* base = arena.data() + (128 - reinterpret_cast<uintptr_t>(arena.data()) % 128) % 128;
    plan.bind(base);
    fill_inputs(planned);
    RefBackend(1).compute(planned.graph.nodes());

    // A private buffer per tensor that owns storage; views bound in execution order.
    Context ctx2;
    Built separate = build(ctx2, seed);
    std::vector<std::vector<uint8_t>> owned;
    auto own = [&](Tensor* t) {
      owned.emplace_back(t->n_bytes() + 16);
      t->data = owned.back().data();
    };
    for (Tensor* t : separate.graph.leafs()) own(t);
    for (Tensor* t : separate.graph.nodes()) {
      if (t->view_src == nullptr)
        own(t);
      else
        t->data = static_cast<uint8_t*>(t->view_src->data) + t->view_offs;
    }
    fill_inputs(separate);
    RefBackend(1).compute(separate.graph.nodes());

    ASSERT_EQ(planned.outputs.size(), separate.outputs.size());
    size_t private_bytes = 0;
    for (const auto& o : owned) private_bytes += o.size();
    EXPECT_LT(plan.size(), private_bytes / 4);  // memory was actually shared
    for (size_t i = 0; i < planned.outputs.size(); i++)
      EXPECT_EQ(bits(planned.outputs[i]), bits(separate.outputs[i])) << "output " << i << " seed " << seed;
  }
}

}  // namespace
}  // namespace hexllm::backend::test
