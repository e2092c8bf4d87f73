// Graph builders: validate, compute the output shape, record the parameters.
#include "graph/ops.h"

#include "base/error.h"

namespace hexllm::graph {

namespace {

std::string sh(const Tensor* t) { return shape_str(*t); }

bool is_float(Type t) { return t == Type::F32 || t == Type::F16 || t == Type::BF16; }
// A type whose rows the backends can read as floats (plain floats and block formats).
bool is_readable(Type t) { return is_float(t) || is_quantized(t); }

void need(const char* op, const char* role, const Tensor* t) {
  if (t == nullptr) fail("%s: %s is null", op, role);
}

void need_type(const char* op, const char* role, const Tensor* t, bool ok, const char* allowed) {
  if (!ok) fail("%s: %s %s has type %s (%s expected)", op, role, sh(t).c_str(), type_name(t->type), allowed);
}

void need_float(const char* op, const char* role, const Tensor* t) {
  need(op, role, t);
  need_type(op, role, t, is_float(t->type), "F32, F16 or BF16");
}

Tensor* node(Context& ctx, Op op, Type type, const int64_t (&ne)[kMaxDims]) {
  return ctx.new_node(op, type, std::span<const int64_t>(ne, kMaxDims));
}

Tensor* node_like(Context& ctx, Op op, Type type, const Tensor* a) {
  return ctx.new_node(op, type, std::span<const int64_t>(a->ne, kMaxDims));
}

Tensor* view(Context& ctx, Op op, Tensor* a, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
             size_t offset) {
  return ctx.new_view(op, a, std::span<const int64_t>(ne, kMaxDims), std::span<const size_t>(nb, kMaxDims),
                      offset);
}

// ---- views ----

// A VIEW of a with the given shape and byte strides for dims 1..3 (nb[0] stays a's).
Tensor* view_nd(Context& ctx, const char* op, Tensor* a, const int64_t (&ne)[kMaxDims], size_t nb1,
                size_t nb2, size_t nb3, size_t offset) {
  need(op, "a", a);
  for (int i = 0; i < kMaxDims; i++)
    if (ne[i] < 0) fail("%s: of a %s: negative size ne[%d] = %lld", op, sh(a).c_str(), i, (long long)ne[i]);
  if (ne[0] % block_size(a->type) != 0)
    fail("%s: of %s a %s: row length %lld is not a multiple of the block size %u", op, type_name(a->type),
         sh(a).c_str(), (long long)ne[0], block_size(a->type));
  Tensor want;  // the view's layout, checked before it is created
  want.type = a->type;
  for (int i = 0; i < kMaxDims; i++) want.ne[i] = ne[i];
  const size_t nb[kMaxDims] = {a->nb[0], nb1, nb2, nb3};
  for (int i = 0; i < kMaxDims; i++) want.nb[i] = nb[i];
  if (offset + want.n_bytes() > a->n_bytes())
    fail("%s: %s at offset %zu spans %zu bytes, beyond the %zu bytes of a %s", op, sh(&want).c_str(), offset,
         want.n_bytes(), a->n_bytes(), sh(a).c_str());
  return view(ctx, Op::VIEW, a, ne, nb, offset);
}

Tensor* reshape_nd(Context& ctx, const char* op, Tensor* a, const int64_t (&ne)[kMaxDims]) {
  need(op, "a", a);
  if (!a->is_contiguous()) fail("%s: a %s is not contiguous", op, sh(a).c_str());
  Tensor want;
  want.type = a->type;
  for (int i = 0; i < kMaxDims; i++) want.ne[i] = ne[i];
  if (want.n_elements() != a->n_elements())
    fail("%s: a %s has %lld elements, the new shape %s has %lld", op, sh(a).c_str(),
         (long long)a->n_elements(), sh(&want).c_str(), (long long)want.n_elements());
  if (ne[0] % block_size(a->type) != 0)
    fail("%s: new row length %lld is not a multiple of the %s block size", op, (long long)ne[0],
         type_name(a->type));
  set_contiguous_strides(want);
  return view(ctx, Op::RESHAPE, a, want.ne, want.nb, 0);
}

// act(a) * b for the gated units; with b == nullptr the halves of a's rows.
Tensor* glu(Context& ctx, Op op, const char* name, Tensor* a, Tensor* b) {
  need_float(name, "a", a);
  Tensor* t;
  if (b != nullptr) {
    need_float(name, "b", b);
    if (!same_shape(*a, *b)) fail("%s: a %s and b %s: shapes differ", name, sh(a).c_str(), sh(b).c_str());
    t = node_like(ctx, op, Type::F32, a);
  } else {
    if (a->ne[0] % 2 != 0) fail("%s: a %s: odd row length cannot be split in halves", name, sh(a).c_str());
    t = node(ctx, op, Type::F32, {a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3]});
  }
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* binary(Context& ctx, Op op, const char* name, Tensor* a, Tensor* b) {
  need_float(name, "a", a);
  need_float(name, "b", b);
  if (!can_repeat(*b, *a)) fail("%s: b %s cannot be broadcast to a %s", name, sh(b).c_str(), sh(a).c_str());
  Tensor* t = node_like(ctx, op, Type::F32, a);
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* unary(Context& ctx, Op op, const char* name, Tensor* a) {
  need_float(name, "a", a);
  Tensor* t = node_like(ctx, op, Type::F32, a);
  t->src[0] = a;
  return t;
}

Tensor* norm_op(Context& ctx, Op op, const char* name, Tensor* a, float eps) {
  Tensor* t = unary(ctx, op, name, a);
  t->set_param_f(0, eps);
  return t;
}

// A copy of a in its own type and shape (CONT and DUP).
Tensor* copy_op(Context& ctx, Op op, const char* name, Tensor* a) {
  need(name, "a", a);
  if (is_quantized(a->type) && !a->rows_contiguous())
    fail("%s: a %s of type %s has non-contiguous rows", name, sh(a).c_str(), type_name(a->type));
  Tensor* t = node_like(ctx, op, a->type, a);
  t->src[0] = a;
  return t;
}

}  // namespace

// ---- layout ----

Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset) {
  need("view_1d", "a", a);
  const size_t nb1 = row_size(a->type, ne0);
  return view_nd(ctx, "view_1d", a, {ne0, 1, 1, 1}, nb1, nb1, nb1, offset);
}

Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
  return view_nd(ctx, "view_2d", a, {ne0, ne1, 1, 1}, nb1, nb1 * (size_t)ne1, nb1 * (size_t)ne1, offset);
}

Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                size_t offset) {
  return view_nd(ctx, "view_3d", a, {ne0, ne1, ne2, 1}, nb1, nb2, nb2 * (size_t)ne2, offset);
}

Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                size_t nb2, size_t nb3, size_t offset) {
  return view_nd(ctx, "view_4d", a, {ne0, ne1, ne2, ne3}, nb1, nb2, nb3, offset);
}

