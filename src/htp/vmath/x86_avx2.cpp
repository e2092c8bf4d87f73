// x86 AVX2 + FMA + F16C vmath table. This file alone is compiled with -mavx2 -mfma -mf16c and
// is only called after vmath_select() has seen those features.
//
// Each vector function performs the IEEE operations of its scalar definition in
// vmath_scalar.h, lane by lane, in the same order (the tests compare the two tables bit for
// bit); special cases that the scalar code branches on are blended in. 8 lanes per step; the
// last n % 8 elements go through the scalar definitions. Reductions keep 4 x 8 accumulators
// (the 32 lanes of vmath.h).
#include <immintrin.h>

#include "base/fp16.h"
#include "htp/util.h"
#include "htp/vmath/vmath.h"
#include "htp/vmath/vmath_scalar.h"
#include "htp/vmath/x86_transpose.h"

#define VM_INLINE inline __attribute__((always_inline))

namespace hexllm::htp {
namespace {

using V = __m256;

VM_INLINE V set1(float v) { return _mm256_set1_ps(v); }
VM_INLINE V load(const float* p) { return _mm256_loadu_ps(p); }
VM_INLINE void store(float* p, V v) { _mm256_storeu_ps(p, v); }
VM_INLINE V sign_mask() { return _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u)); }
VM_INLINE V vabs(V x) { return _mm256_andnot_ps(sign_mask(), x); }
VM_INLINE V vneg(V x) { return _mm256_xor_ps(x, sign_mask()); }
VM_INLINE V vf16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }

