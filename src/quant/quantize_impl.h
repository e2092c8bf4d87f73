// Internal to hexllm_quant: per-type block quantizers and the rounding helpers they share.
#pragma once

#include <stdint.h>

#include "quant/blocks.h"

namespace hexllm::quant::detail {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves the rounded integer in
// the low mantissa bits. NaN gives an arbitrary value; callers clamp the result.
inline int round_even(float v) {
  const float t = v + 12582912.0f;
  uint32_t bits;
  __builtin_memcpy(&bits, &t, 4);
  return (int)(bits & 0x007fffffu) - 0x00400000;
}

// round_even clamped to [lo, hi]; out-of-range (and NaN) inputs are clamped before rounding so the
// magic-number trick stays valid.
inline int round_clamp(float v, int lo, int hi) {
  if (!(v >= (float)lo)) return lo;  // also NaN
  if (v > (float)hi) return hi;
  const int r = round_even(v);
  return r < lo ? lo : (r > hi ? hi : r);
}

// C's (int) truncation towards zero, for v expected in [lo, hi]; NaN gives lo.
inline int trunc_clamp(float v, int lo, int hi) {
  if (!(v >= (float)lo)) return lo;
  if (v >= (float)hi) return hi;
  return (int)v;
}

void quantize_q4_0(const float* x, block_q4_0* y, int64_t nb);
void quantize_q4_1(const float* x, block_q4_1* y, int64_t nb);
void quantize_q5_0(const float* x, block_q5_0* y, int64_t nb);
void quantize_q5_1(const float* x, block_q5_1* y, int64_t nb);
void quantize_q8_0(const float* x, block_q8_0* y, int64_t nb);
void quantize_q8_1(const float* x, block_q8_1* y, int64_t nb);
void quantize_q8_k(const float* x, block_q8_K* y, int64_t nb);
void quantize_q4_k(const float* x, block_q4_K* y, int64_t nb);
void quantize_q6_k(const float* x, block_q6_K* y, int64_t nb);
void quantize_iq4_nl(const float* x, block_iq4_nl* y, int64_t nb);
void quantize_mxfp4(const float* x, block_mxfp4* y, int64_t nb);

}  // namespace hexllm::quant::detail
