// Scalar building blocks of vmath: one float at a time, freestanding.
//
// These ARE the definitions of the vmath functions: the generic table applies them element by
// element, and the SIMD tables perform exactly the same IEEE operations (fma, mul, add, div,
// sqrt, min/max, round-to-nearest-even) in the same order with the same constants, so every
// table gives the same bits (tests check this). Kernels use them for per-row scalars.
//
// Algorithms (coefficients from src/htp/vmath/fit_poly.py, a weighted Remez fit):
//   exp(x)  = 2^k e^r, k = rne(x / ln2), r = x - k ln2 (Cody-Waite: ln2 = hi + lo, k * hi exact),
//             e^r = 1 + r + r^2 q(r) (degree 4 minimax, rel. error 3e-9); 2^k is applied as two
//             factors 2^(k>>1) 2^(k-(k>>1)) so that overflow to inf and gradual underflow round once.
//   log(x)  = e ln2 + log1p(f), m = 1 + f in [sqrt(1/2), sqrt 2), s = f / (2 + f), z = s^2,
//             log1p(f) = 2s + s z l(z) = f - s (f - z l(z)) (degree 3 minimax, 5e-12).
//   tanh(x) = x + x^3 t(x^2) for |x| < 0.75 (degree 6, 8e-11), else sign(x) (1 - 2 / (e^2|x| + 1)).
//   sigmoid(x) = x_sigmoid(1, x), silu(x) = x_sigmoid(x, x), gelu(x) = x_sigmoid(x, 2u) with
//             u = sqrt(2/pi) (x + 0.044715 x^3) (0.5 x (1 + tanh u) without its cancellation),
//             gelu_quick(x) = x_sigmoid(x, 1.702 x); x_sigmoid(x, v) = x / (1 + e^-v), see below.
//   softplus = max(x, 0) + log1p(e^-|x|), log1p(t) = log(1 + t) + (t - ((1 + t) - 1)) / (1 + t).
// Special values follow the defining formula in IEEE arithmetic, as the reference backend does:
// exp(+inf) = inf, exp(-inf) = 0, tanh(+-inf) = +-1, sigmoid(-inf) = 0, silu(-inf) = -inf * 0 =
// nan (so is gelu(-inf)), softplus(-inf) = 0, nan in -> nan out.
#pragma once

#include <stdint.h>

