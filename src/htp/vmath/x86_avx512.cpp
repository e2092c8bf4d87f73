// x86 AVX-512 (F, BW, VL, DQ) vmath table: 16 lanes. This file alone is compiled with the
// AVX-512 flags and is only called after vmath_select() has seen those features.
//
// As in x86_avx2.cpp, each vector function performs the IEEE operations of its scalar
// definition in vmath_scalar.h, lane by lane, in the same order (the tests compare the tables
// bit for bit); the special cases the scalar code branches on are blended in with masks.
// Elementwise functions finish the last n % 16 elements with one masked step: lanes are
// independent, so the mask changes nothing but which lanes are read and written (masked loads
// do not fault past n). Reductions keep 2 x 16 accumulators (the 32 lanes of vmath.h) and then
// follow its order exactly: see reduce_terms and reduce_fma.

// GCC 12's avx512fintrin.h passes a self-initialized "undefined" vector as the unused
// pass-through of most unmasked intrinsics, which -Wmaybe-uninitialized and -Wuninitialized
// flag once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "base/fp16.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"
#include "htp/vmath/vmath_scalar.h"
#include "htp/vmath/x86_transpose.h"

#define VM_INLINE inline __attribute__((always_inline))

namespace hexllm::htp {
namespace {

using V = __m512;
using V8 = __m256;

// Which lanes a step touches: all 16 (the loop body) or those of a mask (a tail). Steps are
// generic lambdas called with both, so the body keeps plain loads and stores.
struct All {};
struct Some {
  __mmask16 k;
};
VM_INLINE Some first(uint32_t r) { return {(__mmask16)((1u << r) - 1)}; }  // r in [1, 16]

VM_INLINE V set1(float v) { return _mm512_set1_ps(v); }
VM_INLINE __m512i set1i(int32_t v) { return _mm512_set1_epi32(v); }
VM_INLINE V ld(const float* p, All) { return _mm512_loadu_ps(p); }
VM_INLINE V ld(const float* p, Some m) { return _mm512_maskz_loadu_ps(m.k, p); }
VM_INLINE void st(float* p, V v, All) { _mm512_storeu_ps(p, v); }
VM_INLINE void st(float* p, V v, Some m) { _mm512_mask_storeu_ps(p, m.k, v); }
VM_INLINE V ldh(const uint16_t* p, All) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p)); }
VM_INLINE V ldh(const uint16_t* p, Some m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m.k, p)); }
VM_INLINE __m256i to_f16(V v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }
VM_INLINE void sth(uint16_t* p, V v, All) { _mm256_storeu_si256((__m256i*)p, to_f16(v)); }
VM_INLINE void sth(uint16_t* p, V v, Some m) { _mm256_mask_storeu_epi16(p, m.k, to_f16(v)); }

VM_INLINE V sign_mask() { return _mm512_castsi512_ps(set1i((int)0x80000000u)); }
VM_INLINE V vabs(V x) { return _mm512_andnot_ps(sign_mask(), x); }
VM_INLINE V neg_abs(V x) { return _mm512_or_ps(x, sign_mask()); }  // -|x|, the same bits
template <int Pred>
VM_INLINE __mmask16 cmp(V a, V b) {
  return _mm512_cmp_ps_mask(a, b, Pred);
}

