// Graph builders: each creates one node, checks shapes and types (throwing hexllm::Error
// with the op and the shapes on misuse), and records its parameters.
//
// Conventions (ggml's): ne[0] is the row length. A matrix of M rows of K values is [K, M].
// MUL_MAT(a [K, M, b2, b3], b [K, N, c2, c3]) = [M, N, c2, c3], each output row n holding
// the dot products of b's row n with every row of a; a's dims 2/3 are broadcast to b's
// (c2 % b2 == 0, c3 % b3 == 0): output batch i2 uses a's batch i2 / (c2 / b2), as query
// head h uses KV head h / (n_head / n_head_kv). Outputs are F32 unless stated.
// Sources are stored in argument order (src[0] = a, src[1] = b, ...) except where noted.
// Views (VIEW/RESHAPE/PERMUTE/TRANSPOSE, SET_ROWS, CPY) have view_src = the storage root and
// view_offs relative to it; layout views keep src[0] = the viewed tensor.
#pragma once

#include <cstdint>

#include "graph/context.h"
#include "graph/tensor.h"

namespace hexllm::graph {

// ---- layout (no compute) ----
Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset);
Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                size_t offset);
Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                size_t nb2, size_t nb3, size_t offset);
// Reshape needs a contiguous source; the element count must match.
Tensor* reshape_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1);
Tensor* reshape_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2);
Tensor* reshape_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
// Source dim i becomes output dim axis_i (ggml_permute semantics).
Tensor* permute(Context& ctx, Tensor* a, int axis0, int axis1, int axis2, int axis3);
Tensor* transpose(Context& ctx, Tensor* a);  // swaps dims 0 and 1

// ---- data movement ----
// GET_ROWS(a [ne0, R, n2, n3], idx I32 [n, n2, n3]) = [ne0, n, n2, n3] F32:
// out[:, i, j, k] = a[:, idx[i, j, k], j, k]. `a` may be any type (rows are dequantized).
Tensor* get_rows(Context& ctx, Tensor* a, Tensor* idx);
// SET_ROWS: writes the rows of src [ne0, n, n2, n3] (F32) into dst rows idx [n, n2, n3] (I32
// or I64), converting to dst's type (F32/F16/BF16). idx may broadcast over src's dims 2/3
// (idx [n, n2', n3'] with n2 % n2' == 0). Returns a view of dst that depends on the write:
// read the updated dst through it. src[0] = src, src[1] = idx, view_src = dst's root.
Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* idx);
// CPY: copies a into b (same element count, any strides, F32/F16 conversion). Element k of a
// in logical order (ne[0] fastest) goes to element k of b. Returns a view of b that depends
// on the copy; src[0] = a, src[1] = b.
Tensor* cpy(Context& ctx, Tensor* a, Tensor* b);
Tensor* cont(Context& ctx, Tensor* a);  // contiguous copy, same type and shape
Tensor* dup(Context& ctx, Tensor* a);   // copy, same type and shape (contiguous output)
// CONCAT along `dim`; params[0] = dim.
Tensor* concat(Context& ctx, Tensor* a, Tensor* b, int dim);
// REPEAT a to the shape of `like` (whole multiples per dim).
Tensor* repeat(Context& ctx, Tensor* a, const Tensor* like);
// PAD with zeros after the data: params[0..3] = p0..p3 (output ne[i] = a->ne[i] + p_i).
Tensor* pad(Context& ctx, Tensor* a, int p0, int p1, int p2, int p3);
// FILL: a new tensor of the given type (F32/F16) and shape with every element = value
// (params f[0]).
Tensor* fill(Context& ctx, Type type, std::span<const int64_t> ne, float value);

// ---- elementwise ----
Tensor* add(Context& ctx, Tensor* a, Tensor* b);
Tensor* sub(Context& ctx, Tensor* a, Tensor* b);
Tensor* mul(Context& ctx, Tensor* a, Tensor* b);
Tensor* div(Context& ctx, Tensor* a, Tensor* b);
// ADD_ID(a [ne0, n_used, n_tok], b [ne0, n_expert], ids I32 [n_used, n_tok]):
// out[:, i, t] = a[:, i, t] + b[:, ids[i, t]].
Tensor* add_id(Context& ctx, Tensor* a, Tensor* b, Tensor* ids);
// SCALE: s * a + bias (params f[0] = s, f[1] = bias).
Tensor* scale(Context& ctx, Tensor* a, float s, float bias = 0.0f);
Tensor* clamp(Context& ctx, Tensor* a, float min, float max);  // params f[0] = min, f[1] = max
Tensor* sqr(Context& ctx, Tensor* a);
Tensor* sqrt(Context& ctx, Tensor* a);
Tensor* silu(Context& ctx, Tensor* a);        // x * sigmoid(x)
Tensor* gelu(Context& ctx, Tensor* a);        // tanh approximation
Tensor* gelu_quick(Context& ctx, Tensor* a);  // x * sigmoid(1.702 x)
Tensor* sigmoid(Context& ctx, Tensor* a);
Tensor* exp(Context& ctx, Tensor* a);
Tensor* neg(Context& ctx, Tensor* a);
Tensor* softplus(Context& ctx, Tensor* a);  // log(1 + e^x)
Tensor* tanh(Context& ctx, Tensor* a);

