// Elementwise, gated and normalization ops against hand-derived values (constants computed
// from the formulas in ops.h, to double precision).
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

const std::vector<float> kX = {-2.0f, -0.5f, 0.0f, 1.5f};

TEST(RefUnary, HandValues) {
  Harness h;
  Tensor* x = h.f32({4}, kX);
  Tensor* sc = scale(h.ctx, x, 2.0f, 1.0f);
  Tensor* cl = clamp(h.ctx, x, -1.0f, 1.0f);
  Tensor* sq = sqr(h.ctx, x);
  Tensor* rt = sqrt(h.ctx, h.f32({4}, {0.0f, 1.0f, 4.0f, 2.25f}));
  Tensor* si = silu(h.ctx, x);
  Tensor* ge = gelu(h.ctx, x);
  Tensor* gq = gelu_quick(h.ctx, x);
  Tensor* sg = sigmoid(h.ctx, x);
  Tensor* ex = exp(h.ctx, x);
  Tensor* ng = neg(h.ctx, x);
  Tensor* sp = softplus(h.ctx, h.f32({5}, {-2.0f, -0.5f, 0.0f, 1.5f, 100.0f}));
  Tensor* th = tanh(h.ctx, x);
  h.run({sc, cl, sq, rt, si, ge, gq, sg, ex, ng, sp, th});
  expect_near(sc, {-3.0, 0.0, 1.0, 4.0});
  expect_near(cl, {-1.0, -0.5, 0.0, 1.0});
  expect_near(sq, {4.0, 0.25, 0.0, 2.25});
  expect_near(rt, {0.0, 1.0, 2.0, 1.5});
  expect_near(si, {-0.2384058440442351, -0.1887703343990727, 0.0, 1.2263617142904655});
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  expect_near(ge, {-0.04540230591222494, -0.15428599017485606, 0.0, 1.3995715769802328});
  expect_near(gq, {-0.06434137685579186, -0.1496115633936199, 0.0, 1.3916621984470765});
  expect_near(sg,
              {1.0 / (1.0 + std::exp(2.0)), 1.0 / (1.0 + std::exp(0.5)), 0.5, 1.0 / (1.0 + std::exp(-1.5))});
  expect_near(ex, {std::exp(-2.0), std::exp(-0.5), 1.0, std::exp(1.5)});
  expect_near(ng, {2.0, 0.5, 0.0, -1.5});
  expect_near(sp, {0.1269280110429725, 0.4740769841801067, 0.6931471805599453, 1.7014132779827524, 100.0});
  expect_near(th, {std::tanh(-2.0), std::tanh(-0.5), 0.0, std::tanh(1.5)});
}

TEST(RefUnary, F16Input) {
  Harness h;
  Tensor* x = h.floats(Type::F16, {3}, {1.0f, -0.25f, 2.5f});  // exact in F16
  Tensor* y = scale(h.ctx, x, 4.0f);
  h.run(y);
  EXPECT_EQ(y->type, Type::F32);
  expect_near(y, {4.0, -1.0, 10.0});
}

TEST(RefGlu, SwigluGegluSplitAndSwapped) {
  Harness h;
  Tensor* a = h.f32({2}, {0.0f, 1.0f});
  Tensor* b = h.f32({2}, {3.0f, 2.0f});
  Tensor* two = swiglu(h.ctx, a, b);
  Tensor* ab = h.f32({4}, {0.0f, 1.0f, 3.0f, 2.0f});  // [gate | up]
  Tensor* split = swiglu(h.ctx, ab, nullptr);
  Tensor* swapped = swiglu(h.ctx, ab, nullptr);
  swapped->params[0] = 1;  // act(second half) * first half
  Tensor* gg = geglu(h.ctx, a, b);
  h.run({two, split, swapped, gg});
  const double silu1 = 0.7310585786300049;  // 1 * sigmoid(1)
  expect_near(two, {0.0, 2.0 * silu1});
  expect_near(split, {0.0, 2.0 * silu1});
  expect_near(swapped, {0.0 * 3.0 / (1.0 + std::exp(-3.0)), 1.0 * 2.0 / (1.0 + std::exp(-2.0))});
  expect_near(gg, {0.0, 2.0 * 0.8411919906082768});
}

TEST(RefGlu, SwigluOai) {
  Harness h;
  // gate 10 is limited to 7, up -8 clamped to -7; gate 0.5, up 0.25 stay.
  Tensor* a = h.f32({2}, {10.0f, 0.5f});
  Tensor* b = h.f32({2}, {-8.0f, 0.25f});
  Tensor* y = swiglu_oai(h.ctx, a, b, 1.702f, 7.0f);
  h.run(y);
  const double alpha = 1.702f;
  expect_near(
      y, {7.0 / (1.0 + std::exp(-alpha * 7.0)) * (-7.0 + 1.0), 0.5 / (1.0 + std::exp(-alpha * 0.5)) * 1.25});
}

TEST(RefBinary, BroadcastAddSubMulDiv) {
  Harness h;
  Tensor* a = h.f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor* row = h.f32({3, 1}, {10, 20, 30});
  Tensor* col = h.f32({1, 2}, {100, 200});
  Tensor* one = h.f32({1}, {2});
  Tensor* add_row = add(h.ctx, a, row);
  Tensor* add_col = add(h.ctx, a, col);
  Tensor* sub_row = sub(h.ctx, a, row);
  Tensor* mul_col = mul(h.ctx, a, col);
  Tensor* div_one = div(h.ctx, a, one);
  h.run({add_row, add_col, sub_row, mul_col, div_one});
  expect_near(add_row, {11, 22, 33, 14, 25, 36});
  expect_near(add_col, {101, 102, 103, 204, 205, 206});
  expect_near(sub_row, {-9, -18, -27, -6, -15, -24});
  expect_near(mul_col, {100, 200, 300, 800, 1000, 1200});
  expect_near(div_one, {0.5, 1, 1.5, 2, 2.5, 3});
}

