// Division of a u32 by an invariant u32 divisor with one multiply-high, an add and a shift.
// The host computes the constants (htp_fastdiv_init) into kernel params; kernels divide with them.
//
// Granlund & Montgomery, "Division by Invariant Integers using Multiplication" (PLDI 1994), §4:
// with l = ceil(log2 d) and m = floor(2^32 * (2^l - d) / d) + 1 (which fits in 32 bits),
// n / d = (mulhi(m, n) + n) >> l for every 32-bit n. The sum is formed in 64 bits so it cannot
// overflow; that keeps the formula exact for all n and all d >= 1, 0xffffffff included.
#pragma once

#include <stdint.h>

struct htp_divisor {
  uint32_t mul;
  uint32_t shift;
  uint32_t div;  // the divisor itself, for htp_fastmod and for checking the constants
  uint32_t pad;
};
static_assert(sizeof(htp_divisor) == 16, "htp_divisor layout");

// d == 0 gives {0, 0, 0}: never valid for a divisor the kernel uses (see htp_fastdiv_valid).
constexpr htp_divisor htp_fastdiv_init(uint32_t d) {
  if (d == 0) return {0, 0, 0, 0};
  const uint32_t l = d == 1 ? 0 : 32 - (uint32_t)__builtin_clz(d - 1);
  const uint64_t m = ((((uint64_t)1 << l) - d) << 32) / d + 1;
  return {(uint32_t)m, l, d, 0};
}

inline uint32_t htp_fastdiv(uint32_t n, const htp_divisor& fd) {
  const uint64_t t = ((uint64_t)n * fd.mul) >> 32;
  return (uint32_t)((t + n) >> fd.shift);
}

inline uint32_t htp_fastmod(uint32_t n, const htp_divisor& fd) {
  return n - htp_fastdiv(n, fd) * fd.div;
}

// Device-side check of host-provided constants: wrong ones would make index math run out of
// bounds, so a kernel validates them once per op before its loops.
constexpr bool htp_fastdiv_valid(const htp_divisor& fd, uint32_t d) {
  const htp_divisor want = htp_fastdiv_init(d);
  return d != 0 && fd.div == d && fd.mul == want.mul && fd.shift == want.shift;
}
