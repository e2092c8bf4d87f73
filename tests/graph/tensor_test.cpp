// Shapes and strides of leaves and views (truth: ggml's layout rules, worked out by hand).
#include <gtest/gtest.h>

#include "base/error.h"
#include "graph/context.h"
#include "graph/ops.h"

namespace hexllm::graph {
namespace {

void expect_nb(const Tensor* t, size_t nb0, size_t nb1, size_t nb2, size_t nb3) {
  EXPECT_EQ(t->nb[0], nb0);
  EXPECT_EQ(t->nb[1], nb1);
  EXPECT_EQ(t->nb[2], nb2);
  EXPECT_EQ(t->nb[3], nb3);
}

void expect_ne(const Tensor* t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  EXPECT_EQ(t->ne[0], ne0);
  EXPECT_EQ(t->ne[1], ne1);
  EXPECT_EQ(t->ne[2], ne2);
  EXPECT_EQ(t->ne[3], ne3);
}

TEST(Tensor, ContiguousStrides) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {4, 3, 2});
  expect_ne(a, 4, 3, 2, 1);
  expect_nb(a, 4, 16, 48, 96);
  EXPECT_EQ(a->n_bytes(), 96u);
  EXPECT_TRUE(a->is_contiguous());
  EXPECT_TRUE(a->rows_contiguous());
  EXPECT_EQ(a->op, Op::NONE);
  EXPECT_EQ(a->data, nullptr);

  // Q8_0: 34-byte blocks of 32 values; a row of 64 is two blocks.
  Tensor* q = ctx.new_tensor(Type::Q8_0, {64, 3});
  expect_nb(q, 34, 68, 204, 204);
  EXPECT_EQ(q->n_bytes(), 204u);
  EXPECT_EQ(q->row_bytes(), 68u);

  Tensor* h = ctx.new_tensor(Type::F16, {5});
  expect_nb(h, 2, 10, 10, 10);
  EXPECT_EQ(ctx.size(), 3u);
}

TEST(Tensor, BadShapesThrow) {
  Context ctx;
  EXPECT_THROW(ctx.new_tensor(Type::Q8_0, {48, 2}), Error);  // not a whole number of blocks
  EXPECT_THROW(ctx.new_tensor(Type::F32, {4, -1}), Error);
  EXPECT_THROW(ctx.new_tensor(Type::F32, {1, 2, 3, 4, 5}), Error);
  EXPECT_THROW(ctx.new_tensor(Type::F32, std::span<const int64_t>()), Error);
}

TEST(Tensor, NameAndShapeString) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {64, 32});
  a->set_name("blk.%d.attn_q", 7);
  EXPECT_STREQ(a->name, "blk.7.attn_q");
  EXPECT_EQ(shape_str(*a), "[64, 32, 1, 1]");
  EXPECT_STREQ(op_name(Op::FLASH_ATTN_EXT), "FLASH_ATTN_EXT");
  EXPECT_STREQ(op_name(Op::MUL_MAT_ID), "MUL_MAT_ID");
  for (int i = 0; i < (int)Op::COUNT; i++) EXPECT_STRNE(op_name((Op)i), "UNKNOWN") << i;
}

TEST(Tensor, RepeatAndLayoutPredicates) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {6, 4, 2});
  EXPECT_TRUE(can_repeat(*ctx.new_tensor(Type::F32, {3, 1, 2}), *a));
  EXPECT_TRUE(can_repeat(*ctx.new_tensor(Type::F32, {1}), *a));
  EXPECT_FALSE(can_repeat(*ctx.new_tensor(Type::F32, {4}), *a));
  EXPECT_TRUE(same_shape(*a, *ctx.new_tensor(Type::F16, {6, 4, 2})));
  EXPECT_FALSE(same_layout(*a, *ctx.new_tensor(Type::F16, {6, 4, 2})));
  EXPECT_TRUE(same_layout(*a, *ctx.new_tensor(Type::F32, {6, 4, 2})));
}