// The scalar definition clamps x to kVmExpLo and rounds e^kVmExpLo to +0. As in the AVX2
// table, those lanes are computed on 0 instead (which also makes the lower clamp unneeded) and
// cleared at the end: on cores with denormal assists, their underflowing scaling would cost
// ~100 cycles per lane, and every masked attention score (-inf) is such a lane.
// 2^k is applied with scalef: p 2^(k>>1) is exact (a normal float), so the scalar definition's
// two multiplies round once, at p 2^k, the value scalef rounds (overflow and gradual underflow
// alike); nan lanes stay nan.
VM_INLINE V vexp(V x) {
  const __mmask16 keep = cmp<_CMP_NLE_UQ>(x, set1(kVmExpLo));       // not x <= lo; nan is kept
  x = _mm512_min_ps(set1(kVmExpHi), _mm512_maskz_mov_ps(keep, x));  // nan passes through
  const V k = _mm512_roundscale_ps(_mm512_mul_ps(x, set1(kVmLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm512_fmadd_ps(k, set1(-kVmLn2Hi), x);
  r = _mm512_fmadd_ps(k, set1(-kVmLn2Lo), r);
  V q = _mm512_fmadd_ps(set1(kVmExpQ[4]), r, set1(kVmExpQ[3]));
  q = _mm512_fmadd_ps(q, r, set1(kVmExpQ[2]));
  q = _mm512_fmadd_ps(q, r, set1(kVmExpQ[1]));
  q = _mm512_fmadd_ps(q, r, set1(kVmExpQ[0]));
  V p = _mm512_fmadd_ps(q, r, set1(1.0f));
  p = _mm512_fmadd_ps(p, r, set1(1.0f));
  return _mm512_maskz_scalef_ps(keep, p, k);
}

VM_INLINE V vlog(V x) {
  const __mmask16 sub = cmp<_CMP_LT_OQ>(x, set1(0x1p-126f));
  const __m512i b = _mm512_castps_si512(_mm512_mask_mul_ps(x, sub, x, set1(0x1p23f)));
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(b, 23), set1i(127));
  e = _mm512_mask_sub_epi32(e, sub, e, set1i(23));
  V m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(b, set1i(0x7fffff)), set1i(0x3f800000)));
  const __mmask16 big = cmp<_CMP_GT_OQ>(m, set1(kVmSqrt2));
  m = _mm512_mask_mul_ps(m, big, m, set1(0.5f));
  e = _mm512_mask_add_epi32(e, big, e, set1i(1));
  const V f = _mm512_sub_ps(m, set1(1.0f));
  const V s = _mm512_div_ps(f, _mm512_add_ps(f, set1(2.0f)));
  const V z = _mm512_mul_ps(s, s);
  V l = _mm512_fmadd_ps(set1(kVmLogL[3]), z, set1(kVmLogL[2]));
  l = _mm512_fmadd_ps(l, z, set1(kVmLogL[1]));
  l = _mm512_fmadd_ps(l, z, set1(kVmLogL[0]));
  const V lp = _mm512_sub_ps(f, _mm512_mul_ps(s, _mm512_fnmadd_ps(z, l, f)));
  const V ef = _mm512_cvtepi32_ps(e);
  V y = _mm512_fmadd_ps(ef, set1(kVmLn2Hi), _mm512_fmadd_ps(ef, set1(kVmLn2Lo), lp));
  // The scalar definition's special cases.
  const V zero = _mm512_setzero_ps(), inf = set1(__builtin_inff());
  y = _mm512_mask_mov_ps(y, cmp<_CMP_LT_OQ>(x, zero), set1(__builtin_nanf("")));
  y = _mm512_mask_mov_ps(y, cmp<_CMP_EQ_OQ>(x, zero), set1(-__builtin_inff()));
  y = _mm512_mask_mov_ps(y, cmp<_CMP_EQ_OQ>(x, inf), inf);
  return _mm512_mask_add_ps(y, cmp<_CMP_UNORD_Q>(x, x), x, x);
}

VM_INLINE V vlog1p_pos(V t) {
  const V one = set1(1.0f);
  const V u = _mm512_add_ps(one, t);
  return _mm512_add_ps(vlog(u), _mm512_div_ps(_mm512_sub_ps(t, _mm512_sub_ps(u, one)), u));
}