Tensor* reshape_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1) {
  return reshape_nd(ctx, "reshape_2d", a, {ne0, ne1, 1, 1});
}

Tensor* reshape_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2) {
  return reshape_nd(ctx, "reshape_3d", a, {ne0, ne1, ne2, 1});
}

Tensor* reshape_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  return reshape_nd(ctx, "reshape_4d", a, {ne0, ne1, ne2, ne3});
}

Tensor* permute(Context& ctx, Tensor* a, int axis0, int axis1, int axis2, int axis3) {
  need("permute", "a", a);
  const int axes[kMaxDims] = {axis0, axis1, axis2, axis3};
  bool used[kMaxDims] = {};
  for (int i = 0; i < kMaxDims; i++) {
    if (axes[i] < 0 || axes[i] >= kMaxDims || used[axes[i]])
      fail("permute: axes (%d, %d, %d, %d) of a %s are not a permutation of 0..3", axis0, axis1, axis2, axis3,
           sh(a).c_str());
    used[axes[i]] = true;
  }
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  for (int i = 0; i < kMaxDims; i++) {
    ne[axes[i]] = a->ne[i];
    nb[axes[i]] = a->nb[i];
  }
  if (is_quantized(a->type) && axes[0] != 0)
    fail("permute: a %s of type %s: block rows cannot move off dim 0", sh(a).c_str(), type_name(a->type));
  Tensor* t = view(ctx, Op::PERMUTE, a, ne, nb, 0);
  for (int i = 0; i < kMaxDims; i++) t->params[i] = axes[i];
  return t;
}

