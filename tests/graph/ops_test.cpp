// Builders: output shapes, types and parameters, and errors that name the op and shapes
// (truth: the semantics written in ops.h).
#include "graph/ops.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace hexllm::graph {
namespace {

void expect_ne(const Tensor* t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  EXPECT_EQ(t->ne[0], ne0);
  EXPECT_EQ(t->ne[1], ne1);
  EXPECT_EQ(t->ne[2], ne2);
  EXPECT_EQ(t->ne[3], ne3);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Ops, MulMatShapeAndError) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::Q8_0, {64, 32, 2});
  Tensor* b = ctx.new_tensor(Type::F32, {64, 4, 6, 3});
  Tensor* c = mul_mat(ctx, a, b);
  expect_ne(c, 32, 4, 6, 3);
  EXPECT_EQ(c->type, Type::F32);
  EXPECT_EQ(c->op, Op::MUL_MAT);
  EXPECT_EQ(c->src[0], a);
  EXPECT_EQ(c->src[1], b);
  EXPECT_TRUE(c->is_contiguous());

  Tensor* a2 = ctx.new_tensor(Type::F32, {64, 32});
  Tensor* b2 = ctx.new_tensor(Type::F32, {48, 4});
  EXPECT_EQ(error_of([&] { mul_mat(ctx, a2, b2); }),
            "mul_mat: a [64, 32, 1, 1] and b [48, 4, 1, 1]: row lengths differ");
  // a's dim 2 (4) does not divide b's (6).
  EXPECT_THROW(mul_mat(ctx, ctx.new_tensor(Type::F32, {8, 2, 4}), ctx.new_tensor(Type::F32, {8, 2, 6})),
               Error);
  EXPECT_THROW(mul_mat(ctx, a2, ctx.new_tensor(Type::I32, {64, 4})), Error);
}

TEST(Ops, MulMatId) {
  Context ctx;
  Tensor* as = ctx.new_tensor(Type::F32, {16, 8, 4});
  Tensor* b = ctx.new_tensor(Type::F32, {16, 1, 5});
  Tensor* ids = ctx.new_tensor(Type::I32, {2, 5});
  expect_ne(mul_mat_id(ctx, as, b, ids), 8, 2, 5, 1);
  EXPECT_THROW(mul_mat_id(ctx, as, ctx.new_tensor(Type::F32, {16, 3, 5}), ids),
               Error);  // 3 does not divide 2
  EXPECT_THROW(mul_mat_id(ctx, as, b, ctx.new_tensor(Type::I32, {2, 4})), Error);
}

