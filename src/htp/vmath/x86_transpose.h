// The float transpose of the x86 tables (x86_avx2.cpp and x86_avx512.cpp include it; both are
// compiled for at least AVX2). Internal linkage: each table keeps the copy built with its flags.
#pragma once
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {
namespace {

// One 8 x 8 block, y[c * ys + r] = x[r * xs + c]: rows interleave in pairs, then pairs of pairs
// within each 128-bit half, then the halves swap.
inline __attribute__((always_inline)) void transpose8x8(const float* x, size_t xs, float* y, size_t ys) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(x + i * xs);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);      // a0 b0 c0 d0 | a4 b4 c4 d4
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);  // a1 b1 c1 d1 | a5 b5 c5 d5
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(y + i * ys, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(y + (i + 4) * ys, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// Whole 8 x 8 blocks in registers, the edges element by element.
inline void transpose_f32(const float* x, size_t xs, float* y, size_t ys, uint32_t rows, uint32_t cols) {
  const uint32_t r8 = rows & ~7u, c8 = cols & ~7u;
  for (uint32_t r = 0; r < r8; r += 8)
    for (uint32_t c = 0; c < c8; c += 8) transpose8x8(x + r * xs + c, xs, y + c * ys + r, ys);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = r < r8 ? c8 : 0; c < cols; ++c) y[c * ys + r] = x[r * xs + c];
}

}  // namespace
}  // namespace hexllm::htp