Tensor* transpose(Context& ctx, Tensor* a) {
  need("transpose", "a", a);
  if (is_quantized(a->type))
    fail("transpose: a %s of type %s cannot be transposed", sh(a).c_str(), type_name(a->type));
  Tensor* t = view(ctx, Op::TRANSPOSE, a, {a->ne[1], a->ne[0], a->ne[2], a->ne[3]},
                   {a->nb[1], a->nb[0], a->nb[2], a->nb[3]}, 0);
  t->params[0] = 1;
  t->params[1] = 0;
  t->params[2] = 2;
  t->params[3] = 3;
  return t;
}

// ---- data movement ----

Tensor* get_rows(Context& ctx, Tensor* a, Tensor* idx) {
  need("get_rows", "a", a);
  need("get_rows", "idx", idx);
  need_type("get_rows", "a", a, is_readable(a->type), "a float or block type");
  need_type("get_rows", "idx", idx, idx->type == Type::I32, "I32");
  if (is_quantized(a->type) && !a->rows_contiguous())
    fail("get_rows: a %s has non-contiguous %s rows", sh(a).c_str(), type_name(a->type));
  if (idx->ne[1] != a->ne[2] || idx->ne[2] != a->ne[3] || idx->ne[3] != 1)
    fail("get_rows: a %s and idx %s: idx must be [n, %lld, %lld, 1]", sh(a).c_str(), sh(idx).c_str(),
         (long long)a->ne[2], (long long)a->ne[3]);
  Tensor* t = node(ctx, Op::GET_ROWS, Type::F32, {a->ne[0], idx->ne[0], a->ne[2], a->ne[3]});
  t->src[0] = a;
  t->src[1] = idx;
  return t;
}

Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* idx) {
  need("set_rows", "dst", dst);
  need("set_rows", "src", src);
  need("set_rows", "idx", idx);
  need_type("set_rows", "dst", dst, is_float(dst->type), "F32, F16 or BF16");
  need_type("set_rows", "src", src, src->type == Type::F32, "F32");
  need_type("set_rows", "idx", idx, idx->type == Type::I32 || idx->type == Type::I64, "I32 or I64");
  if (dst->ne[0] != src->ne[0] || dst->ne[2] != src->ne[2] || dst->ne[3] != src->ne[3])
    fail("set_rows: dst %s and src %s: row length and dims 2/3 must match", sh(dst).c_str(), sh(src).c_str());
  // idx [n, i2, i3] broadcasts over src's dims 2 and 3.
  if (idx->ne[0] != src->ne[1] || idx->ne[1] == 0 || idx->ne[2] == 0 || src->ne[2] % idx->ne[1] != 0 ||
      src->ne[3] % idx->ne[2] != 0 || idx->ne[3] != 1)
    fail("set_rows: src %s and idx %s: idx must be [%lld, n2, n3, 1] with n2, n3 dividing src's dims 2, 3",
         sh(src).c_str(), sh(idx).c_str(), (long long)src->ne[1]);
  Tensor* t = view(ctx, Op::SET_ROWS, dst, dst->ne, dst->nb, 0);
  t->src[0] = src;
  t->src[1] = idx;
  return t;
}