VM_INLINE V vtanh(V x) {
  const V a = vabs(x);
  const V z = _mm512_mul_ps(x, x);
  V t = _mm512_fmadd_ps(set1(kVmTanhT[6]), z, set1(kVmTanhT[5]));
  t = _mm512_fmadd_ps(t, z, set1(kVmTanhT[4]));
  t = _mm512_fmadd_ps(t, z, set1(kVmTanhT[3]));
  t = _mm512_fmadd_ps(t, z, set1(kVmTanhT[2]));
  t = _mm512_fmadd_ps(t, z, set1(kVmTanhT[1]));
  t = _mm512_fmadd_ps(t, z, set1(kVmTanhT[0]));
  const V small = _mm512_fmadd_ps(_mm512_mul_ps(x, z), t, x);
  const V e = vexp(_mm512_add_ps(a, a));
  const V large = _mm512_sub_ps(set1(1.0f), _mm512_div_ps(set1(2.0f), _mm512_add_ps(e, set1(1.0f))));
  const V y = _mm512_mask_blend_ps(cmp<_CMP_LT_OQ>(a, set1(kVmTanhSmall)), large, small);
  return _mm512_or_ps(y, _mm512_and_ps(x, sign_mask()));
}

// vm_x_sigmoid: x n / (1 + e), e = e^-|v|, n = v < 0 ? e : 1.
VM_INLINE V vx_sigmoid(V x, V v) {
  const V e = vexp(neg_abs(v));
  const V n = _mm512_mask_blend_ps(cmp<_CMP_LT_OQ>(v, _mm512_setzero_ps()), set1(1.0f), e);
  return _mm512_div_ps(_mm512_mul_ps(x, n), _mm512_add_ps(set1(1.0f), e));
}

VM_INLINE V vsigmoid(V x) { return vx_sigmoid(set1(1.0f), x); }
VM_INLINE V vsilu(V x) { return vx_sigmoid(x, x); }
VM_INLINE V vgelu(V x) {
  return vx_sigmoid(x, _mm512_mul_ps(x, _mm512_fmadd_ps(set1(kVmGeluK2), _mm512_mul_ps(x, x), set1(kVmGeluK1))));
}
VM_INLINE V vgelu_quick(V x) { return vx_sigmoid(x, _mm512_mul_ps(x, set1(kVmGeluQuick))); }
VM_INLINE V vsoftplus(V x) {
  return _mm512_add_ps(_mm512_max_ps(_mm512_setzero_ps(), x), vlog1p_pos(vexp(neg_abs(x))));
}
VM_INLINE V vsqrt(V x) { return _mm512_sqrt_ps(x); }

VM_INLINE V vswiglu_oai(V g, V u, float alpha, float limit) {
  const V x = _mm512_min_ps(set1(limit), g);
  const V y = _mm512_min_ps(set1(limit), _mm512_max_ps(set1(-limit), u));
  return _mm512_mul_ps(vx_sigmoid(x, _mm512_mul_ps(set1(alpha), x)), _mm512_add_ps(y, set1(1.0f)));
}

// ---- elementwise drivers -------------------------------------------------------------------

// step(i, lanes) handles elements [i, i + 16), the last time only the lanes below n.
template <class Step>
VM_INLINE void each(uint32_t n, Step step) {
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) step(i, All{});
  if (i < n) step(i, first(n - i));
}

template <V (*F)(V)>
void map(const float* x, float* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { st(y + i, F(ld(x + i, m)), m); });
}

// ---- reductions ----------------------------------------------------------------------------

VM_INLINE V8 lo8(V v) { return _mm512_castps512_ps256(v); }
VM_INLINE V8 hi8(V v) { return _mm512_extractf32x8_ps(v, 1); }

