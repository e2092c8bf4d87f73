// ROPE: rotation angles worked out by hand for normal and NEOX pairing, partial rotation,
// frequency factors and scale, and YaRN.
#include <gtest/gtest.h>

#include <cmath>

#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

RopeParams params(int n_dims, int mode, float base) {
  RopeParams p;
  p.n_dims = n_dims;
  p.mode = mode;
  p.freq_base = base;
  return p;
}

TEST(RefRope, UnitPairAtPositionOne) {
  Harness h;
  // Pair (1, 0) at position 1: the first pair's angle is pos * base^0 = 1.
  Tensor* y = rope(h.ctx, h.f32({2, 1, 1}, {1, 0}), h.i32({1}, {1}), nullptr, params(2, kRopeNormal, 1.0f));
  h.run(y);
  expect_near(y, {std::cos(1.0), std::sin(1.0)});
}

TEST(RefRope, NormalAndNeoxPairing) {
  Harness h;
  // head_dim 4, base 100, pos 2: pair 0 turns by 2, pair 1 by 2 * 100^(-2/4) = 0.2.
  Tensor* x = h.f32({4, 1, 1}, {1, 0, 0, 1});
  Tensor* pos = h.i32({1}, {2});
  Tensor* normal = rope(h.ctx, x, pos, nullptr, params(4, kRopeNormal, 100.0f));
  Tensor* neox = rope(h.ctx, x, pos, nullptr, params(4, kRopeNeox, 100.0f));
  h.run({normal, neox});
  // Normal pairs (0, 1), (2, 3): (1, 0) -> (cos 2, sin 2); (0, 1) -> (-sin 0.2, cos 0.2).
  expect_near(normal, {std::cos(2.0), std::sin(2.0), -std::sin(0.2), std::cos(0.2)});
  // NEOX pairs (0, 2), (1, 3): (1, 0) -> (cos 2, sin 2) in slots 0, 2; (0, 1) in slots 1, 3.
  expect_near(neox, {std::cos(2.0), -std::sin(0.2), std::sin(2.0), std::cos(0.2)});
}

TEST(RefRope, PartialRotationPassesThrough) {
  Harness h;
  Tensor* y =
      rope(h.ctx, h.f32({4, 1, 1}, {1, 0, 5, 6}), h.i32({1}, {3}), nullptr, params(2, kRopeNormal, 10000.0f));
  Tensor* yn =
      rope(h.ctx, h.f32({4, 1, 1}, {1, 0, 5, 6}), h.i32({1}, {3}), nullptr, params(2, kRopeNeox, 10000.0f));
  h.run({y, yn});
  expect_near(y, {std::cos(3.0), std::sin(3.0), 5, 6});
  expect_near(yn, {std::cos(3.0), std::sin(3.0), 5, 6});
}

TEST(RefRope, FreqFactorsAndScale) {
  Harness h;
  // base 100, pos 4, factors (2, 4), freq_scale 0.5:
  // pair 0: 4 / 2 * 0.5 = 1; pair 1: 4 * 100^(-1/2) / 4 * 0.5 = 0.05.
  RopeParams p = params(4, kRopeNormal, 100.0f);
  p.freq_scale = 0.5f;
  Tensor* y = rope(h.ctx, h.f32({4, 1, 1}, {1, 0, 1, 0}), h.i32({1}, {4}), h.f32({2}, {2, 4}), p);
  h.run(y);
  expect_near(y, {std::cos(1.0), std::sin(1.0), std::cos(0.05), std::sin(0.05)});
}

TEST(RefRope, PositionPerTokenSharedByHeads) {
  Harness h;
  // [2, 2 heads, 3 tokens], all pairs (1, 0); token t at pos (0, 1, 5).
  std::vector<float> x;
  for (int i = 0; i < 6; i++) x.insert(x.end(), {1, 0});
  Tensor* y =
      rope(h.ctx, h.f32({2, 2, 3}, x), h.i32({3}, {0, 1, 5}), nullptr, params(2, kRopeNormal, 10000.0f));
  h.run(y);
  std::vector<double> want;
  for (double pos : {0.0, 1.0, 5.0})
    for (int head = 0; head < 2; head++) want.insert(want.end(), {std::cos(pos), std::sin(pos)});
  expect_near(y, want);
}

TEST(RefRope, Yarn) {
  Harness h;
  // n_dims 8 (4 pairs), base 10000, n_ctx_orig 4096, beta_fast 32, beta_slow 1, freq_scale 1/4.
  // Correction dims d(b) = 8 ln(4096 / (2 pi b)) / (2 ln 10000): d(32) = 1.309 -> low = 1,
  // d(1) = 2.814 -> high = 3. Ramp per pair i: 1 - clamp((i - low) / (high - low)) = 1, 1, 0.5, 0,
  // so pairs 0 and 1 extrapolate, pair 3 interpolates, pair 2 is halfway. The magnitude grows by
  // 1 + 0.1 ln(4).
  RopeParams p = params(8, kRopeNormal, 10000.0f);
  p.n_ctx_orig = 4096;
  p.freq_scale = 0.25f;
  p.ext_factor = 1.0f;
  p.beta_fast = 32.0f;
  p.beta_slow = 1.0f;
  const double pos = 100.0;
  Tensor* y = rope(h.ctx, h.f32({8, 1, 1}, {1, 0, 1, 0, 1, 0, 1, 0}), h.i32({1}, {(int32_t)pos}), nullptr, p);
  h.run(y);
  const double ramp[4] = {1.0, 1.0, 0.5, 0.0};
  const double mscale = 1.0 + 0.1 * std::log(4.0);
  std::vector<double> want;
  for (int i = 0; i < 4; i++) {
    const double extrap = pos * std::pow(10000.0, -2.0 * i / 8);
    const double theta = 0.25 * extrap * (1.0 - ramp[i]) + extrap * ramp[i];
    want.push_back(mscale * std::cos(theta));
    want.push_back(mscale * std::sin(theta));
  }
  expect_near(y, want, 2e-6);
}

}  // namespace
}  // namespace hexllm::backend::test