Tensor* cpy(Context& ctx, Tensor* a, Tensor* b) {
  need("cpy", "a", a);
  need("cpy", "b", b);
  need_type("cpy", "a", a, is_readable(a->type), "a float or block type");
  need_type("cpy", "b", b, is_float(b->type), "F32, F16 or BF16");
  if (a->n_elements() != b->n_elements())
    fail("cpy: a %s and b %s: element counts differ (%lld vs %lld)", sh(a).c_str(), sh(b).c_str(),
         (long long)a->n_elements(), (long long)b->n_elements());
  if (is_quantized(a->type) && !a->rows_contiguous())
    fail("cpy: a %s has non-contiguous %s rows", sh(a).c_str(), type_name(a->type));
  Tensor* t = view(ctx, Op::CPY, b, b->ne, b->nb, 0);
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* cont(Context& ctx, Tensor* a) { return copy_op(ctx, Op::CONT, "cont", a); }

Tensor* dup(Context& ctx, Tensor* a) { return copy_op(ctx, Op::DUP, "dup", a); }

Tensor* concat(Context& ctx, Tensor* a, Tensor* b, int dim) {
  need("concat", "a", a);
  need("concat", "b", b);
  if (dim < 0 || dim >= kMaxDims) fail("concat: dim %d out of range 0..3", dim);
  if (a->type != b->type || is_quantized(a->type))
    fail("concat: a %s (%s) and b %s (%s): types must be equal and not block types", sh(a).c_str(),
         type_name(a->type), sh(b).c_str(), type_name(b->type));
  int64_t ne[kMaxDims];
  for (int i = 0; i < kMaxDims; i++) {
    if (i != dim && a->ne[i] != b->ne[i])
      fail("concat: a %s and b %s differ in dim %d (concatenating along dim %d)", sh(a).c_str(),
           sh(b).c_str(), i, dim);
    ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
  }
  Tensor* t = node(ctx, Op::CONCAT, a->type, {ne[0], ne[1], ne[2], ne[3]});
  t->params[0] = dim;
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* repeat(Context& ctx, Tensor* a, const Tensor* like) {
  need("repeat", "a", a);
  need("repeat", "like", like);
  if (is_quantized(a->type)) fail("repeat: a %s has block type %s", sh(a).c_str(), type_name(a->type));
  if (!can_repeat(*a, *like))
    fail("repeat: a %s does not tile %s in whole multiples", sh(a).c_str(), sh(like).c_str());
  Tensor* t = node_like(ctx, Op::REPEAT, a->type, like);
  t->src[0] = a;
  return t;
}

Tensor* pad(Context& ctx, Tensor* a, int p0, int p1, int p2, int p3) {
  need("pad", "a", a);
  if (is_quantized(a->type)) fail("pad: a %s has block type %s", sh(a).c_str(), type_name(a->type));
  const int p[kMaxDims] = {p0, p1, p2, p3};
  for (int i = 0; i < kMaxDims; i++)
    if (p[i] < 0) fail("pad: a %s: negative padding %d in dim %d", sh(a).c_str(), p[i], i);
  Tensor* t = node(ctx, Op::PAD, a->type, {a->ne[0] + p0, a->ne[1] + p1, a->ne[2] + p2, a->ne[3] + p3});
  for (int i = 0; i < kMaxDims; i++) t->params[i] = p[i];
  t->src[0] = a;
  return t;
}

Tensor* fill(Context& ctx, Type type, std::span<const int64_t> ne, float value) {
  if (!is_float(type)) fail("fill: type %s (F32, F16 or BF16 expected)", type_name(type));
  Tensor* t = ctx.new_node(Op::FILL, type, ne);
  t->set_param_f(0, value);
  return t;
}

// ---- elementwise ----

Tensor* add(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::ADD, "add", a, b); }
Tensor* sub(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::SUB, "sub", a, b); }
Tensor* mul(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::MUL, "mul", a, b); }
Tensor* div(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::DIV, "div", a, b); }

Tensor* add_id(Context& ctx, Tensor* a, Tensor* b, Tensor* ids) {
  need_float("add_id", "a", a);
  need_float("add_id", "b", b);
  need("add_id", "ids", ids);
  need_type("add_id", "ids", ids, ids->type == Type::I32, "I32");
  if (a->ne[0] != b->ne[0] || b->ne[2] != 1 || b->ne[3] != 1)
    fail("add_id: a %s and b %s: b must be [%lld, n_expert, 1, 1]", sh(a).c_str(), sh(b).c_str(),
         (long long)a->ne[0]);
  if (ids->ne[0] != a->ne[1] || ids->ne[1] != a->ne[2] || ids->ne[2] != 1 || ids->ne[3] != 1 || a->ne[3] != 1)
    fail("add_id: a %s and ids %s: ids must be [%lld, %lld, 1, 1] and a 3-dimensional", sh(a).c_str(),
         sh(ids).c_str(), (long long)a->ne[1], (long long)a->ne[2]);
  Tensor* t = node_like(ctx, Op::ADD_ID, Type::F32, a);
  t->src[0] = a;
  t->src[1] = b;
  t->src[2] = ids;
  return t;
}

