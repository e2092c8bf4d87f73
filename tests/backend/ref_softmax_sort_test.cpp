// SOFT_MAX (masks, scale, ALiBi, sinks), SUM_ROWS, ARGSORT, TOP_K against hand-derived values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

const float kInf = std::numeric_limits<float>::infinity();

TEST(RefSoftMax, PlainAndMasked) {
  Harness h;
  Tensor* x = h.f32({3}, {1, 2, 3});
  Tensor* plain = soft_max(h.ctx, x, nullptr, 1.0f, 0.0f);
  Tensor* masked = soft_max(h.ctx, x, h.f32({3}, {0, -kInf, 0}), 1.0f, 0.0f);
  Tensor* all_masked = soft_max(h.ctx, x, h.f32({3}, {-kInf, -kInf, -kInf}), 1.0f, 0.0f);
  h.run({plain, masked, all_masked});
  // e^x / (e + e^2 + e^3)
  expect_near(plain, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219});
  // The masked key drops out: e / (e + e^3), e^3 / (e + e^3).
  expect_near(masked, {0.11920292202211755, 0.0, 0.8807970779778824});
  expect_near(all_masked, {0, 0, 0});  // no distribution: zeros by definition
}

TEST(RefSoftMax, ScaleAndF16MaskBroadcastOverHeads) {
  Harness h;
  // a [2, 2 rows, 2 heads], mask [2, 3] F16 (one more row than needed; head dim broadcast).
  Tensor* a = h.f32({2, 2, 2}, {2, 0, 4, 2, 0, 0, 2, 2});
  Tensor* mask = h.floats(Type::F16, {2, 3}, {0, -kInf, 0, 0, 5, 5});
  Tensor* y = soft_max(h.ctx, a, mask, 0.5f, 0.0f);
  h.run(y);
  // Row 0 keeps only key 0. Row 1: scaled logits (2, 1) in head 0, (1, 1) in head 1.
  const double p = 1.0 / (1.0 + std::exp(-1.0));
  expect_near(y, {1, 0, p, 1 - p, 1, 0, 0.5, 0.5});
}

TEST(RefSoftMax, Alibi) {
  Harness h;
  // 3 heads: n_head_log2 = 2, m0 = 2^(-8/2) = 1/16, m1 = 2^(-8/4) = 1/4.
  // Slopes: head 0 m0 = 1/16, head 1 m0^2 = 1/256, head 2 m1^(2 (2 - 2) + 1) = 1/4.
  Tensor* a = h.f32({2, 1, 3}, {0, 0, 0, 0, 0, 0});
  Tensor* mask = h.f32({2, 1}, {0, -1});  // a distance penalty on key 1
  Tensor* y = soft_max(h.ctx, a, mask, 1.0f, 8.0f);
  h.run(y);
  std::vector<double> want;
  for (double slope : {1.0 / 16, 1.0 / 256, 1.0 / 4}) {
    want.push_back(1.0 / (1.0 + std::exp(-slope)));
    want.push_back(std::exp(-slope) / (1.0 + std::exp(-slope)));
  }
  expect_near(y, want);
}

TEST(RefSoftMax, Sinks) {
  Harness h;
  // Logits (0, 0) and a sink of ln 2 per head: denominator 1 + 1 + 2.
  Tensor* a = h.f32({2, 1, 2}, {0, 0, 0, 0});
  Tensor* sinks = h.f32({2}, {(float)std::log(2.0), -kInf});
  Tensor* y = soft_max(h.ctx, a, nullptr, 1.0f, 0.0f, sinks);
  h.run(y);
  expect_near(y, {0.25, 0.25, 0.5, 0.5});
}

TEST(RefSort, SumRows) {
  Harness h;
  Tensor* y = sum_rows(h.ctx, h.f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  h.run(y);
  expect_near(y, {6, 15});
}

TEST(RefSort, ArgsortTiesKeepIndexOrder) {
  Harness h;
  Tensor* x = h.f32({4, 2}, {3, 1, 2, 1, 0, 0, 0, 0});
  Tensor* asc = argsort(h.ctx, x, SortOrder::Ascending);
  Tensor* desc = argsort(h.ctx, x, SortOrder::Descending);
  h.run({asc, desc});
  EXPECT_EQ(asc->type, Type::I32);
  expect_near(asc, {1, 3, 2, 0, 0, 1, 2, 3}, 0.0);
  expect_near(desc, {0, 2, 1, 3, 0, 1, 2, 3}, 0.0);
}

TEST(RefSort, TopK) {
  Harness h;
  Tensor* y = top_k(h.ctx, h.f32({5, 2}, {1, 5, 3, 5, 2, -1, -2, -3, -4, -5}), 3);
  h.run(y);
  EXPECT_EQ(y->ne[0], 3);
  expect_near(y, {1, 3, 2, 0, 1, 2}, 0.0);
}

}  // namespace
}  // namespace hexllm::backend::test
