// IEEE half and bfloat16 conversions. Freestanding (no libc): the device runtime uses it too.
#pragma once

#include <stdint.h>

namespace hexllm {

inline uint32_t fp32_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

inline float fp32_from_bits(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// Exact: every half is representable as a float.
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return fp32_from_bits(sign | 0x7f800000u | (mant << 13));  // inf / nan
  if (exp != 0) return fp32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return fp32_from_bits(sign);
  // Subnormal half: value = mant * 2^-24.
  const float v = (float)mant * fp32_from_bits(0x33800000u);
  return sign ? -v : v;
}

// Round to nearest, ties to even; overflow gives inf; nan stays nan.
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = fp32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {
    // Result is subnormal (or zero): value / 2^-24 rounded to nearest even.
    if (ax < 0x33000000u) return (uint16_t)sign;  // below half of the smallest subnormal
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // e in [102, 112]: shift in [14, 24]
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}

inline float bf16_to_fp32(uint16_t h) { return fp32_from_bits((uint32_t)h << 16); }

// Round to nearest even; nan is kept quiet.
inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = fp32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace hexllm