Tensor* scale(Context& ctx, Tensor* a, float s, float bias) {
  Tensor* t = unary(ctx, Op::SCALE, "scale", a);
  t->set_param_f(0, s);
  t->set_param_f(1, bias);
  return t;
}

Tensor* clamp(Context& ctx, Tensor* a, float min, float max) {
  if (!(min <= max)) fail("clamp: min %g > max %g", (double)min, (double)max);
  Tensor* t = unary(ctx, Op::CLAMP, "clamp", a);
  t->set_param_f(0, min);
  t->set_param_f(1, max);
  return t;
}

Tensor* sqr(Context& ctx, Tensor* a) { return unary(ctx, Op::SQR, "sqr", a); }
Tensor* sqrt(Context& ctx, Tensor* a) { return unary(ctx, Op::SQRT, "sqrt", a); }
Tensor* silu(Context& ctx, Tensor* a) { return unary(ctx, Op::SILU, "silu", a); }
Tensor* gelu(Context& ctx, Tensor* a) { return unary(ctx, Op::GELU, "gelu", a); }
Tensor* gelu_quick(Context& ctx, Tensor* a) { return unary(ctx, Op::GELU_QUICK, "gelu_quick", a); }
Tensor* sigmoid(Context& ctx, Tensor* a) { return unary(ctx, Op::SIGMOID, "sigmoid", a); }
Tensor* exp(Context& ctx, Tensor* a) { return unary(ctx, Op::EXP, "exp", a); }
Tensor* neg(Context& ctx, Tensor* a) { return unary(ctx, Op::NEG, "neg", a); }
Tensor* softplus(Context& ctx, Tensor* a) { return unary(ctx, Op::SOFTPLUS, "softplus", a); }
Tensor* tanh(Context& ctx, Tensor* a) { return unary(ctx, Op::TANH, "tanh", a); }

Tensor* swiglu(Context& ctx, Tensor* a, Tensor* b) { return glu(ctx, Op::SWIGLU, "swiglu", a, b); }
Tensor* geglu(Context& ctx, Tensor* a, Tensor* b) { return glu(ctx, Op::GEGLU, "geglu", a, b); }

Tensor* swiglu_oai(Context& ctx, Tensor* a, Tensor* b, float alpha, float limit) {
  Tensor* t = glu(ctx, Op::SWIGLU_OAI, "swiglu_oai", a, b);
  t->set_param_f(2, alpha);
  t->set_param_f(3, limit);
  return t;
}

// ---- row-wise ----

Tensor* rms_norm(Context& ctx, Tensor* a, float eps) {
  return norm_op(ctx, Op::RMS_NORM, "rms_norm", a, eps);
}
Tensor* norm(Context& ctx, Tensor* a, float eps) { return norm_op(ctx, Op::NORM, "norm", a, eps); }
Tensor* l2_norm(Context& ctx, Tensor* a, float eps) { return norm_op(ctx, Op::L2_NORM, "l2_norm", a, eps); }

Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask, float scale, float max_bias, Tensor* sinks) {
  need_float("soft_max", "a", a);
  if (mask != nullptr) {
    need_type("soft_max", "mask", mask, mask->type == Type::F32 || mask->type == Type::F16, "F32 or F16");
    if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
        a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0)
      fail(
          "soft_max: a %s and mask %s: mask must be [%lld, >= %lld, m2, m3] with m2, m3 dividing a's dims 2, "
          "3",
          sh(a).c_str(), sh(mask).c_str(), (long long)a->ne[0], (long long)a->ne[1]);
  }
  if (sinks != nullptr) {
    need_type("soft_max", "sinks", sinks, sinks->type == Type::F32, "F32");
    if (sinks->ne[0] != a->ne[2])
      fail("soft_max: a %s and sinks %s: one sink per head (dim 2) expected", sh(a).c_str(),
           sh(sinks).c_str());
  }
  Tensor* t = node_like(ctx, Op::SOFT_MAX, Type::F32, a);
  t->set_param_f(0, scale);
  t->set_param_f(1, max_bias);
  t->src[0] = a;
  t->src[1] = mask;
  t->src[2] = sinks;
  return t;
}