// Lanes at or below kVmExpLo (the scalar definition clamps them there and rounds to +0) are
// computed on 0, which also makes the lower clamp unneeded, and cleared at the end: their
// product would underflow, and an underflowing multiply costs a microcode assist of ~100
// cycles per lane on Intel cores. Every masked score of attention and softmax (-inf) was one:
// 12x slower exp_sub_sum with half the lanes masked.
VM_INLINE V vexp(V x) {
  const V zero = _mm256_cmp_ps(x, set1(kVmExpLo), _CMP_LE_OQ);
  x = _mm256_min_ps(set1(kVmExpHi), _mm256_andnot_ps(zero, x));  // nan passes through
  const V k =
      _mm256_round_ps(_mm256_mul_ps(x, set1(kVmLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm256_fmadd_ps(k, set1(-kVmLn2Hi), x);
  r = _mm256_fmadd_ps(k, set1(-kVmLn2Lo), r);
  V q = _mm256_fmadd_ps(set1(kVmExpQ[4]), r, set1(kVmExpQ[3]));
  q = _mm256_fmadd_ps(q, r, set1(kVmExpQ[2]));
  q = _mm256_fmadd_ps(q, r, set1(kVmExpQ[1]));
  q = _mm256_fmadd_ps(q, r, set1(kVmExpQ[0]));
  V p = _mm256_fmadd_ps(q, r, set1(1.0f));
  p = _mm256_fmadd_ps(p, r, set1(1.0f));
  const __m256i ki = _mm256_cvtps_epi32(k);
  const __m256i k1 = _mm256_srai_epi32(ki, 1);
  const __m256i k2 = _mm256_sub_epi32(ki, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  return _mm256_andnot_ps(zero, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
}

VM_INLINE V vlog(V x) {
  const V sub = _mm256_cmp_ps(x, set1(0x1p-126f), _CMP_LT_OQ);
  const V xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, set1(0x1p23f)), sub);
  const __m256i b = _mm256_castps_si256(xs);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127));
  e = _mm256_add_epi32(e, _mm256_and_si256(_mm256_castps_si256(sub), _mm256_set1_epi32(-23)));
  V m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x3f800000)));
  const V big = _mm256_cmp_ps(m, set1(kVmSqrt2), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, set1(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // big lanes are -1
  const V f = _mm256_sub_ps(m, set1(1.0f));
  const V s = _mm256_div_ps(f, _mm256_add_ps(f, set1(2.0f)));
  const V z = _mm256_mul_ps(s, s);
  V l = _mm256_fmadd_ps(set1(kVmLogL[3]), z, set1(kVmLogL[2]));
  l = _mm256_fmadd_ps(l, z, set1(kVmLogL[1]));
  l = _mm256_fmadd_ps(l, z, set1(kVmLogL[0]));
  const V lp = _mm256_sub_ps(f, _mm256_mul_ps(s, _mm256_fnmadd_ps(z, l, f)));
  const V ef = _mm256_cvtepi32_ps(e);
  V y = _mm256_fmadd_ps(ef, set1(kVmLn2Hi), _mm256_fmadd_ps(ef, set1(kVmLn2Lo), lp));
  // The scalar definition's special cases.
  const V inf = set1(__builtin_inff());
  y = _mm256_blendv_ps(y, set1(__builtin_nanf("")), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, vneg(inf), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, inf, _mm256_cmp_ps(x, inf, _CMP_EQ_OQ));
  return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

VM_INLINE V vlog1p_pos(V t) {
  const V one = set1(1.0f);
  const V u = _mm256_add_ps(one, t);
  return _mm256_add_ps(vlog(u), _mm256_div_ps(_mm256_sub_ps(t, _mm256_sub_ps(u, one)), u));
}

VM_INLINE V vtanh(V x) {
  const V a = vabs(x);
  const V z = _mm256_mul_ps(x, x);
  V t = _mm256_fmadd_ps(set1(kVmTanhT[6]), z, set1(kVmTanhT[5]));
  t = _mm256_fmadd_ps(t, z, set1(kVmTanhT[4]));
  t = _mm256_fmadd_ps(t, z, set1(kVmTanhT[3]));
  t = _mm256_fmadd_ps(t, z, set1(kVmTanhT[2]));
  t = _mm256_fmadd_ps(t, z, set1(kVmTanhT[1]));
  t = _mm256_fmadd_ps(t, z, set1(kVmTanhT[0]));
  const V small = _mm256_fmadd_ps(_mm256_mul_ps(x, z), t, x);
  const V e = vexp(_mm256_add_ps(a, a));
  const V large = _mm256_sub_ps(set1(1.0f), _mm256_div_ps(set1(2.0f), _mm256_add_ps(e, set1(1.0f))));
  const V y = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, set1(kVmTanhSmall), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(x, sign_mask()));
}

// vm_x_sigmoid: x n / (1 + e), e = e^-|v|, n = v < 0 ? e : 1.
VM_INLINE V vx_sigmoid(V x, V v) {
  const V e = vexp(vneg(vabs(v)));
  const V n = _mm256_blendv_ps(set1(1.0f), e, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(_mm256_mul_ps(x, n), _mm256_add_ps(set1(1.0f), e));
}

VM_INLINE V vsigmoid(V x) { return vx_sigmoid(set1(1.0f), x); }
VM_INLINE V vsilu(V x) { return vx_sigmoid(x, x); }
VM_INLINE V vgelu(V x) {
  return vx_sigmoid(x,
                    _mm256_mul_ps(x, _mm256_fmadd_ps(set1(kVmGeluK2), _mm256_mul_ps(x, x), set1(kVmGeluK1))));
}
VM_INLINE V vgelu_quick(V x) { return vx_sigmoid(x, _mm256_mul_ps(x, set1(kVmGeluQuick))); }
VM_INLINE V vsoftplus(V x) {
  return _mm256_add_ps(_mm256_max_ps(_mm256_setzero_ps(), x), vlog1p_pos(vexp(vneg(vabs(x)))));
}
VM_INLINE V vsqrt(V x) { return _mm256_sqrt_ps(x); }

VM_INLINE V vswiglu_oai(V g, V u, float alpha, float limit) {
  const V x = _mm256_min_ps(set1(limit), g);
  const V y = _mm256_min_ps(set1(limit), _mm256_max_ps(set1(-limit), u));
  return _mm256_mul_ps(vx_sigmoid(x, _mm256_mul_ps(set1(alpha), x)), _mm256_add_ps(y, set1(1.0f)));
}

// ---- elementwise drivers -------------------------------------------------------------------

template <V (*FV)(V), float (*FS)(float)>
void map(const float* x, float* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, FV(load(x + i)));
  for (; i < n; ++i) y[i] = FS(x[i]);
}

// ---- reductions ----------------------------------------------------------------------------

VM_INLINE float hsum(V v) {  // (l + l+4), (+ l+2), (+ l+1)
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

VM_INLINE float hmax(V v) {  // the same tree with max(a, b)
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Sum reduction: vstep(acc, i) folds elements [i, i + 8) into acc; sstep(s, i) folds element i.
template <class VStep, class SStep>
VM_INLINE float reduce_sum(uint32_t n, VStep vstep, SStep sstep) {
  V a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = vstep(a0, i);
    a1 = vstep(a1, i + 8);
    a2 = vstep(a2, i + 16);
    a3 = vstep(a3, i + 24);
  }
  V v = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  for (; i + 8 <= n; i += 8) v = vstep(v, i);
  float s = hsum(v);
  for (; i < n; ++i) s = sstep(s, i);
  return s;
}

template <class VStep, class SStep>
VM_INLINE float reduce_max(uint32_t n, VStep vstep, SStep sstep) {
  V a0 = set1(-__builtin_inff()), a1 = a0, a2 = a0, a3 = a0;
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = vstep(a0, i);
    a1 = vstep(a1, i + 8);
    a2 = vstep(a2, i + 16);
    a3 = vstep(a3, i + 24);
  }
  V v = _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3));
  for (; i + 8 <= n; i += 8) v = vstep(v, i);
  float s = hmax(v);
  for (; i < n; ++i) s = sstep(s, i);
  return s;
}