TEST(View, View2dOfRows) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {8, 5});
  // Rows 1..3, first 4 columns: nb1 stays a's row stride, offset = 1 row.
  Tensor* v = view_2d(ctx, a, 4, 3, a->nb[1], a->nb[1]);
  expect_ne(v, 4, 3, 1, 1);
  expect_nb(v, 4, 32, 96, 96);
  EXPECT_EQ(v->op, Op::VIEW);
  EXPECT_EQ(v->view_src, a);
  EXPECT_EQ(v->view_offs, 32u);
  EXPECT_EQ(v->src[0], a);
  EXPECT_FALSE(v->is_contiguous());
  EXPECT_TRUE(v->rows_contiguous());
  // Spans 2 rows of 32 bytes plus one row of 16: 80 bytes.
  EXPECT_EQ(v->n_bytes(), 80u);

  // A view of a view points at the root, offsets add up.
  Tensor* w = view_1d(ctx, v, 2, 8);
  EXPECT_EQ(w->view_src, a);
  EXPECT_EQ(w->view_offs, 40u);
  EXPECT_EQ(w->src[0], v);
  EXPECT_EQ(storage_root(w), a);
}

TEST(View, DataFollowsBoundSource) {
  Context ctx;
  float buf[12] = {};
  Tensor* a = ctx.new_tensor(Type::F32, {4, 3});
  a->data = buf;
  Tensor* v = view_1d(ctx, a, 4, 16);
  EXPECT_EQ(v->data, &buf[4]);
}

TEST(View, OutOfBoundsThrows) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {8, 5});
  EXPECT_THROW(view_1d(ctx, a, 8, 4 * 33), Error);
  EXPECT_THROW(view_2d(ctx, a, 8, 5, 32, 4), Error);
  EXPECT_NO_THROW(view_2d(ctx, a, 8, 5, 32, 0));
  EXPECT_THROW(view_2d(ctx, ctx.new_tensor(Type::Q8_0, {64, 2}), 16, 2, 68, 0), Error);
}

TEST(View, Permute) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {2, 3, 4, 5});  // nb = 4, 8, 24, 96
  // Source dim i goes to output dim axis_i: 0 -> 2, 1 -> 0, 2 -> 1, 3 -> 3.
  Tensor* p = permute(ctx, a, 2, 0, 1, 3);
  expect_ne(p, 3, 4, 2, 5);
  expect_nb(p, 8, 24, 4, 96);
  EXPECT_EQ(p->op, Op::PERMUTE);
  EXPECT_FALSE(p->is_contiguous());
  EXPECT_FALSE(p->rows_contiguous());
  EXPECT_EQ(p->n_bytes(), a->n_bytes());

  // The common attention permutation (0, 2, 1, 3) swaps dims 1 and 2.
  Tensor* q = permute(ctx, a, 0, 2, 1, 3);
  expect_ne(q, 2, 4, 3, 5);
  expect_nb(q, 4, 24, 8, 96);
  EXPECT_TRUE(q->rows_contiguous());

  EXPECT_THROW(permute(ctx, a, 0, 0, 1, 2), Error);
  EXPECT_THROW(permute(ctx, a, 0, 1, 2, 4), Error);
}

TEST(View, Transpose) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F16, {3, 2});
  Tensor* t = transpose(ctx, a);
  expect_ne(t, 2, 3, 1, 1);
  expect_nb(t, 6, 2, 12, 12);
  EXPECT_EQ(t->op, Op::TRANSPOSE);
  EXPECT_FALSE(t->is_contiguous());
  EXPECT_EQ(t->n_bytes(), 12u);
  EXPECT_THROW(transpose(ctx, ctx.new_tensor(Type::Q4_0, {32, 2})), Error);
}

TEST(View, Reshape) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {6, 4});
  Tensor* r = reshape_3d(ctx, a, 3, 2, 4);
  expect_ne(r, 3, 2, 4, 1);
  expect_nb(r, 4, 12, 24, 96);
  EXPECT_EQ(r->op, Op::RESHAPE);
  EXPECT_EQ(r->view_src, a);
  Tensor* r4 = reshape_4d(ctx, r, 2, 3, 2, 2);
  expect_ne(r4, 2, 3, 2, 2);
  EXPECT_EQ(r4->view_src, a);

  try {
    reshape_2d(ctx, a, 5, 5);
    FAIL() << "reshape to 25 elements accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reshape_2d"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[6, 4, 1, 1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reshape_2d(ctx, transpose(ctx, a), 4, 6), Error);  // not contiguous
}

}  // namespace
}  // namespace hexllm::graph