Tensor* sum_rows(Context& ctx, Tensor* a) {
  need_float("sum_rows", "a", a);
  Tensor* t = node(ctx, Op::SUM_ROWS, Type::F32, {1, a->ne[1], a->ne[2], a->ne[3]});
  t->src[0] = a;
  return t;
}

Tensor* argsort(Context& ctx, Tensor* a, SortOrder order) {
  need_float("argsort", "a", a);
  if (order != SortOrder::Ascending && order != SortOrder::Descending)
    fail("argsort: unknown order %d", static_cast<int>(order));
  Tensor* t = node_like(ctx, Op::ARGSORT, Type::I32, a);
  t->params[0] = static_cast<int32_t>(order);
  t->src[0] = a;
  return t;
}

Tensor* top_k(Context& ctx, Tensor* a, int k) {
  need_float("top_k", "a", a);
  if (k < 1 || k > a->ne[0])
    fail("top_k: k = %d out of range 1..%lld for a %s", k, (long long)a->ne[0], sh(a).c_str());
  Tensor* t = node(ctx, Op::TOP_K, Type::I32, {k, a->ne[1], a->ne[2], a->ne[3]});
  t->params[0] = k;
  t->src[0] = a;
  return t;
}

// ---- attention ----

Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p) {
  need_float("rope", "a", a);
  need("rope", "pos", pos);
  need_type("rope", "pos", pos, pos->type == Type::I32, "I32");
  if (p.mode != kRopeNormal && p.mode != kRopeNeox) fail("rope: unknown mode %d", p.mode);
  if (p.n_dims <= 0 || p.n_dims % 2 != 0 || p.n_dims > a->ne[0])
    fail("rope: a %s: n_dims = %d must be even and in 2..%lld", sh(a).c_str(), p.n_dims, (long long)a->ne[0]);
  if (pos->ne[0] != a->ne[2] || pos->n_elements() != a->ne[2])
    fail("rope: a %s and pos %s: one position per token (dim 2) expected", sh(a).c_str(), sh(pos).c_str());
  if (freq_factors != nullptr) {
    need_type("rope", "freq_factors", freq_factors, freq_factors->type == Type::F32, "F32");
    if (freq_factors->ne[0] < p.n_dims / 2)
      fail("rope: freq_factors %s: at least n_dims / 2 = %d values expected", sh(freq_factors).c_str(),
           p.n_dims / 2);
  }
  if (!(p.freq_base > 0.0f) || !(p.freq_scale > 0.0f))
    fail("rope: freq_base %g and freq_scale %g must be positive", (double)p.freq_base, (double)p.freq_scale);
  if (p.ext_factor != 0.0f && p.n_ctx_orig <= 0)
    fail("rope: YaRN (ext_factor %g) needs n_ctx_orig > 0, got %d", (double)p.ext_factor, p.n_ctx_orig);
  Tensor* t = node_like(ctx, Op::ROPE, Type::F32, a);
  t->params[0] = p.n_dims;
  t->params[1] = p.mode;
  t->params[2] = p.n_ctx_orig;
  t->set_param_f(3, p.freq_base);
  t->set_param_f(4, p.freq_scale);
  t->set_param_f(5, p.ext_factor);
  t->set_param_f(6, p.attn_factor);
  t->set_param_f(7, p.beta_fast);
  t->set_param_f(8, p.beta_slow);
  t->src[0] = a;
  t->src[1] = pos;
  t->src[2] = freq_factors;
  return t;
}