// ---- table entries -------------------------------------------------------------------------

void exp_(const float* x, float* y, uint32_t n) { map<vexp, vm_exp>(x, y, n); }
void silu(const float* x, float* y, uint32_t n) { map<vsilu, vm_silu>(x, y, n); }
void gelu(const float* x, float* y, uint32_t n) { map<vgelu, vm_gelu>(x, y, n); }
void gelu_quick(const float* x, float* y, uint32_t n) { map<vgelu_quick, vm_gelu_quick>(x, y, n); }
void sigmoid(const float* x, float* y, uint32_t n) { map<vsigmoid, vm_sigmoid>(x, y, n); }
void tanh_(const float* x, float* y, uint32_t n) { map<vtanh, vm_tanh>(x, y, n); }
void softplus(const float* x, float* y, uint32_t n) { map<vsoftplus, vm_softplus>(x, y, n); }
void sqrt_(const float* x, float* y, uint32_t n) { map<vsqrt, vm_sqrt>(x, y, n); }
void log_(const float* x, float* y, uint32_t n) { map<vlog, vm_log>(x, y, n); }

void scale_bias(const float* x, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_fmadd_ps(va, load(x + i), vb));
  for (; i < n; ++i) y[i] = vm_fma(a, x[i], b);
}

void mul(const float* a, const float* b, float* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_mul_ps(load(a + i), load(b + i)));
  for (; i < n; ++i) y[i] = a[i] * b[i];
}

void axpy(float a, const float* x, float* y, uint32_t n) {
  const V va = set1(a);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_fmadd_ps(va, load(x + i), load(y + i)));
  for (; i < n; ++i) y[i] = vm_fma(a, x[i], y[i]);
}

float sum(const float* x, uint32_t n) {
  return reduce_sum(
      n, [&](V acc, uint32_t i) { return _mm256_add_ps(acc, load(x + i)); },
      [&](float s, uint32_t i) { return s + x[i]; });
}

float sum_sq(const float* x, uint32_t n) {
  return reduce_sum(
      n,
      [&](V acc, uint32_t i) {
        const V v = load(x + i);
        return _mm256_fmadd_ps(v, v, acc);
      },
      [&](float s, uint32_t i) { return vm_fma(x[i], x[i], s); });
}

float max(const float* x, uint32_t n) {
  return reduce_max(
      n, [&](V acc, uint32_t i) { return _mm256_max_ps(acc, load(x + i)); },
      [&](float s, uint32_t i) { return vm_max(s, x[i]); });
}

float dot(const float* a, const float* b, uint32_t n) {
  return reduce_sum(
      n, [&](V acc, uint32_t i) { return _mm256_fmadd_ps(load(a + i), load(b + i), acc); },
      [&](float s, uint32_t i) { return vm_fma(a[i], b[i], s); });
}

float exp_sub_sum(const float* x, float* y, uint32_t n, float m) {
  const V vm = set1(m);
  return reduce_sum(
      n,
      [&](V acc, uint32_t i) {
        const V e = vexp(_mm256_sub_ps(load(x + i), vm));
        store(y + i, e);
        return _mm256_add_ps(acc, e);
      },
      [&](float s, uint32_t i) {
        y[i] = vm_exp(x[i] - m);
        return s + y[i];
      });
}

