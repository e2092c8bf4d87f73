// Freestanding stand-ins for the few libc/STL helpers device code needs.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {

#if defined(__hexagon__)
// No libc on the NPU: our own loops, kept from being turned back into memcpy/memset calls. With
// HVX, whole 128-byte vectors move by unaligned vector loads and stores (vmemu), so copies,
// gathers and the software DMA queue touch VTCM as vectors, not bytes.
#if defined(__HVX__)
typedef long htp_uvec __attribute__((__vector_size__(128), __aligned__(1)));
#endif

__attribute__((no_builtin("memcpy"))) inline void htp_memcpy(void* dst, const void* src, size_t n) {
  auto* d = (uint8_t*)dst;
  auto* s = (const uint8_t*)src;
#if defined(__HVX__)
  for (; n >= 128; n -= 128, d += 128, s += 128) *(htp_uvec*)d = *(const htp_uvec*)s;
#endif
  if ((((uintptr_t)d | (uintptr_t)s) & 3) == 0) {
    for (; n >= 4; n -= 4, d += 4, s += 4) *(uint32_t*)d = *(const uint32_t*)s;
  }
  for (; n > 0; --n) *d++ = *s++;
}

__attribute__((no_builtin("memset"))) inline void htp_memset(void* dst, int v, size_t n) {
  auto* d = (uint8_t*)dst;
#if defined(__HVX__)
  htp_uvec fill;
  for (int i = 0; i < 128; ++i) ((uint8_t*)&fill)[i] = (uint8_t)v;
  for (; n >= 128; n -= 128, d += 128) *(htp_uvec*)d = fill;
#endif
  for (; n > 0; --n) *d++ = (uint8_t)v;
}
#else
// On the host the C library's routines are the fast ones; the builtins lower to them.
inline void htp_memcpy(void* dst, const void* src, size_t n) { __builtin_memcpy(dst, src, n); }
inline void htp_memset(void* dst, int v, size_t n) { __builtin_memset(dst, v, n); }
#endif

template <typename T> constexpr T htp_min(T a, T b) { return a < b ? a : b; }
template <typename T> constexpr T htp_max(T a, T b) { return a < b ? b : a; }

// run.template operator()<N>() for N = n, 1 <= n <= Max: kernels that keep N rows of
// accumulators in registers take N as a template argument.
template <int Max, class Run>
inline __attribute__((always_inline)) void htp_by_count(uint32_t n, Run&& run) {
  if constexpr (Max > 0) {
    if (n == (uint32_t)Max) run.template operator()<Max>();
    else htp_by_count<Max - 1>(n, run);
  }
}

}  // namespace hexllm::htp
