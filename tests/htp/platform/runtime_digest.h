// A digest of many results of the operations the Hexagon build hands to platform/hexagon's
// runtime helpers (integer division and remainder of every width and sign, double division)
// and memory functions (memcpy, memmove with overlaps, memset, memcmp), over edge cases and
// pseudo-random operands. Compiled natively it uses the x86 instructions and libc; compiled for
// Hexagon, our helpers. Equal digests mean bit-identical results. Freestanding: no includes
// beyond the fixed-width integer types.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {
void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int v, size_t n);
int memcmp(const void* a, const void* b, size_t n);
}

namespace hexllm::test {

struct Digest {
  uint64_t h = 1469598103934665603ull;
  uint64_t n = 0;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    ++n;
  }
};

inline uint64_t rnd(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

inline uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  // Every NaN is one NaN here: x86 and Hexagon may differ in the payload they produce.
  if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0xfffffffffffffull) != 0)
    return 0x7ff8000000000000ull;
  return u;
}

inline double from_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

// Operands with random sign, exponent (subnormals and near-overflow included) and significand.
inline double random_double(uint64_t& s) {
  const uint64_t r = rnd(s);
  const uint64_t kind = r & 15;
  uint64_t bits = rnd(s);
  if (kind == 0) bits &= 0x800fffffffffffffull;                                             // subnormal
  else if (kind == 1) bits = (bits & 0x800fffffffffffffull) | 0x7fe0000000000000ull;           // huge
  else if (kind == 2) bits = (bits & 0x800fffffffffffffull) | (uint64_t)(r >> 54 & 0x3f) << 52;  // tiny
  else if (kind == 3) bits &= 0xfff0000000000000ull;                                         // power of 2
  else if (kind < 8) bits = (bits & 0x800fffffffffffffull) | (uint64_t)(1023 - 8 + (r >> 8 & 15)) << 52;
  return from_bits(bits);
}

inline Digest runtime_digest() {
  Digest d;
  uint64_t s = 0x9e3779b97f4a7c15ull;
  // Integer division: signed and unsigned, 32 and 64 bits, small and wide operands.
  for (int i = 0; i < 20000; ++i) {
    const uint64_t a = rnd(s), b = rnd(s) >> (rnd(s) & 63);
    const uint32_t a32 = (uint32_t)a >> (a >> 59), b32 = (uint32_t)b >> (b >> 60);
    if (b != 0) {
      d.add(a / b);
      d.add(a % b);
      const int64_t sa = (int64_t)a >> (i & 31), sb = (int64_t)b | (i & 1 ? (int64_t)1 << 63 : 0);
      if (!(sa == INT64_MIN && sb == -1)) {
        d.add((uint64_t)(sa / sb));
        d.add((uint64_t)(sa % sb));
      }
      d.add((uint64_t)(a >> 32) / (b | 1));
    }
    if (b32 != 0) {
      d.add(a32 / b32);
      d.add(a32 % b32);
      const int32_t sa = (int32_t)a32, sb = (int32_t)b32;
      if (!(sa == INT32_MIN && sb == -1)) {
        d.add((uint64_t)(int64_t)(sa / sb));
        d.add((uint64_t)(int64_t)(sa % sb));
      }
    }
  }
  // Double division, with the special operands.
  const double specials[] = {0.0, -0.0, 1.0, -1.0, 3.0, 1e-310, -4.9e-324, 1.7976931348623157e308,
                             from_bits(0x7ff0000000000000ull), from_bits(0xfff0000000000000ull),
                             from_bits(0x7ff8000000000000ull), 2.2250738585072014e-308};
  for (double x : specials)
    for (double y : specials) d.add(double_bits(x / y));
  for (int i = 0; i < 50000; ++i) {
    const double x = random_double(s), y = random_double(s);
    d.add(double_bits(x / y));
  }
  // Memory functions over offsets, lengths and overlaps.
  static unsigned char buf[1024], ref[1024];
  for (int i = 0; i < 1024; ++i) buf[i] = (unsigned char)rnd(s);
  for (int i = 0; i < 3000; ++i) {
    const size_t n = rnd(s) % 300, from = rnd(s) % 400, to = rnd(s) % 400;
    switch (i % 4) {
      case 0: memcpy(ref + to, buf + from, n); break;
      case 1: memmove(buf + to, buf + from, n); break;
      case 2: memset(buf + to, (int)(rnd(s) & 0xff), n); break;
      default: {
        const int c = memcmp(buf + to, ref + from, n);
        d.add(c < 0 ? 1 : c > 0 ? 2 : 0);
      }
    }
    uint64_t h = 0;
    for (int k = 0; k < 1024; ++k) h = h * 31 + buf[k] + ref[k] * 7;
    d.add(h);
  }
  return d;
}

}  // namespace hexllm::test