void f16_to_f32(const uint16_t* x, float* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, vf16(x + i));
  for (; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void f32_to_f16(const float* x, uint16_t* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i*)(y + i), _mm256_cvtps_ph(load(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

float dot_f16(const float* a, const uint16_t* b, uint32_t n) {
  return reduce_sum(
      n, [&](V acc, uint32_t i) { return _mm256_fmadd_ps(load(a + i), vf16(b + i), acc); },
      [&](float s, uint32_t i) { return vm_fma(a[i], fp16_to_fp32(b[i]), s); });
}

void axpy_f16(float a, const uint16_t* x, float* y, uint32_t n) {
  const V va = set1(a);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_fmadd_ps(va, vf16(x + i), load(y + i)));
  for (; i < n; ++i) y[i] = vm_fma(a, fp16_to_fp32(x[i]), y[i]);
}

// Up to 8 rows' accumulators for 8 dims stay in registers over all n value rows.
template <int NR>
VM_INLINE void pv_rows(const float* p, size_t ps, const uint16_t* v, size_t vs, uint32_t n, float* o, size_t os,
                       uint32_t d0) {
  V acc[NR];
  for (int r = 0; r < NR; ++r) acc[r] = load(o + r * os + d0);
  for (uint32_t c = 0; c < n; ++c) {
    const V vv = vf16(v + c * vs + d0);
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_fmadd_ps(set1(p[r * ps + c]), vv, acc[r]);
  }
  for (int r = 0; r < NR; ++r) store(o + r * os + d0, acc[r]);
}

void pv_f16(const vmath_pv& a) {
  const size_t ps = a.p_stride, vs = a.v_stride, os = a.o_stride;
  for (uint32_t r0 = 0; r0 < a.rows; r0 += 8) {
    const float* p = a.p + r0 * ps;
    float* o = a.o + r0 * os;
    const uint32_t nr = a.rows - r0 < 8 ? a.rows - r0 : 8;
    uint32_t d0 = 0;
    for (; d0 + 8 <= a.dv; d0 += 8) htp_by_count<8>(nr, [&]<int NR>() { pv_rows<NR>(p, ps, a.v, vs, a.n, o, os, d0); });
    for (uint32_t r = 0; r < nr; ++r)  // the last dv % 8 dims
      for (uint32_t c = 0; c < a.n; ++c)
        for (uint32_t d = d0; d < a.dv; ++d)
          o[r * os + d] = vm_fma(p[r * ps + c], fp16_to_fp32(a.v[c * vs + d]), o[r * os + d]);
  }
}

void clamp(const float* x, float* y, uint32_t n, float lo, float hi) {
  const V vlo = set1(lo), vhi = set1(hi);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_min_ps(vhi, _mm256_max_ps(vlo, load(x + i))));
  for (; i < n; ++i) y[i] = vm_min(hi, vm_max(lo, x[i]));
}

void sub_scale(const float* x, float* y, uint32_t n, float m, float s) {
  const V vm = set1(m), vs = set1(s);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_mul_ps(_mm256_sub_ps(load(x + i), vm), vs));
  for (; i < n; ++i) y[i] = (x[i] - m) * s;
}

void scale_mul(const float* x, const float* w, float* y, uint32_t n, float s) {
  const V vs = set1(s);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_mul_ps(_mm256_mul_ps(load(x + i), vs), load(w + i)));
  for (; i < n; ++i) y[i] = (x[i] * s) * w[i];
}

float sum_sq_dev(const float* x, uint32_t n, float m) {
  const V vm = set1(m);
  return reduce_sum(
      n,
      [&](V acc, uint32_t i) {
        const V d = _mm256_sub_ps(load(x + i), vm);
        return _mm256_fmadd_ps(d, d, acc);
      },
      [&](float s, uint32_t i) {
        const float d = x[i] - m;
        return vm_fma(d, d, s);
      });
}

void swiglu(const float* g, const float* u, float* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_mul_ps(vsilu(load(g + i)), load(u + i)));
  for (; i < n; ++i) y[i] = vm_silu(g[i]) * u[i];
}

void geglu(const float* g, const float* u, float* y, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, _mm256_mul_ps(vgelu(load(g + i)), load(u + i)));
  for (; i < n; ++i) y[i] = vm_gelu(g[i]) * u[i];
}

void swiglu_oai(const float* g, const float* u, float* y, uint32_t n, float alpha, float limit) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) store(y + i, vswiglu_oai(load(g + i), load(u + i), alpha, limit));
  for (; i < n; ++i) y[i] = vm_swiglu_oai(g[i], u[i], alpha, limit);
}

float scale_add_max(const float* x, const float* m, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  if (m == nullptr) {
    return reduce_max(
        n,
        [&](V acc, uint32_t i) {
          const V v = _mm256_mul_ps(va, load(x + i));
          store(y + i, v);
          return _mm256_max_ps(acc, v);
        },
        [&](float s, uint32_t i) {
          y[i] = a * x[i];
          return vm_max(s, y[i]);
        });
  }
  return reduce_max(
      n,
      [&](V acc, uint32_t i) {
        const V v = _mm256_fmadd_ps(vb, load(m + i), _mm256_mul_ps(va, load(x + i)));
        store(y + i, v);
        return _mm256_max_ps(acc, v);
      },
      [&](float s, uint32_t i) {
        y[i] = vm_fma(b, m[i], a * x[i]);
        return vm_max(s, y[i]);
      });
}

float scale_add_max_f16(const float* x, const uint16_t* m, float* y, uint32_t n, float a, float b) {
  const V va = set1(a), vb = set1(b);
  return reduce_max(
      n,
      [&](V acc, uint32_t i) {
        const V v = _mm256_fmadd_ps(vb, vf16(m + i), _mm256_mul_ps(va, load(x + i)));
        store(y + i, v);
        return _mm256_max_ps(acc, v);
      },
      [&](float s, uint32_t i) {
        y[i] = vm_fma(b, fp16_to_fp32(m[i]), a * x[i]);
        return vm_max(s, y[i]);
      });
}

const vmath_ops kAvx2 = {
    "avx2",
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

const vmath_ops* vmath_avx2() { return &kAvx2; }

}  // namespace hexllm::htp
