// Data movement: get/set rows (with hand-built Q8_0 blocks and F16 rounding), copies between
// layouts and types, concat, repeat, pad, fill.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ref_harness.h"

namespace hexllm::backend::test {
namespace {

using namespace hexllm::graph;

// One Q8_0 block (GGUF layout): F16 scale d, then 32 int8 quants; value i = d * q[i].
void push_q8_0_block(std::vector<uint8_t>& out, uint16_t d_bits, const int8_t (&q)[32]) {
  out.push_back((uint8_t)(d_bits & 0xff));
  out.push_back((uint8_t)(d_bits >> 8));
  for (int8_t v : q) out.push_back((uint8_t)v);
}

TEST(RefRows, GetRowsF32AndF16) {
  Harness h;
  Tensor* a = h.f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor* a16 = h.floats(Type::F16, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor* idx = h.i32({3}, {2, 0, 2});
  Tensor* g = get_rows(h.ctx, a, idx);
  Tensor* g16 = get_rows(h.ctx, a16, idx);
  h.run({g, g16});
  expect_near(g, {5, 6, 1, 2, 5, 6});
  expect_near(g16, {5, 6, 1, 2, 5, 6});
  EXPECT_EQ(g16->type, Type::F32);
}

TEST(RefRows, GetRowsQ8_0BuiltByHand) {
  // Row 0: d = 0.5 (F16 0x3800), q[i] = i - 16. Row 1: d = 2 (F16 0x4000), q[i] = i % 3 - 1.
  int8_t q0[32], q1[32];
  for (int i = 0; i < 32; i++) {
    q0[i] = (int8_t)(i - 16);
    q1[i] = (int8_t)(i % 3 - 1);
  }
  std::vector<uint8_t> bytes;
  push_q8_0_block(bytes, 0x3800, q0);
  push_q8_0_block(bytes, 0x4000, q1);
  Harness h;
  Tensor* a = h.raw(Type::Q8_0, {32, 2}, bytes);
  Tensor* g = get_rows(h.ctx, a, h.i32({3}, {1, 0, 1}));
  h.run(g);
  std::vector<double> want;
  for (int r : {1, 0, 1})
    for (int i = 0; i < 32; i++) want.push_back(r == 0 ? 0.5 * (i - 16) : 2.0 * (i % 3 - 1));
  expect_near(g, want, 0.0);
}

TEST(RefRows, GetRowsIndexOutOfRangeThrows) {
  Harness h;
  Tensor* g = get_rows(h.ctx, h.f32({2, 3}, {1, 2, 3, 4, 5, 6}), h.i32({1}, {3}));
  try {
    h.run(g);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GET_ROWS"), std::string::npos) << e.what();
  }
}

TEST(RefRows, SetRowsIntoF16) {
  Harness h;
  Tensor* cache = h.floats(Type::F16, {4, 3}, std::vector<float>(12, 7.0f));
  Tensor* src = h.f32({4, 2}, {0.1f, 1.0f, 2.0f, 3.0f, -1.0f, -2.0f, 65504.0f, 1e-8f});
  Tensor* upd = set_rows(h.ctx, cache, src, h.i32({2}, {2, 0}));
  h.run(upd);
  EXPECT_EQ(upd->data, cache->data);
  // 0.1 rounds to the F16 0x2E66 = 0.0999755859375; 1e-8 is below half the smallest F16
  // subnormal (2^-25) and rounds to 0; 65504 is the largest F16.
  expect_near(upd, {-1, -2, 65504, 0, 7, 7, 7, 7, 0.0999755859375, 1, 2, 3}, 0.0);
  const uint16_t* raw = static_cast<const uint16_t*>(cache->data);
  EXPECT_EQ(raw[8], 0x2E66);
}

TEST(RefRows, SetRowsI64IndexBroadcastOverHeads) {
  Harness h;
  Tensor* dst = h.f32({2, 3, 2}, std::vector<float>(12, 0.0f));
  Tensor* src = h.f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor* upd = set_rows(h.ctx, dst, src, h.i64({1, 1}, {1}));  // row 1 of both heads
  h.run(upd);
  expect_near(upd, {0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0, 0});
}

TEST(RefCopy, CpyFlatOrderAndTypes) {
  Harness h;
  Tensor* a = h.f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor* b16 = h.floats(Type::F16, {3, 2}, std::vector<float>(6, 0.0f));
  Tensor* c16 = cpy(h.ctx, a, b16);
  // Into a transposed view of b: element k of a lands at b[k / 3][k % 3] read as [2, 3]^T.
  Tensor* b = h.f32({2, 3}, std::vector<float>(6, 0.0f));
  Tensor* a2 = h.f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor* ct = cpy(h.ctx, a2, transpose(h.ctx, b));
  // From a transposed source.
  Tensor* src = h.f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor* flat = h.f32({6}, std::vector<float>(6, 0.0f));
  Tensor* cf = cpy(h.ctx, transpose(h.ctx, src), flat);
  // F16 -> BF16.
  Tensor* bf = h.floats(Type::BF16, {2}, {0, 0});
  Tensor* cb = cpy(h.ctx, h.floats(Type::F16, {2}, {1.5f, -3.0f}), bf);
  h.run({c16, ct, cf, cb});
  EXPECT_EQ(c16->type, Type::F16);
  expect_near(c16, {1, 2, 3, 4, 5, 6}, 0.0);
  expect_near(ct, {1, 2, 3, 4, 5, 6}, 0.0);
  expect_near(b, {1, 4, 2, 5, 3, 6}, 0.0);
  expect_near(cf, {1, 4, 2, 5, 3, 6}, 0.0);
  expect_near(cb, {1.5, -3.0}, 0.0);
}

TEST(RefCopy, ContAndDup) {
  Harness h;
  Tensor* a = h.f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor* ct = cont(h.ctx, transpose(h.ctx, a));
  Tensor* a16 = h.floats(Type::F16, {3, 2}, {0.5f, 1, 2, 3, 4, 5});
  Tensor* d16 = dup(h.ctx, permute(h.ctx, a16, 1, 0, 2, 3));
  std::vector<uint8_t> q(2 * 34);
  for (size_t i = 0; i < q.size(); i++) q[i] = (uint8_t)(i * 7 + 1);
  Tensor* aq = h.raw(Type::Q8_0, {32, 2}, q);
  Tensor* cq = cont(h.ctx, aq);
  h.run({ct, d16, cq});
  EXPECT_TRUE(ct->is_contiguous());
  expect_near(ct, {1, 4, 2, 5, 3, 6}, 0.0);
  EXPECT_EQ(d16->type, Type::F16);
  expect_near(d16, {0.5, 3, 1, 4, 2, 5}, 0.0);
  EXPECT_EQ(std::memcmp(cq->data, q.data(), q.size()), 0);
}

TEST(RefCopy, ConcatDims012) {
  Harness h;
  Tensor* a = h.f32({2, 2}, {1, 2, 3, 4});
  Tensor* b = h.f32({2, 2}, {5, 6, 7, 8});
  Tensor* c0 = concat(h.ctx, a, b, 0);
  Tensor* c1 = concat(h.ctx, a, b, 1);
  Tensor* c2 = concat(h.ctx, a, b, 2);
  Tensor* narrow = h.f32({1, 2}, {1, 2});
  Tensor* wide = h.f32({2, 2}, {3, 4, 5, 6});
  Tensor* c0u = concat(h.ctx, narrow, wide, 0);
  Tensor* h16 = concat(h.ctx, h.floats(Type::F16, {1}, {0.5f}), h.floats(Type::F16, {2}, {1.5f, 2.5f}), 0);
  h.run({c0, c1, c2, c0u, h16});
  EXPECT_EQ(c0->ne[0], 4);
  expect_near(c0, {1, 2, 5, 6, 3, 4, 7, 8});
  EXPECT_EQ(c1->ne[1], 4);
  expect_near(c1, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(c2->ne[2], 2);
  expect_near(c2, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_near(c0u, {1, 3, 4, 2, 5, 6});
  EXPECT_EQ(h16->type, Type::F16);
  expect_near(h16, {0.5, 1.5, 2.5});
}

TEST(RefCopy, RepeatPadFill) {
  Harness h;
  Tensor* a = h.f32({2, 1}, {1, 2});
  Tensor* r = repeat(h.ctx, a, h.ctx.new_tensor(Type::F32, {4, 2}));
  Tensor* p = pad(h.ctx, h.f32({2, 2}, {1, 2, 3, 4}), 1, 1, 0, 0);
  const int64_t ne[] = {3, 2};
  Tensor* f16 = fill(h.ctx, Type::F16, ne, 1.5f);
  Tensor* f32 = fill(h.ctx, Type::F32, ne, -0.25f);
  h.run({r, p, f16, f32});
  expect_near(r, {1, 2, 1, 2, 1, 2, 1, 2});
  expect_near(p, {1, 2, 0, 3, 4, 0, 0, 0, 0});
  EXPECT_EQ(f16->type, Type::F16);
  for (int i = 0; i < 6; i++) EXPECT_EQ(static_cast<const uint16_t*>(f16->data)[i], 0x3E00);  // 1.5
  expect_near(f32, std::vector<double>(6, -0.25));
}

}  // namespace
}  // namespace hexllm::backend::test