// The join of a reduction at each width: lanes of zmm, lanes of ymm, the 8-lane fold
// ((l + l+4), (+ l+2), (+ l+1), as in the AVX2 table) and scalars.
struct Add {
  static VM_INLINE V join(V a, V b) { return _mm512_add_ps(a, b); }
  static VM_INLINE V8 join(V8 a, V8 b) { return _mm256_add_ps(a, b); }
  static VM_INLINE float join(float a, float b) { return a + b; }
  static VM_INLINE float fold(V8 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

// max_ps(a, b) is vm_max(a, b): b when either is nan or both are zeros.
struct Max {
  static VM_INLINE V join(V a, V b) { return _mm512_max_ps(a, b); }
  static VM_INLINE V8 join(V8 a, V8 b) { return _mm256_max_ps(a, b); }
  static VM_INLINE float join(float a, float b) { return vm_max(a, b); }
  static VM_INLINE float fold(V8 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

// The 32 lanes of vmath.h folded to 8: (l + l+8) + (l+16 + l+24), a0 holding lanes 0..15.
template <class Op>
VM_INLINE V8 fold32(V a0, V a1) {
  return Op::join(Op::join(lo8(a0), hi8(a0)), Op::join(lo8(a1), hi8(a1)));
}

// Reductions whose scalar step is s = join(s, term(i)): term(i, lanes) computes (and stores)
// the terms of 16 elements. The rest after the blocks of 32 (< 32 elements) has its terms
// computed lane-wise in at most two masked steps, which gives the same bits; they are then
// joined in the documented order: blocks of 8 lane-wise, the 8-lane fold, the tail in order.
template <class Op, class Term>
VM_INLINE float reduce_terms(uint32_t n, float init, Term term) {
  V a0 = set1(init), a1 = a0;
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = Op::join(a0, term(i, All{}));
    a1 = Op::join(a1, term(i + 16, All{}));
  }
  V8 v = fold32<Op>(a0, a1);
  const uint32_t r = n - i;
  float t[32];
  if (r > 0) st(t, term(i, first(r < 16 ? r : 16)), All{});
  if (r > 16) st(t + 16, term(i + 16, first(r - 16)), All{});
  uint32_t j = 0;
  for (; j + 8 <= r; j += 8) v = Op::join(v, _mm256_loadu_ps(t + j));
  float s = Op::fold(v);
  for (; j < r; ++j) s = Op::join(s, t[j]);
  return s;
}

// Sums whose step is an fma into the accumulator (s = fma(u, w, s)): no term to compute ahead.
// step(acc, i, lanes) folds elements [i, i + 16) into acc; blocks of 8 use the low 8 lanes
// (masked loads; the high lanes stay unused), and the last n % 8 elements sstep in order.
template <class Step, class SStep>
VM_INLINE float reduce_fma(uint32_t n, Step step, SStep sstep) {
  V a0 = _mm512_setzero_ps(), a1 = a0;
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = step(a0, i, All{});
    a1 = step(a1, i + 16, All{});
  }
  V v = _mm512_zextps256_ps512(fold32<Add>(a0, a1));
  for (; i + 8 <= n; i += 8) v = step(v, i, first(8));
  float s = Add::fold(lo8(v));
  for (; i < n; ++i) s = sstep(s, i);
  return s;
}

// ---- table entries -------------------------------------------------------------------------

void exp_(const float* x, float* y, uint32_t n) { map<vexp>(x, y, n); }
void silu(const float* x, float* y, uint32_t n) { map<vsilu>(x, y, n); }
void gelu(const float* x, float* y, uint32_t n) { map<vgelu>(x, y, n); }
void gelu_quick(const float* x, float* y, uint32_t n) { map<vgelu_quick>(x, y, n); }
void sigmoid(const float* x, float* y, uint32_t n) { map<vsigmoid>(x, y, n); }
void tanh_(const float* x, float* y, uint32_t n) { map<vtanh>(x, y, n); }
void softplus(const float* x, float* y, uint32_t n) { map<vsoftplus>(x, y, n); }
void sqrt_(const float* x, float* y, uint32_t n) { map<vsqrt>(x, y, n); }
void log_(const float* x, float* y, uint32_t n) { map<vlog>(x, y, n); }

void scale_bias(const float* x, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_fmadd_ps(va, ld(x + i, m), vb), m); });
}

void mul(const float* a, const float* b, float* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_mul_ps(ld(a + i, m), ld(b + i, m)), m); });
}

void axpy(float a, const float* x, float* y, uint32_t n) {
  const V va = set1(a);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_fmadd_ps(va, ld(x + i, m), ld(y + i, m)), m); });
}

