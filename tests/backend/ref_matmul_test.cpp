// MUL_MAT and MUL_MAT_ID against products worked out by hand; dequantized and F16 weights;
// batch broadcasting; thread count does not change a bit.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

TEST(RefMulMat, TwoByThreeTimesThreeByTwo) {
  Harness h;
  // a: 2 rows of 3 (M = 2, K = 3); b: 2 rows of 3 (N = 2). out row n = (a0 . b_n, a1 . b_n).
  Tensor* a = h.f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor* b = h.f32({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor* y = mul_mat(h.ctx, a, b);
  Tensor* y16 = mul_mat(h.ctx, h.floats(Type::F16, {3, 2}, {1, 2, 3, 4, 5, 6}),
                        h.floats(Type::BF16, {3, 2}, {7, 8, 9, 10, 11, 12}));
  h.run({y, y16});
  // 1*7 + 2*8 + 3*9 = 50, 4*7 + 5*8 + 6*9 = 122, 1*10 + 2*11 + 3*12 = 68, 4*10 + 5*11 + 6*12 = 167
  expect_near(y, {50, 122, 68, 167}, 0.0);
  expect_near(y16, {50, 122, 68, 167}, 0.0);
}

TEST(RefMulMat, BatchBroadcast) {
  Harness h;
  // a has 2 batches, b has 4: b's batch i uses a's batch i / 2 (in dim 2 and in dim 3).
  Tensor* a = h.f32({2, 1, 2}, {1, 0, 0, 1});
  Tensor* b = h.f32({2, 1, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor* a3 = h.f32({2, 1, 1, 2}, {1, 0, 0, 1});
  Tensor* b3 = h.f32({2, 1, 1, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor* y = mul_mat(h.ctx, a, b);
  Tensor* y3 = mul_mat(h.ctx, a3, b3);
  h.run({y, y3});
  expect_near(y, {1, 3, 6, 8}, 0.0);
  expect_near(y3, {1, 3, 6, 8}, 0.0);
}

TEST(RefMulMat, Q8_0Weights) {
  // Row 0: d = 0.5, q[i] = i - 16; row 1: d = 2, q[i] = i % 3 - 1 (GGUF Q8_0 block layout).
  std::vector<uint8_t> bytes;
  for (int r = 0; r < 2; r++) {
    const uint16_t d = r == 0 ? 0x3800 : 0x4000;
    bytes.push_back((uint8_t)(d & 0xff));
    bytes.push_back((uint8_t)(d >> 8));
    for (int i = 0; i < 32; i++) bytes.push_back((uint8_t)(int8_t)(r == 0 ? i - 16 : i % 3 - 1));
  }
  std::vector<float> bv(32);
  for (int i = 0; i < 32; i++) bv[(size_t)i] = 0.25f * (float)(i % 5);
  Harness h;
  Tensor* y = mul_mat(h.ctx, h.raw(Type::Q8_0, {32, 2}, bytes), h.f32({32, 1}, bv));
  h.run(y);
  double dot0 = 0, dot1 = 0;
  for (int i = 0; i < 32; i++) {
    dot0 += 0.5 * (i - 16) * bv[(size_t)i];
    dot1 += 2.0 * (i % 3 - 1) * bv[(size_t)i];
  }
  expect_near(y, {dot0, dot1}, 0.0);
}

TEST(RefMulMatId, ExpertsByHand) {
  Harness h;
  // Experts (rows of 2): e0 = identity, e1 = 2 * identity, e2 = [[1, 1], [1, -1]].
  Tensor* as = h.f32({2, 2, 3}, {1, 0, 0, 1, 2, 0, 0, 2, 1, 1, 1, -1});
  Tensor* b = h.f32({2, 1, 2}, {1, 2, 3, 4});               // one row per token, shared by both slots
  Tensor* b2 = h.f32({2, 2, 2}, {1, 2, 0, 1, 3, 4, 1, 0});  // one row per (slot, token)
  Tensor* ids = h.i32({2, 2}, {2, 0, 1, 1});
  Tensor* y = mul_mat_id(h.ctx, as, b, ids);
  Tensor* y2 = mul_mat_id(h.ctx, as, b2, ids);
  h.run({y, y2});
  // token 0: e2 (1, 2) = (3, -1), e0 (1, 2) = (1, 2); token 1: e1 (3, 4) = (6, 8) twice.
  expect_near(y, {3, -1, 1, 2, 6, 8, 6, 8}, 0.0);
  // token 0: e2 (1, 2) = (3, -1), e0 (0, 1) = (0, 1); token 1: e1 (3, 4) = (6, 8), e1 (1, 0) = (2, 0).
  expect_near(y2, {3, -1, 0, 1, 6, 8, 2, 0}, 0.0);

  Harness bad;
  Tensor* z =
      mul_mat_id(bad.ctx, bad.f32({2, 1, 2}, {1, 1, 1, 1}), bad.f32({2, 1, 1}, {1, 1}), bad.i32({1, 1}, {2}));
  EXPECT_THROW(bad.run(z), Error);
}

// Random Q8_0 blocks with a sane scale (the quant bytes themselves are arbitrary).
std::vector<uint8_t> random_q8_0(int64_t n_blocks, uint32_t seed) {
  std::vector<float> r = Harness::random_values((size_t)(n_blocks * 33), seed, 0.0f, 1.0f);
  std::vector<uint8_t> out;
  for (int64_t b = 0; b < n_blocks; b++) {
    const uint16_t d = fp32_to_fp16(0.01f + 0.02f * r[(size_t)(b * 33)]);
    out.push_back((uint8_t)(d & 0xff));
    out.push_back((uint8_t)(d >> 8));
    for (int i = 1; i < 33; i++) out.push_back((uint8_t)(int)(r[(size_t)(b * 33 + i)] * 255.0f));
  }
  return out;
}

TEST(RefMulMat, ThreadsAreBitIdentical) {
  std::vector<std::vector<uint32_t>> first;
  for (int n_threads : {1, 2, 3}) {
    Harness h;
    Tensor* wq = h.raw(Type::Q8_0, {64, 37, 2}, random_q8_0(2 * 37 * 2, 41));
    Tensor* wf = h.random(Type::F32, {64, 37, 2}, 42);
    Tensor* x = h.random(Type::F32, {64, 5, 4}, 43);
    Tensor* experts = h.raw(Type::Q8_0, {64, 19, 4}, random_q8_0(2 * 19 * 4, 44));
    Tensor* xe = h.random(Type::F32, {64, 1, 6}, 45);
    Tensor* ids = h.i32({2, 6}, {0, 3, 1, 2, 3, 3, 2, 0, 1, 1, 0, 2});
    std::vector<Tensor*> outs = {mul_mat(h.ctx, wq, x), mul_mat(h.ctx, wf, x),
                                 mul_mat_id(h.ctx, experts, xe, ids)};
    h.run(outs, n_threads);
    for (size_t i = 0; i < outs.size(); i++) {
      if (n_threads == 1) first.push_back(bits(outs[i]));
      EXPECT_EQ(bits(outs[i]), first[i]) << "output " << i << " with " << n_threads << " threads";
    }
  }
}

}  // namespace
}  // namespace hexllm::backend::test
