// FLASH_ATTN_EXT: hand-computed weights for two keys, masks, soft-capping, sinks, ALiBi, the
// GQA head mapping, permuted F16 cache views; and equality with the same attention composed
// from MUL_MAT, SOFT_MAX and friends on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

const float kInf = std::numeric_limits<float>::infinity();

struct TwoKeys {
  Harness h;
  Tensor* q = h.f32({2, 1, 1}, {1, 0});
  Tensor* k = h.floats(Type::F16, {2, 2, 1}, {1, 0, 0, 1});  // k0 = (1, 0), k1 = (0, 1)
  Tensor* v = h.floats(Type::F16, {2, 2, 1}, {1, 2, 3, 4});  // v0 = (1, 2), v1 = (3, 4)
};

TEST(RefFlashAttn, TwoKeysByHand) {
  TwoKeys t;
  Tensor* plain = flash_attn_ext(t.h.ctx, t.q, t.k, t.v, nullptr, 1.0f, 0.0f, 0.0f);
  Tensor* masked =
      flash_attn_ext(t.h.ctx, t.q, t.k, t.v, t.h.floats(Type::F16, {2, 1}, {0, -kInf}), 1.0f, 0.0f, 0.0f);
  Tensor* capped = flash_attn_ext(t.h.ctx, t.q, t.k, t.v, nullptr, 1.0f, 0.0f, 0.5f);
  Tensor* sunk = flash_attn_ext(t.h.ctx, t.q, t.k, t.v, nullptr, 1.0f, 0.0f, 0.0f, t.h.f32({1}, {0}));
  Tensor* scaled = flash_attn_ext(t.h.ctx, t.q, t.k, t.v, nullptr, 2.0f, 0.0f, 0.0f);
  t.h.run({plain, masked, capped, sunk, scaled});
  // Scores (1, 0): p = (e, 1) / (e + 1) = (0.7311, 0.2689); out = p0 v0 + p1 v1.
  expect_near(plain, {1.5378828427399904, 2.5378828427399904});
  expect_near(masked, {1, 2});
  // Soft-capped score 0.5 tanh(1 / 0.5) for key 0, 0 for key 1.
  const double p0 = 1.0 / (1.0 + std::exp(-0.5 * std::tanh(2.0)));
  expect_near(capped, {p0 * 1 + (1 - p0) * 3, p0 * 2 + (1 - p0) * 4});
  // A sink of 0 adds e^0 = 1 to the denominator only.
  const double e = std::exp(1.0);
  expect_near(sunk, {(e * 1 + 3) / (e + 2), (e * 2 + 4) / (e + 2)});
  // Scale 2: scores (2, 0).
  const double p2 = 1.0 / (1.0 + std::exp(-2.0));
  expect_near(scaled, {p2 * 1 + (1 - p2) * 3, p2 * 2 + (1 - p2) * 4});
}

TEST(RefFlashAttn, GqaHeadMapping) {
  Harness h;
  // 4 query heads over 2 KV heads: heads 0, 1 read KV head 0; heads 2, 3 read KV head 1.
  Tensor* q = h.f32({2, 1, 4}, {1, 0, 1, 0, 1, 0, 1, 0});
  Tensor* k = h.f32({2, 1, 2}, {1, 0, 1, 0});
  Tensor* v = h.f32({2, 1, 2}, {1, 1, 2, 2});
  Tensor* y = flash_attn_ext(h.ctx, q, k, v, nullptr, 1.0f, 0.0f, 0.0f);
  h.run(y);
  EXPECT_EQ(y->ne[1], 4);  // [Dv, n_head, n_q]
  expect_near(y, {1, 1, 1, 1, 2, 2, 2, 2});
}

TEST(RefFlashAttn, Alibi) {
  Harness h;
  // 3 heads on one KV head, zero queries: scores are slope * mask with mask (0, -1);
  // slopes 1/16, 1/256, 1/4 (see RefSoftMax.Alibi).
  Tensor* q = h.f32({2, 1, 3}, std::vector<float>(6, 0.0f));
  Tensor* k = h.f32({2, 2, 1}, {1, 0, 0, 1});
  Tensor* v = h.f32({1, 2, 1}, {0, 1});
  Tensor* y = flash_attn_ext(h.ctx, q, k, v, h.floats(Type::F16, {2, 1}, {0, -1}), 1.0f, 8.0f, 0.0f);
  h.run(y);
  std::vector<double> want;
  for (double slope : {1.0 / 16, 1.0 / 256, 1.0 / 4})
    want.push_back(std::exp(-slope) / (1.0 + std::exp(-slope)));
  expect_near(y, want);
}

