// Float-weight GEMV/GEMM and the activation quantizers of the x86 paths; part of
// x86_kernels.h (same rules: included once per instruction-set source file).
#pragma once

#include <immintrin.h>

#include "htp/vec/vec.h"

namespace hexllm::htp {
namespace {

// ---- float weights: [32 k][8 r] per block ---------------------------------------------------

template <uint32_t T>
VEC_INLINE __m256 wload8(const uint8_t* tile, uint32_t i) {
  if constexpr (T == HTP_TILE_F32_X8) return _mm256_loadu_ps((const float*)tile + (size_t)i * R);
  if constexpr (T == HTP_TILE_F16_X8) return _mm256_cvtph_ps(load128(tile + (size_t)i * R * 2));
  if constexpr (T == HTP_TILE_BF16_X8)
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(tile + (size_t)i * R * 2)), 16));
}

template <uint32_t T>
void gemv_f(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  const uint32_t kp = htp_tile_padded_k(T, k);
  const size_t row_bytes = htp_tile_row_bytes(T, k);
  const float* x = (const float*)act;
  for (uint32_t t = 0; t * R < nrows; t++) {
    const uint8_t* tile = w + t * row_bytes;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (uint32_t i = 0; i < kp; i += 4) {
      constexpr uint32_t es = T == HTP_TILE_F32_X8 ? 4 : 2;  // 4 k = 64 (f16) or 128 (f32) bytes
      _mm_prefetch((const char*)tile + kPrefetch + i * R * es, _MM_HINT_T0);
      if constexpr (es == 4) _mm_prefetch((const char*)tile + kPrefetch + i * R * es + 64, _MM_HINT_T0);
      for (int j = 0; j < 4; j++)
        acc[j] = _mm256_fmadd_ps(wload8<T>(tile, i + j), _mm256_broadcast_ss(x + i + j), acc[j]);
    }
    store_rows(dst + t * R, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
               nrows - t * R);
  }
}

// Two row tiles (16 rows) x NC activation rows of accumulators.
template <uint32_t T, int NC>
void gemm_f_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride,
                 uint32_t k, uint32_t nrows) {
  const uint32_t kp = htp_tile_padded_k(T, k);
  const size_t row_bytes = htp_tile_row_bytes(T, k);
  const float* x[NC];
  for (int c = 0; c < NC; c++) x[c] = (const float*)(act + c * act_stride);
  uint32_t t = 0;
  for (; (t + 2) * R <= nrows; t += 2) {
    const uint8_t* t0 = w + t * row_bytes;
    const uint8_t* t1 = t0 + row_bytes;
    __m256 acc0[NC], acc1[NC];
    for (int c = 0; c < NC; c++) acc0[c] = acc1[c] = _mm256_setzero_ps();
    for (uint32_t i = 0; i < kp; i++) {
      const __m256 w0 = wload8<T>(t0, i), w1 = wload8<T>(t1, i);
      for (int c = 0; c < NC; c++) {
        const __m256 xv = _mm256_broadcast_ss(x[c] + i);
        acc0[c] = _mm256_fmadd_ps(w0, xv, acc0[c]);
        acc1[c] = _mm256_fmadd_ps(w1, xv, acc1[c]);
      }
    }
    for (int c = 0; c < NC; c++) {
      _mm256_storeu_ps(dst + c * dst_stride + t * R, acc0[c]);
      _mm256_storeu_ps(dst + c * dst_stride + t * R + R, acc1[c]);
    }
  }
  for (; t * R < nrows; t++) {
    const uint8_t* t0 = w + t * row_bytes;
    __m256 acc0[NC];
    for (int c = 0; c < NC; c++) acc0[c] = _mm256_setzero_ps();
    for (uint32_t i = 0; i < kp; i++) {
      const __m256 w0 = wload8<T>(t0, i);
      for (int c = 0; c < NC; c++) acc0[c] = _mm256_fmadd_ps(w0, _mm256_broadcast_ss(x[c] + i), acc0[c]);
    }
    for (int c = 0; c < NC; c++) store_rows(dst + c * dst_stride + t * R, acc0[c], nrows - t * R);
  }
}

template <uint32_t T>
void gemm_f(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
            size_t dst_stride, uint32_t k, uint32_t nrows) {
  uint32_t c = 0;
  for (; c + 4 <= nact; c += 4)
    gemm_f_cols<T, 4>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  switch (nact - c) {
    case 3:
      gemm_f_cols<T, 3>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    case 2:
      gemm_f_cols<T, 2>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    case 1:
      gemm_f_cols<T, 1>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    default:
      break;
  }
}

// ---- activation quantizers (bit-identical to the generic ones) ------------------------------

VEC_INLINE float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

VEC_INLINE int32_t hsum8i(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// Quantizes n (multiple of 32) floats with one scale; returns d; q gets the int8 codes and
// sums[i] the sum of codes i*16 .. i*16+15.
float quant_run(const float* x, uint32_t n, int8_t* q, int32_t* sums16) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 mx = _mm256_setzero_ps();
  for (uint32_t i = 0; i < n; i += 8) mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  const float d = hmax8(mx) / 127.0f;
  const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (uint32_t i = 0; i < n; i += 32) {
    // The activations stream from L3 or DRAM: prefetch 2 KiB ahead (halved the quantizer's time).
    _mm_prefetch((const char*)(x + i + 512), _MM_HINT_T0);
    _mm_prefetch((const char*)(x + i + 528), _MM_HINT_T0);
    __m256i v[4];
    for (int j = 0; j < 4; j++)
      v[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * j), id),
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    sums16[i / 16] = hsum8i(_mm256_add_epi32(v[0], v[1]));
    sums16[i / 16 + 1] = hsum8i(_mm256_add_epi32(v[2], v[3]));
    const __m256i w = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256((__m256i*)(q + i), _mm256_permutevar8x32_epi32(w, perm));
  }
  return d;
}

void quant_q8_32(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_32*)act;
  int32_t s[2];
  for (uint32_t i = 0; i < k / 32; i++, x += 32) {
    b[i].d = quant_run(x, 32, b[i].q, s);
    b[i].sum = s[0] + s[1];
  }
}

void quant_q8_256(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_256*)act;
  int32_t s[16];
  for (uint32_t i = 0; i < k / 256; i++, x += 256) {
    b[i].d = quant_run(x, 256, b[i].q, s);
    for (int j = 0; j < 16; j++) b[i].sum16[j] = (int16_t)s[j];
    for (int j = 0; j < 8; j++) b[i].sum32[j] = (int16_t)(s[2 * j] + s[2 * j + 1]);
    b[i].pad[0] = b[i].pad[1] = b[i].pad[2] = 0;
  }
}

void quant_f32(const float* x, uint8_t* act, uint32_t k) {
  auto* y = (float*)act;
  const uint32_t kp = (k + 31) / 32 * 32;
  uint32_t i = 0;
  for (; i + 8 <= k; i += 8) _mm256_storeu_ps(y + i, _mm256_loadu_ps(x + i));
  for (; i < kp; i++) y[i] = i < k ? x[i] : 0.0f;
}

}  // namespace
}  // namespace hexllm::htp