Tensor* flash_attn_ext(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale,
                       float max_bias, float logit_softcap, Tensor* sinks) {
  const char* op = "flash_attn_ext";
  need_float(op, "q", q);
  need(op, "k", k);
  need(op, "v", v);
  need_type(op, "k", k, k->type == Type::F16 || k->type == Type::F32, "F16 or F32");
  need_type(op, "v", v, v->type == Type::F16 || v->type == Type::F32, "F16 or F32");
  if (q->ne[0] != k->ne[0]) fail("%s: q %s and k %s: head dims differ", op, sh(q).c_str(), sh(k).c_str());
  if (k->ne[1] != v->ne[1] || k->ne[2] != v->ne[2] || k->ne[3] != v->ne[3])
    fail("%s: k %s and v %s: KV lengths, heads or batches differ", op, sh(k).c_str(), sh(v).c_str());
  if (k->ne[2] == 0 || q->ne[2] % k->ne[2] != 0 || k->ne[3] == 0 || q->ne[3] % k->ne[3] != 0)
    fail("%s: q %s and k %s: KV heads (dims 2, 3) must divide the query heads", op, sh(q).c_str(),
         sh(k).c_str());
  if (mask != nullptr) {
    need_type(op, "mask", mask, mask->type == Type::F16 || mask->type == Type::F32, "F16 or F32");
    if (mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
        q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0)
      fail(
          "%s: q %s, k %s and mask %s: mask must be [%lld, >= %lld, m2, m3] with m2, m3 dividing q's dims 2, "
          "3",
          op, sh(q).c_str(), sh(k).c_str(), sh(mask).c_str(), (long long)k->ne[1], (long long)q->ne[1]);
  }
  if (sinks != nullptr) {
    need_type(op, "sinks", sinks, sinks->type == Type::F32, "F32");
    if (sinks->ne[0] != q->ne[2])
      fail("%s: q %s and sinks %s: one sink per head expected", op, sh(q).c_str(), sh(sinks).c_str());
  }
  Tensor* t = node(ctx, Op::FLASH_ATTN_EXT, Type::F32, {v->ne[0], q->ne[2], q->ne[1], q->ne[3]});
  t->set_param_f(0, scale);
  t->set_param_f(1, max_bias);
  t->set_param_f(2, logit_softcap);
  t->src[0] = q;
  t->src[1] = k;
  t->src[2] = v;
  t->src[3] = mask;
  t->src[4] = sinks;
  return t;
}

// ---- matrix products ----

Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b) {
  need("mul_mat", "a", a);
  need("mul_mat", "b", b);
  need_type("mul_mat", "a", a, is_readable(a->type), "a float or block type");
  need_type("mul_mat", "b", b, is_float(b->type), "F32, F16 or BF16");
  if (a->ne[0] != b->ne[0]) fail("mul_mat: a %s and b %s: row lengths differ", sh(a).c_str(), sh(b).c_str());
  if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
    fail("mul_mat: a %s and b %s: a's dims 2, 3 must divide b's", sh(a).c_str(), sh(b).c_str());
  if (is_quantized(a->type) && !a->rows_contiguous())
    fail("mul_mat: a %s has non-contiguous %s rows", sh(a).c_str(), type_name(a->type));
  Tensor* t = node(ctx, Op::MUL_MAT, Type::F32, {a->ne[1], b->ne[1], b->ne[2], b->ne[3]});
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* mul_mat_id(Context& ctx, Tensor* as, Tensor* b, Tensor* ids) {
  const char* op = "mul_mat_id";
  need(op, "as", as);
  need(op, "b", b);
  need(op, "ids", ids);
  need_type(op, "as", as, is_readable(as->type), "a float or block type");
  need_type(op, "b", b, is_float(b->type), "F32, F16 or BF16");
  need_type(op, "ids", ids, ids->type == Type::I32, "I32");
  if (as->ne[0] != b->ne[0])
    fail("%s: as %s and b %s: row lengths differ", op, sh(as).c_str(), sh(b).c_str());
  if (as->ne[3] != 1 || b->ne[3] != 1)
    fail("%s: as %s and b %s must be 3-dimensional", op, sh(as).c_str(), sh(b).c_str());
  if (ids->ne[1] != b->ne[2] || ids->ne[2] != 1 || ids->ne[3] != 1 || b->ne[1] == 0 ||
      ids->ne[0] % b->ne[1] != 0)
    fail("%s: b %s and ids %s: ids must be [n_used, %lld] with b's dim 1 (1 or n_used) dividing n_used", op,
         sh(b).c_str(), sh(ids).c_str(), (long long)b->ne[2]);
  if (is_quantized(as->type) && !as->rows_contiguous())
    fail("%s: as %s has non-contiguous %s rows", op, sh(as).c_str(), type_name(as->type));
  Tensor* t = node(ctx, Op::MUL_MAT_ID, Type::F32, {as->ne[1], ids->ne[0], b->ne[2], 1});
  t->src[0] = as;
  t->src[1] = b;
  t->src[2] = ids;
  return t;
}

}  // namespace hexllm::graph