TEST(Ops, DataMovementShapes) {
  Context ctx;
  Tensor* w = ctx.new_tensor(Type::Q4_0, {32, 100});
  Tensor* idx = ctx.new_tensor(Type::I32, {7});
  Tensor* g = get_rows(ctx, w, idx);
  expect_ne(g, 32, 7, 1, 1);
  EXPECT_EQ(g->type, Type::F32);
  EXPECT_THROW(get_rows(ctx, w, ctx.new_tensor(Type::F32, {7})), Error);

  Tensor* cache = ctx.new_tensor(Type::F16, {8, 16});
  Tensor* rows = ctx.new_tensor(Type::F32, {8, 3});
  Tensor* s = set_rows(ctx, cache, rows, ctx.new_tensor(Type::I64, {3}));
  EXPECT_EQ(s->op, Op::SET_ROWS);
  EXPECT_EQ(s->view_src, cache);
  EXPECT_EQ(s->type, Type::F16);
  expect_ne(s, 8, 16, 1, 1);
  EXPECT_EQ(s->src[0], rows);
  EXPECT_THROW(set_rows(ctx, cache, rows, ctx.new_tensor(Type::I32, {2})), Error);

  Tensor* c = cpy(ctx, rows, ctx.new_tensor(Type::F16, {4, 6}));
  EXPECT_EQ(c->op, Op::CPY);
  EXPECT_EQ(c->type, Type::F16);
  expect_ne(c, 4, 6, 1, 1);
  EXPECT_THROW(cpy(ctx, rows, ctx.new_tensor(Type::F16, {4, 5})), Error);

  Tensor* a = ctx.new_tensor(Type::F32, {2, 3, 4});
  Tensor* b = ctx.new_tensor(Type::F32, {2, 5, 4});
  Tensor* cat = concat(ctx, a, b, 1);
  expect_ne(cat, 2, 8, 4, 1);
  EXPECT_EQ(cat->params[0], 1);
  EXPECT_EQ(error_of([&] { concat(ctx, a, b, 2); }).rfind("concat: a [2, 3, 4, 1] and b [2, 5, 4, 1]", 0),
            0u);

  expect_ne(repeat(ctx, a, ctx.new_tensor(Type::F32, {4, 3, 8, 2})), 4, 3, 8, 2);
  EXPECT_THROW(repeat(ctx, a, ctx.new_tensor(Type::F32, {3, 3, 4})), Error);
  Tensor* p = pad(ctx, a, 1, 0, 2, 3);
  expect_ne(p, 3, 3, 6, 4);
  EXPECT_EQ(p->params[2], 2);
  const int64_t ne[] = {5, 2};
  Tensor* f = fill(ctx, Type::F16, ne, 1.5f);
  expect_ne(f, 5, 2, 1, 1);
  EXPECT_EQ(f->param_f(0), 1.5f);
  EXPECT_EQ(cont(ctx, transpose(ctx, ctx.new_tensor(Type::F16, {3, 2})))->type, Type::F16);
}

TEST(Ops, ElementwiseAndRowwise) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {6, 4, 2});
  expect_ne(add(ctx, a, ctx.new_tensor(Type::F32, {6, 1, 2})), 6, 4, 2, 1);
  EXPECT_EQ(error_of([&] { mul(ctx, a, ctx.new_tensor(Type::F32, {4})); }),
            "mul: b [4, 1, 1, 1] cannot be broadcast to a [6, 4, 2, 1]");
  Tensor* sc = scale(ctx, a, 0.5f, 2.0f);
  EXPECT_EQ(sc->param_f(0), 0.5f);
  EXPECT_EQ(sc->param_f(1), 2.0f);
  expect_ne(swiglu(ctx, a, nullptr), 3, 4, 2, 1);
  expect_ne(geglu(ctx, a, a), 6, 4, 2, 1);
  EXPECT_THROW(swiglu(ctx, a, ctx.new_tensor(Type::F32, {6, 4})), Error);
  EXPECT_THROW(swiglu(ctx, ctx.new_tensor(Type::F32, {5}), nullptr), Error);
  Tensor* oai = swiglu_oai(ctx, a, a, 1.702f, 7.0f);
  EXPECT_EQ(oai->param_f(2), 1.702f);
  EXPECT_EQ(oai->param_f(3), 7.0f);
  EXPECT_EQ(rms_norm(ctx, a, 1e-5f)->param_f(0), 1e-5f);
  expect_ne(sum_rows(ctx, a), 1, 4, 2, 1);
  Tensor* as = argsort(ctx, a, SortOrder::Descending);
  EXPECT_EQ(as->type, Type::I32);
  EXPECT_EQ(as->params[0], 1);
  Tensor* tk = top_k(ctx, a, 2);
  expect_ne(tk, 2, 4, 2, 1);
  EXPECT_THROW(top_k(ctx, a, 7), Error);
  Tensor* ids = ctx.new_tensor(Type::I32, {4, 2});
  expect_ne(add_id(ctx, a, ctx.new_tensor(Type::F32, {6, 9}), ids), 6, 4, 2, 1);

  Tensor* mask = ctx.new_tensor(Type::F16, {6, 8});
  Tensor* sm = soft_max(ctx, a, mask, 0.125f, 8.0f);
  EXPECT_EQ(sm->param_f(0), 0.125f);
  EXPECT_EQ(sm->param_f(1), 8.0f);
  EXPECT_EQ(sm->src[1], mask);
  EXPECT_THROW(soft_max(ctx, a, ctx.new_tensor(Type::F16, {6, 3}), 1.0f, 0.0f), Error);  // fewer mask rows
  EXPECT_THROW(soft_max(ctx, a, mask, 1.0f, 0.0f, ctx.new_tensor(Type::F32, {3})), Error);
}

