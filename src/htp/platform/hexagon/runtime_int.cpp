// Integer division helpers the compiler calls on Hexagon (the ISA has no divide instruction):
// __hexagon_{u,}{div,mod}{si,di}3 with the standard calling convention. Restoring division,
// one quotient bit per step, starting at the divisor's first significant bit so small
// quotients take few steps. Division by zero is undefined in C++; it returns all ones here.
#include <stdint.h>

namespace {

// Quotient and remainder of n / d for d != 0.
template <typename U>
U udivmod(U n, U d, U* rem) {
  constexpr int kBits = (int)sizeof(U) * 8;
  if (d == 0) {
    *rem = n;
    return (U)~(U)0;
  }
  if (n < d) {
    *rem = n;
    return 0;
  }
  auto clz = [](U v) { return kBits == 64 ? __builtin_clzll((uint64_t)v) : __builtin_clz((uint32_t)v); };
  const int shift = clz(d) - clz(n);  // d << shift <= n < d << (shift + 1)
  U q = 0;
  U r = n;
  U dd = d << shift;
  for (int i = 0; i <= shift; ++i) {
    q <<= 1;
    if (r >= dd) {
      r -= dd;
      q |= 1;
    }
    dd >>= 1;
  }
  *rem = r;
  return q;
}

uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t* rem) {
  if ((n >> 32) == 0 && (d >> 32) == 0) {
    uint32_t r32;
    const uint32_t q = udivmod<uint32_t>((uint32_t)n, (uint32_t)d, &r32);
    *rem = r32;
    return q;
  }
  return udivmod<uint64_t>(n, d, rem);
}

template <typename U, typename S>
U magnitude(S v) {
  return v < 0 ? (U)0 - (U)v : (U)v;
}

}  // namespace

extern "C" {

uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d) {
  uint32_t r;
  return udivmod<uint32_t>(n, d, &r);
}

uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d) {
  uint32_t r;
  udivmod<uint32_t>(n, d, &r);
  return r;
}

int32_t __hexagon_divsi3(int32_t n, int32_t d) {
  uint32_t r;
  const uint32_t q = udivmod<uint32_t>(magnitude<uint32_t>(n), magnitude<uint32_t>(d), &r);
  return (int32_t)((n < 0) != (d < 0) ? 0u - q : q);
}

int32_t __hexagon_modsi3(int32_t n, int32_t d) {
  uint32_t r;
  udivmod<uint32_t>(magnitude<uint32_t>(n), magnitude<uint32_t>(d), &r);
  return (int32_t)(n < 0 ? 0u - r : r);
}

uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d) {
  uint64_t r;
  return udivmod64(n, d, &r);
}

uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d) {
  uint64_t r;
  udivmod64(n, d, &r);
  return r;
}

int64_t __hexagon_divdi3(int64_t n, int64_t d) {
  uint64_t r;
  const uint64_t q = udivmod64(magnitude<uint64_t>(n), magnitude<uint64_t>(d), &r);
  return (int64_t)((n < 0) != (d < 0) ? 0u - q : q);
}

int64_t __hexagon_moddi3(int64_t n, int64_t d) {
  uint64_t r;
  udivmod64(magnitude<uint64_t>(n), magnitude<uint64_t>(d), &r);
  return (int64_t)(n < 0 ? 0u - r : r);
}

}  // extern "C"