TEST(RefFlashAttn, PermutedF16CacheMatchesContiguousF32) {
  const int64_t D = 4, H = 2, n_kv = 6, n_q = 2, n_head = 4;
  // The cache is laid out [D, H, ctx] (one row per position holding every head); attention
  // reads it as [D, n_kv, H] through a permutation. Values are F16-exact so both paths see the
  // same numbers.
  std::vector<float> kc = Harness::random_values((size_t)(D * H * n_kv), 21);
  std::vector<float> vc = Harness::random_values((size_t)(D * H * n_kv), 22);
  for (float& x : kc) x = fp16_to_fp32(fp32_to_fp16(x));
  for (float& x : vc) x = fp16_to_fp32(fp32_to_fp16(x));
  std::vector<float> kt, vt;  // [D, n_kv, H] order
  for (int64_t hh = 0; hh < H; hh++)
    for (int64_t j = 0; j < n_kv; j++)
      for (int64_t d = 0; d < D; d++) {
        kt.push_back(kc[(size_t)(d + D * (hh + H * j))]);
        vt.push_back(vc[(size_t)(d + D * (hh + H * j))]);
      }
  Harness h;
  Tensor* q = h.random(Type::F32, {D, n_q, n_head}, 23);
  Tensor* mask = h.floats(Type::F16, {n_kv, n_q}, {0, 0, 0, 0, -kInf, -kInf, 0, 0, 0, 0, 0, -kInf});
  Tensor* k_cache = h.floats(Type::F16, {D, H, n_kv}, kc);
  Tensor* v_cache = h.floats(Type::F16, {D, H, n_kv}, vc);
  Tensor* kv = permute(h.ctx, k_cache, 0, 2, 1, 3);
  Tensor* vv = permute(h.ctx, v_cache, 0, 2, 1, 3);
  Tensor* from_cache = flash_attn_ext(h.ctx, q, kv, vv, mask, 0.5f, 0.0f, 0.0f);
  Tensor* from_copy =
      flash_attn_ext(h.ctx, q, h.f32({D, n_kv, H}, kt), h.f32({D, n_kv, H}, vt), mask, 0.5f, 0.0f, 0.0f);
  h.run({from_cache, from_copy});
  EXPECT_FALSE(kv->is_contiguous());
  EXPECT_EQ(bits(from_cache), bits(from_copy));
}

struct AttentionCase {
  int64_t D = 8, Dv = 6, n_q = 3, n_kv = 5, n_head = 4, n_head_kv = 2;
  float scale = 0.3f, max_bias = 0.0f, softcap = 0.0f;
  bool sinks = false;
};

// Both the fused op and its composition from other ops, on the same random inputs.
std::pair<Tensor*, Tensor*> build_attention(Harness& h, const AttentionCase& c) {
  Tensor* q = h.random(Type::F32, {c.D, c.n_q, c.n_head}, 31, -2.0f, 2.0f);
  Tensor* k = h.random(Type::F32, {c.D, c.n_kv, c.n_head_kv}, 32, -2.0f, 2.0f);
  Tensor* v = h.random(Type::F32, {c.Dv, c.n_kv, c.n_head_kv}, 33);
  std::vector<float> m;
  for (int64_t i = 0; i < c.n_q; i++)
    for (int64_t j = 0; j < c.n_kv; j++) m.push_back(j > i + 2 ? -kInf : 0.1f * (float)(j - i));
  Tensor* mask = h.f32({c.n_kv, c.n_q}, m);
  Tensor* sinks = c.sinks ? h.random(Type::F32, {c.n_head}, 34) : nullptr;
  Tensor* fused = flash_attn_ext(h.ctx, q, k, v, mask, c.scale, c.max_bias, c.softcap, sinks);

  Tensor* kq = mul_mat(h.ctx, k, q);  // [n_kv, n_q, n_head]; head h reads KV head h / 2
  float softmax_scale = c.scale;
  if (c.softcap != 0.0f) {
    kq = scale(h.ctx, tanh(h.ctx, scale(h.ctx, kq, c.scale / c.softcap)), c.softcap);
    softmax_scale = 1.0f;
  }
  Tensor* p = soft_max(h.ctx, kq, mask, softmax_scale, c.max_bias, sinks);
  Tensor* vt = cont(h.ctx, transpose(h.ctx, v));                    // [n_kv, Dv, n_head_kv]
  Tensor* kqv = mul_mat(h.ctx, vt, p);                              // [Dv, n_q, n_head]
  Tensor* composed = cont(h.ctx, permute(h.ctx, kqv, 0, 2, 1, 3));  // [Dv, n_head, n_q]
  return {fused, composed};
}

TEST(RefFlashAttn, EqualsComposition) {
  AttentionCase plain;
  AttentionCase alibi;
  alibi.max_bias = 2.0f;
  AttentionCase capped;
  capped.softcap = 1.5f;
  AttentionCase sunk;
  sunk.sinks = true;
  AttentionCase mha;
  mha.n_head_kv = 4;
  for (const AttentionCase& c : {plain, alibi, capped, sunk, mha}) {
    Harness h;
    auto [fused, composed] = build_attention(h, c);
    h.run({fused, composed});
    ASSERT_TRUE(same_shape(*fused, *composed));
    const double err = nmse(values(composed), values(fused));
    EXPECT_LT(err, 1e-10) << "max_bias " << c.max_bias << " softcap " << c.softcap << " sinks " << c.sinks;
  }
}

TEST(RefFlashAttn, ThreadsAreBitIdentical) {
  AttentionCase c;
  c.n_q = 7;
  c.n_kv = 33;
  c.D = 16;
  c.Dv = 16;
  c.softcap = 3.0f;
  std::vector<uint32_t> first;
  for (int n_threads : {1, 2, 3}) {
    Harness h;
    Tensor* y = build_attention(h, c).first;
    h.run(y, n_threads);
    if (n_threads == 1) first = bits(y);
    EXPECT_EQ(bits(y), first) << n_threads << " threads";
  }
}

}  // namespace
}  // namespace hexllm::backend::test