// Gated units: act(a) * b, a and b of the same shape. With b == nullptr, a's rows are split
// in halves: act(first half) * second half (params[0] = 1 swaps the halves).
Tensor* swiglu(Context& ctx, Tensor* a, Tensor* b);
Tensor* geglu(Context& ctx, Tensor* a, Tensor* b);
// gpt-oss: x = min(a, limit), y = clamp(b, -limit, limit); out = x * sigmoid(alpha x) * (y + 1).
// params f[2] = alpha, f[3] = limit.
Tensor* swiglu_oai(Context& ctx, Tensor* a, Tensor* b, float alpha, float limit);

// ---- row-wise ----
// RMS_NORM: x / sqrt(mean(x^2) + eps); NORM: (x - mean) / sqrt(var + eps);
// L2_NORM: x / max(||x||, eps). params f[0] = eps.
Tensor* rms_norm(Context& ctx, Tensor* a, float eps);
Tensor* norm(Context& ctx, Tensor* a, float eps);
Tensor* l2_norm(Context& ctx, Tensor* a, float eps);
// SOFT_MAX(a [n, rows, n2, n3], mask [n, >= rows, m2, m3] F32/F16 or null, sinks [n2] F32 or
// null): softmax(scale * a + slope * mask) per row. Mask dims 2/3 broadcast (n2 % m2 == 0).
// ALiBi slope per head (dim 2) when max_bias > 0. A sink adds exp(sink[h]) to the
// denominator. A row whose logits are all -inf gives zeros. params f[0] = scale, f[1] = max_bias.
Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask, float scale, float max_bias, Tensor* sinks = nullptr);
Tensor* sum_rows(Context& ctx, Tensor* a);  // [1, rows, ...]
enum class SortOrder : int32_t { Ascending = 0, Descending = 1 };
// ARGSORT: I32 indices that sort each row (params[0] = order). Ties keep index order.
Tensor* argsort(Context& ctx, Tensor* a, SortOrder order);
// TOP_K: I32 [k, rows...] indices of the k largest values of each row, largest first, ties by
// lower index. params[0] = k.
Tensor* top_k(Context& ctx, Tensor* a, int k);

// ---- attention ----
enum RopeMode : int32_t { kRopeNormal = 0, kRopeNeox = 2 };
struct RopeParams {
  int32_t n_dims = 0;  // rotated dims (<= head dim); the rest pass through
  int32_t mode = kRopeNormal;
  int32_t n_ctx_orig = 0;  // YaRN original context
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;  // YaRN; 0 disables
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
};
// ROPE(a [head_dim, n_head, n_tok, 1], pos I32 [n_tok], freq_factors F32 [n_dims/2] or null).
// Pair i of token t rotates by pos[t] * freq_base^(-2i/n_dims) / freq_factor[i] * freq_scale
// (with YaRN ramp when ext_factor != 0); normal mode pairs (2i, 2i+1), NEOX (i, i + n_dims/2).
// params: [0] n_dims, [1] mode, [2] n_ctx_orig, f[3] freq_base, f[4] freq_scale,
// f[5] ext_factor, f[6] attn_factor, f[7] beta_fast, f[8] beta_slow.
Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p);
// FLASH_ATTN_EXT(q [D, n_q, n_head, 1] F32, k [D, n_kv, n_head_kv, 1] F16/F32,
// v [Dv, n_kv, n_head_kv, 1] F16/F32, mask [n_kv, >= n_q] F16 or null, sinks [n_head] or null)
// = [Dv, n_head, n_q, 1] F32 (head-major rows: reshape to [Dv * n_head, n_q]).
// Query head h uses KV head h / (n_head / n_head_kv). softmax(scale * q.k + mask) with
// optional logit soft-capping (softcap * tanh(s / softcap)) and ALiBi (slope * mask); the
// mask broadcasts over heads (mask dims 2/3 divide q's). A sink adds exp(sink[h]) to the
// denominator; a query with every key masked (and no sink) gives zeros.
// params f[0] = scale, f[1] = max_bias, f[2] = logit_softcap. src: q, k, v, mask, sinks.
Tensor* flash_attn_ext(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, float max_bias,
                       float logit_softcap, Tensor* sinks = nullptr);

// ---- matrix products ----
Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b);
// MUL_MAT_ID(as [K, M, n_expert], b [K, n_b, n_tok] F32, ids I32 [n_used, n_tok])
// = [M, n_used, n_tok]: out[:, i, t] = as[:, :, ids[i, t]] . b[:, i % n_b, t].
Tensor* mul_mat_id(Context& ctx, Tensor* as, Tensor* b, Tensor* ids);

}  // namespace hexllm::graph