float sum(const float* x, uint32_t n) {
  return reduce_terms<Add>(n, 0.0f, [&](uint32_t i, auto m) { return ld(x + i, m); });
}

float sum_sq(const float* x, uint32_t n) {
  return reduce_fma(
      n,
      [&](V acc, uint32_t i, auto m) {
        const V v = ld(x + i, m);
        return _mm512_fmadd_ps(v, v, acc);
      },
      [&](float s, uint32_t i) { return vm_fma(x[i], x[i], s); });
}

float max(const float* x, uint32_t n) {
  return reduce_terms<Max>(n, -__builtin_inff(), [&](uint32_t i, auto m) { return ld(x + i, m); });
}

float dot(const float* a, const float* b, uint32_t n) {
  return reduce_fma(
      n, [&](V acc, uint32_t i, auto m) { return _mm512_fmadd_ps(ld(a + i, m), ld(b + i, m), acc); },
      [&](float s, uint32_t i) { return vm_fma(a[i], b[i], s); });
}

// x and y may be the same array: each step reads its elements before it writes them.
float exp_sub_sum(const float* x, float* y, uint32_t n, float m) {
  const V vm = set1(m);
  return reduce_terms<Add>(n, 0.0f, [&](uint32_t i, auto lanes) {
    const V e = vexp(_mm512_sub_ps(ld(x + i, lanes), vm));
    st(y + i, e, lanes);
    return e;
  });
}

void f16_to_f32(const uint16_t* x, float* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { st(y + i, ldh(x + i, m), m); });
}

void f32_to_f16(const float* x, uint16_t* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { sth(y + i, ld(x + i, m), m); });
}

float dot_f16(const float* a, const uint16_t* b, uint32_t n) {
  return reduce_fma(
      n, [&](V acc, uint32_t i, auto m) { return _mm512_fmadd_ps(ld(a + i, m), ldh(b + i, m), acc); },
      [&](float s, uint32_t i) { return vm_fma(a[i], fp16_to_fp32(b[i]), s); });
}

void axpy_f16(float a, const uint16_t* x, float* y, uint32_t n) {
  const V va = set1(a);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_fmadd_ps(va, ldh(x + i, m), ld(y + i, m)), m); });
}

// Up to 8 rows' accumulators for 32 dims (masks m0, m1 for the two halves) stay in registers
// over all n value rows.
template <int NR>
VM_INLINE void pv_rows(const float* p, size_t ps, const uint16_t* v, size_t vs, uint32_t n, float* o, size_t os,
                       uint32_t d0, Some m0, Some m1) {
  V a0[NR], a1[NR];
  for (int r = 0; r < NR; ++r) {
    a0[r] = ld(o + r * os + d0, m0);
    a1[r] = ld(o + r * os + d0 + 16, m1);
  }
  for (uint32_t c = 0; c < n; ++c) {
    const V v0 = ldh(v + c * vs + d0, m0), v1 = ldh(v + c * vs + d0 + 16, m1);
    for (int r = 0; r < NR; ++r) {
      const V b = set1(p[r * ps + c]);
      a0[r] = _mm512_fmadd_ps(b, v0, a0[r]);
      a1[r] = _mm512_fmadd_ps(b, v1, a1[r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    st(o + r * os + d0, a0[r], m0);
    st(o + r * os + d0 + 16, a1[r], m1);
  }
}

void pv_f16(const vmath_pv& a) {
  const size_t ps = a.p_stride, vs = a.v_stride, os = a.o_stride;
  auto lanes = [](uint32_t left) { return Some{left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1)}; };
  for (uint32_t r0 = 0; r0 < a.rows; r0 += 8) {
    const float* p = a.p + r0 * ps;
    float* o = a.o + r0 * os;
    const uint32_t nr = a.rows - r0 < 8 ? a.rows - r0 : 8;
    for (uint32_t d0 = 0; d0 < a.dv; d0 += 32) {
      const Some m0 = lanes(a.dv - d0), m1 = lanes(a.dv - d0 > 16 ? a.dv - d0 - 16 : 0);
      htp_by_count<8>(nr, [&]<int NR>() { pv_rows<NR>(p, ps, a.v, vs, a.n, o, os, d0, m0, m1); });
    }
  }
}

void clamp(const float* x, float* y, uint32_t n, float lo, float hi) {
  const V vlo = set1(lo), vhi = set1(hi);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_min_ps(vhi, _mm512_max_ps(vlo, ld(x + i, m))), m); });
}