TEST(Ops, RopeParams) {
  Context ctx;
  Tensor* a = ctx.new_tensor(Type::F32, {8, 4, 3});
  Tensor* pos = ctx.new_tensor(Type::I32, {3});
  RopeParams p;
  p.n_dims = 6;
  p.mode = kRopeNeox;
  p.n_ctx_orig = 4096;
  p.freq_base = 500000.0f;
  p.freq_scale = 0.25f;
  p.ext_factor = 1.0f;
  p.attn_factor = 0.9f;
  p.beta_fast = 16.0f;
  p.beta_slow = 2.0f;
  Tensor* r = rope(ctx, a, pos, nullptr, p);
  expect_ne(r, 8, 4, 3, 1);
  EXPECT_EQ(r->params[0], 6);
  EXPECT_EQ(r->params[1], kRopeNeox);
  EXPECT_EQ(r->params[2], 4096);
  EXPECT_EQ(r->param_f(3), 500000.0f);
  EXPECT_EQ(r->param_f(4), 0.25f);
  EXPECT_EQ(r->param_f(5), 1.0f);
  EXPECT_EQ(r->param_f(6), 0.9f);
  EXPECT_EQ(r->param_f(7), 16.0f);
  EXPECT_EQ(r->param_f(8), 2.0f);
  p.n_dims = 10;
  EXPECT_THROW(rope(ctx, a, pos, nullptr, p), Error);
  p.n_dims = 8;
  EXPECT_THROW(rope(ctx, a, ctx.new_tensor(Type::I32, {4}), nullptr, p), Error);
  EXPECT_THROW(rope(ctx, a, pos, ctx.new_tensor(Type::F32, {3}), p), Error);  // 4 factors needed
}

TEST(Ops, FlashAttnShape) {
  Context ctx;
  Tensor* q = ctx.new_tensor(Type::F32, {64, 5, 8});
  Tensor* k = ctx.new_tensor(Type::F16, {64, 32, 2});
  Tensor* v = ctx.new_tensor(Type::F16, {48, 32, 2});
  Tensor* mask = ctx.new_tensor(Type::F16, {32, 8});
  Tensor* o = flash_attn_ext(ctx, q, k, v, mask, 0.125f, 0.0f, 30.0f);
  expect_ne(o, 48, 8, 5, 1);  // head-major rows
  EXPECT_EQ(o->param_f(0), 0.125f);
  EXPECT_EQ(o->param_f(2), 30.0f);
  EXPECT_EQ(o->src[3], mask);
  EXPECT_THROW(flash_attn_ext(ctx, q, ctx.new_tensor(Type::F16, {64, 32, 3}),
                              ctx.new_tensor(Type::F16, {48, 32, 3}), nullptr, 1.0f, 0.0f, 0.0f),
               Error);  // 3 KV heads do not divide 8
  EXPECT_THROW(flash_attn_ext(ctx, q, k, v, ctx.new_tensor(Type::F16, {32, 4}), 1.0f, 0.0f, 0.0f), Error);
  EXPECT_THROW(flash_attn_ext(ctx, q, k, ctx.new_tensor(Type::F16, {48, 31, 2}), nullptr, 1.0f, 0.0f, 0.0f),
               Error);
}

}  // namespace
}  // namespace hexllm::graph