TEST(RefBinary, BroadcastOverHeads) {
  Harness h;
  // a [2, 1, 4], b [2, 1, 2]: head i2 adds b's head i2 % 2.
  Tensor* a = h.f32({2, 1, 4}, {0, 0, 0, 0, 0, 0, 0, 0});
  Tensor* b = h.f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor* y = add(h.ctx, a, b);
  h.run(y);
  expect_near(y, {1, 2, 3, 4, 1, 2, 3, 4});
}

TEST(RefBinary, AddId) {
  Harness h;
  Tensor* a = h.f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});     // [ne0, n_used, n_tok]
  Tensor* b = h.f32({2, 3}, {100, 200, 300, 400, 500, 600});  // 3 expert biases
  Tensor* ids = h.i32({2, 2}, {2, 0, 1, 1});
  Tensor* y = add_id(h.ctx, a, b, ids);
  h.run(y);
  expect_near(y, {501, 602, 103, 204, 305, 406, 307, 408});

  Harness bad;
  Tensor* y2 =
      add_id(bad.ctx, bad.f32({2, 1, 1}, {0, 0}), bad.f32({2, 3}, {0, 0, 0, 0, 0, 0}), bad.i32({1, 1}, {3}));
  EXPECT_THROW(bad.run(y2), Error);
}

TEST(RefNorm, RmsNormNormL2) {
  Harness h;
  const float eps = 1e-5f;
  Tensor* x = h.f32({4, 2}, {1, 2, 3, 4, 3, 4, 0, 0});
  Tensor* rms = rms_norm(h.ctx, x, eps);
  Tensor* nrm = norm(h.ctx, x, eps);
  Tensor* l2 = l2_norm(h.ctx, x, 1e-6f);
  Tensor* l2_zero = l2_norm(h.ctx, h.f32({2}, {0, 0}), 1e-6f);
  h.run({rms, nrm, l2, l2_zero});
  // Row 0: mean(x^2) = 30 / 4 = 7.5; mean 2.5, var = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  // Row 1: mean(x^2) = 25 / 4; mean 7/4, var = (1.5625 + 5.0625 + 3.0625 + 3.0625) / 4 = 3.1875.
  const double r0 = std::sqrt(7.5 + (double)eps), r1 = std::sqrt(6.25 + (double)eps);
  expect_near(rms, {1 / r0, 2 / r0, 3 / r0, 4 / r0, 3 / r1, 4 / r1, 0, 0});
  const double s0 = std::sqrt(1.25 + (double)eps), s1 = std::sqrt(3.1875 + (double)eps);
  expect_near(nrm, {-1.5 / s0, -0.5 / s0, 0.5 / s0, 1.5 / s0, 1.25 / s1, 2.25 / s1, -1.75 / s1, -1.75 / s1});
  expect_near(l2, {1 / std::sqrt(30.0), 2 / std::sqrt(30.0), 3 / std::sqrt(30.0), 4 / std::sqrt(30.0), 0.6,
                   0.8, 0, 0});
  expect_near(l2_zero, {0, 0});
}

// Each op on a permuted (non-contiguous) view gives exactly what it gives on a contiguous copy
// of that view.
TEST(RefStrides, PermutedInputsMatchContiguousCopies) {
  Harness h;
  Tensor* x = h.random(Type::F32, {6, 4, 3}, 11);
  Tensor* y = h.random(Type::F32, {4, 6, 3}, 12);
  Tensor* p = permute(h.ctx, x, 1, 0, 2, 3);  // [4, 6, 3]
  Tensor* c = cont(h.ctx, p);
  std::vector<std::pair<Tensor*, Tensor*>> pairs;
  auto both = [&](auto&& op) { pairs.push_back({op(p), op(c)}); };
  both([&](Tensor* t) { return silu(h.ctx, t); });
  both([&](Tensor* t) { return gelu(h.ctx, t); });
  both([&](Tensor* t) { return scale(h.ctx, t, 3.0f, 0.5f); });
  both([&](Tensor* t) { return add(h.ctx, t, y); });
  both([&](Tensor* t) { return mul(h.ctx, y, t); });
  both([&](Tensor* t) { return rms_norm(h.ctx, t, 1e-6f); });
  both([&](Tensor* t) { return norm(h.ctx, t, 1e-6f); });
  both([&](Tensor* t) { return soft_max(h.ctx, t, nullptr, 0.7f, 0.0f); });
  both([&](Tensor* t) { return sum_rows(h.ctx, t); });
  both([&](Tensor* t) { return swiglu(h.ctx, t, y); });
  both([&](Tensor* t) { return argsort(h.ctx, t, SortOrder::Ascending); });
  both([&](Tensor* t) { return cont(h.ctx, t); });
  both([&](Tensor* t) { return get_rows(h.ctx, t, h.i32({2, 3}, {5, 0, 1, 1, 3, 2})); });
  both([&](Tensor* t) { return mul_mat(h.ctx, t, y); });
  both([&](Tensor* t) { return mul_mat(h.ctx, y, t); });
  std::vector<Tensor*> outs;
  for (auto& [a, b] : pairs) {
    outs.push_back(a);
    outs.push_back(b);
  }
  h.run(outs);
  for (size_t i = 0; i < pairs.size(); i++) {
    EXPECT_EQ(bits(pairs[i].first), bits(pairs[i].second))
        << "pair " << i << " " << op_name(pairs[i].first->op);
  }
}

}  // namespace
}  // namespace hexllm::backend::test