void sub_scale(const float* x, float* y, uint32_t n, float mean, float s) {
  const V vm = set1(mean), vs = set1(s);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_mul_ps(_mm512_sub_ps(ld(x + i, m), vm), vs), m); });
}

void scale_mul(const float* x, const float* w, float* y, uint32_t n, float s) {
  const V vs = set1(s);
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_mul_ps(_mm512_mul_ps(ld(x + i, m), vs), ld(w + i, m)), m); });
}

float sum_sq_dev(const float* x, uint32_t n, float mean) {
  const V vm = set1(mean);
  return reduce_fma(
      n,
      [&](V acc, uint32_t i, auto m) {
        const V d = _mm512_sub_ps(ld(x + i, m), vm);
        return _mm512_fmadd_ps(d, d, acc);
      },
      [&](float s, uint32_t i) {
        const float d = x[i] - mean;
        return vm_fma(d, d, s);
      });
}

void swiglu(const float* g, const float* u, float* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_mul_ps(vsilu(ld(g + i, m)), ld(u + i, m)), m); });
}

void geglu(const float* g, const float* u, float* y, uint32_t n) {
  each(n, [&](uint32_t i, auto m) { st(y + i, _mm512_mul_ps(vgelu(ld(g + i, m)), ld(u + i, m)), m); });
}

void swiglu_oai(const float* g, const float* u, float* y, uint32_t n, float alpha, float limit) {
  each(n, [&](uint32_t i, auto m) { st(y + i, vswiglu_oai(ld(g + i, m), ld(u + i, m), alpha, limit), m); });
}

float scale_add_max(const float* x, const float* m, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  if (m == nullptr) {
    return reduce_terms<Max>(n, -__builtin_inff(), [&](uint32_t i, auto lanes) {
      const V v = _mm512_mul_ps(va, ld(x + i, lanes));
      st(y + i, v, lanes);
      return v;
    });
  }
  return reduce_terms<Max>(n, -__builtin_inff(), [&](uint32_t i, auto lanes) {
    const V v = _mm512_fmadd_ps(vb, ld(m + i, lanes), _mm512_mul_ps(va, ld(x + i, lanes)));
    st(y + i, v, lanes);
    return v;
  });
}

float scale_add_max_f16(const float* x, const uint16_t* m, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  return reduce_terms<Max>(n, -__builtin_inff(), [&](uint32_t i, auto lanes) {
    const V v = _mm512_fmadd_ps(vb, ldh(m + i, lanes), _mm512_mul_ps(va, ld(x + i, lanes)));
    st(y + i, v, lanes);
    return v;
  });
}

const vmath_ops kAvx512 = {
    "avx512",
    exp_,
    silu,
    gelu,
    gelu_quick,
    sigmoid,
    tanh_,
    softplus,
    sqrt_,
    scale_bias,
    mul,
    axpy,
    sum,
    sum_sq,
    max,
    dot,
    exp_sub_sum,
    f16_to_f32,
    f32_to_f16,
    dot_f16,
    axpy_f16,
    log_,
    clamp,
    sub_scale,
    scale_mul,
    sum_sq_dev,
    swiglu,
    geglu,
    swiglu_oai,
    scale_add_max,
    scale_add_max_f16,
    transpose_f32,
    pv_f16,
};

}  // namespace

const vmath_ops* vmath_avx512() { return &kAvx512; }

}  // namespace hexllm::htp