namespace hexllm::htp {

inline uint32_t vm_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

inline float vm_float(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// One rounding, like the SIMD fma. (x86 without FMA hardware: the C library's fmaf.)
inline float vm_fma(float a, float b, float c) {
#if defined(__hexagon__)
  return __builtin_HEXAGON_F2_sffma(c, a, b);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

// Same results as the SIMD max_ps/min_ps(a, b): b when either is nan. With a = the bound and
// b = x, nan inputs pass through a clamp.
inline float vm_max(float a, float b) { return a > b ? a : b; }
inline float vm_min(float a, float b) { return a < b ? a : b; }

// Round to nearest even for |x| < 2^22 (adding 1.5 * 2^23 rounds at the units place; this
// project never builds with -ffast-math, so the compiler keeps the two operations).
inline float vm_rne(float x) {
  const float big = 12582912.0f;
  return (x + big) - big;
}

// ---- constants shared with the SIMD implementations ----
inline constexpr float kVmLog2e = 0x1.715476p+0f;
inline constexpr float kVmLn2Hi = 0x1.62e4p-1f;  // 15 significant bits: k * hi is exact for |k| <= 512
inline constexpr float kVmLn2Lo = 0x1.7f7d1cp-20f;
inline constexpr float kVmExpLo = -104.0f;  // e^-104 < 2^-150 / 2: rounds to 0
inline constexpr float kVmExpHi = 89.0f;    // e^89 > FLT_MAX: rounds to inf
inline constexpr float kVmExpQ[5] = {0x1.fffffcp-2f, 0x1.555492p-3f, 0x1.5558f2p-5f, 0x1.1239d4p-7f,
                                     0x1.6a244cp-10f};  // q(r) = sum kVmExpQ[j] r^j
inline constexpr float kVmTanhSmall = 0.75f;
inline constexpr float kVmTanhT[7] = {-0x1.555554p-2f, 0x1.1110c6p-3f, -0x1.ba0972p-5f, 0x1.653e26p-6f,
                                      -0x1.19b228p-7f, 0x1.853fap-9f,  -0x1.4bc732p-11f};
inline constexpr float kVmLogL[4] = {0x1.555554p-1f, 0x1.999a7ap-2f, 0x1.2438d8p-2f, 0x1.e2f662p-3f};
inline constexpr float kVmSqrt2 = 0x1.6a09e6p+0f;
inline constexpr float kVmGeluK1 = 0x1.988454p+0f;     // 2 sqrt(2/pi)
inline constexpr float kVmGeluK2 = 0x1.2444f2p-4f;     // 2 sqrt(2/pi) 0.044715
inline constexpr float kVmGeluQuick = 0x1.b3b646p+0f;  // 1.702

// e^x. Relative error <= 2 ulp for normal results (measured: tests/htp/vmath).
inline float vm_exp(float x) {
  if (x != x) return x + x;
  x = vm_min(kVmExpHi, vm_max(kVmExpLo, x));
  const float k = vm_rne(x * kVmLog2e);
  float r = vm_fma(k, -kVmLn2Hi, x);
  r = vm_fma(k, -kVmLn2Lo, r);
  float q = vm_fma(kVmExpQ[4], r, kVmExpQ[3]);
  q = vm_fma(q, r, kVmExpQ[2]);
  q = vm_fma(q, r, kVmExpQ[1]);
  q = vm_fma(q, r, kVmExpQ[0]);
  float p = vm_fma(q, r, 1.0f);
  p = vm_fma(p, r, 1.0f);
  const int32_t ki = (int32_t)k;  // in [-150, 129]
  const int32_t k1 = ki >> 1, k2 = ki - k1;
  return p * vm_float((uint32_t)(k1 + 127) << 23) * vm_float((uint32_t)(k2 + 127) << 23);
}

// Natural log. log(0) = -inf, log(x < 0) = nan, log(inf) = inf.
inline float vm_log(float x) {
  if (x != x) return x + x;
  if (x <= 0.0f) return x == 0.0f ? -__builtin_inff() : __builtin_nanf("");
  if (x == __builtin_inff()) return x;
  int32_t e = 0;
  if (x < 0x1p-126f) {  // subnormal: normalize
    x *= 0x1p23f;
    e = -23;
  }
  uint32_t b = vm_bits(x);
  e += (int32_t)(b >> 23) - 127;
  b = (b & 0x7fffffu) | 0x3f800000u;  // m in [1, 2)
  float m = vm_float(b);
  if (m > kVmSqrt2) {
    m *= 0.5f;
    e += 1;
  }
  const float f = m - 1.0f;
  const float s = f / (f + 2.0f);
  const float z = s * s;
  float l = vm_fma(kVmLogL[3], z, kVmLogL[2]);
  l = vm_fma(l, z, kVmLogL[1]);
  l = vm_fma(l, z, kVmLogL[0]);
  const float lp = f - s * vm_fma(-z, l, f);  // log1p(f)
  const float ef = (float)e;
  return vm_fma(ef, kVmLn2Hi, vm_fma(ef, kVmLn2Lo, lp));
}

// log(1 + t) for t >= 0 (softplus); the correction term restores the bits 1 + t drops.
inline float vm_log1p_pos(float t) {
  const float u = 1.0f + t;
  return vm_log(u) + (t - (u - 1.0f)) / u;
}

inline float vm_tanh(float x) {
  const float a = vm_bits(x) & 0x80000000u ? -x : x;
  float y;
  if (a < kVmTanhSmall) {
    const float z = x * x;
    float t = vm_fma(kVmTanhT[6], z, kVmTanhT[5]);
    for (int j = 4; j >= 0; --j) t = vm_fma(t, z, kVmTanhT[j]);
    y = vm_fma(x * z, t, x);
  } else {
    const float e = vm_exp(a + a);
    y = 1.0f - 2.0f / (e + 1.0f);
  }
  return vm_float(vm_bits(y) | (vm_bits(x) & 0x80000000u));  // x's sign (also tanh(-0) = -0)
}

// x sigmoid(v) = x n / (1 + e) with e = e^-|v| and n = 1 (v >= 0) or e (v < 0): e never
// overflows, so results deep in the negative tail come out right down to the subnormals
// instead of flushing to 0 once e^-v overflows.
inline float vm_x_sigmoid(float x, float v) {
  const float a = vm_bits(v) & 0x80000000u ? -v : v;
  const float e = vm_exp(-a);
  const float n = v < 0.0f ? e : 1.0f;
  return (x * n) / (1.0f + e);
}

inline float vm_sigmoid(float x) { return vm_x_sigmoid(1.0f, x); }
inline float vm_silu(float x) { return vm_x_sigmoid(x, x); }

inline float vm_gelu(float x) {
  const float v = x * vm_fma(kVmGeluK2, x * x, kVmGeluK1);  // 2u
  return vm_x_sigmoid(x, v);
}

inline float vm_gelu_quick(float x) { return vm_x_sigmoid(x, x * kVmGeluQuick); }

inline float vm_softplus(float x) {
  const float a = vm_bits(x) & 0x80000000u ? -x : x;
  return vm_max(0.0f, x) + vm_log1p_pos(vm_exp(-a));
}

// Square root without a hardware instruction (Hexagon): a reciprocal square root estimate
// refined by Newton steps, then one fma-residual correction of the root. <= 1 ulp.
inline float vm_sqrt_soft(float x) {
  if (x != x) return x + x;
  if (x < 0.0f) return __builtin_nanf("");
  if (x == 0.0f || x == __builtin_inff()) return x;  // +-0, inf
  float scale = 1.0f;
  if (x < 0x1p-100f) {  // keep r * r and x * r away from under/overflow
    x *= 0x1p100f;
    scale = 0x1p-50f;
  }
  float r = vm_float(0x5f3759dfu - (vm_bits(x) >> 1));  // ~3.4% relative
  const float hx = 0.5f * x;
  for (int i = 0; i < 3; ++i) r = r * vm_fma(-hx * r, r, 1.5f);
  const float y = x * r;
  const float d = vm_fma(-y, y, x);  // exact residual
  return vm_fma(0.5f * r, d, y) * scale;
}

inline float vm_sqrt(float x) {
#if defined(__hexagon__)
  return vm_sqrt_soft(x);
#else
  return __builtin_sqrtf(x);  // correctly rounded, the same as the SIMD sqrt
#endif
}

// gpt-oss gate: x = min(g, limit), y = clamp(u, -limit, limit), x sigmoid(alpha x) (y + 1).
inline float vm_swiglu_oai(float g, float u, float alpha, float limit) {
  const float x = vm_min(limit, g);
  const float y = vm_min(limit, vm_max(-limit, u));
  return vm_x_sigmoid(x, alpha * x) * (y + 1.0f);
}

}  // namespace hexllm::htp
