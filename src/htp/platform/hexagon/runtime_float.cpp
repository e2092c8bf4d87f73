// Floating-point helpers the compiler calls on Hexagon v67: IEEE double division (the core has
// no double divide or reciprocal step), correctly rounded to nearest-even like the hardware
// operations it stands in for, with subnormals, infinities and NaNs.
#include <stdint.h>

namespace {

constexpr uint64_t kSign = 1ull << 63;
constexpr uint64_t kFrac = (1ull << 52) - 1;
constexpr uint64_t kInf = 0x7ffull << 52;
constexpr uint64_t kQuietNaN = 0x7ff8ull << 48;

uint64_t bits(double v) {
  uint64_t u;
  __builtin_memcpy(&u, &v, sizeof u);
  return u;
}

double from_bits(uint64_t u) {
  double v;
  __builtin_memcpy(&v, &u, sizeof v);
  return v;
}

// A finite nonzero operand as a 53-bit significand with its unbiased-plus-1023 exponent
// (subnormals normalised, so the exponent may go below 1).
void unpack(uint64_t u, uint64_t* m, int32_t* e) {
  const int32_t ex = (int32_t)((u >> 52) & 0x7ff);
  uint64_t f = u & kFrac;
  if (ex != 0) {
    *m = f | (1ull << 52);
    *e = ex;
    return;
  }
  const int shift = __builtin_clzll(f) - 11;  // brings the top bit to bit 52
  *m = f << shift;
  *e = 1 - shift;
}

}  // namespace

extern "C" double __hexagon_divdf3(double a, double b) {
  const uint64_t ua = bits(a), ub = bits(b);
  const uint64_t sign = (ua ^ ub) & kSign;
  const uint64_t aa = ua & ~kSign, ab = ub & ~kSign;
  if (aa > kInf) return from_bits(ua | kQuietNaN);
  if (ab > kInf) return from_bits(ub | kQuietNaN);
  if (aa == kInf) return from_bits(ab == kInf ? kQuietNaN : sign | kInf);
  if (ab == kInf) return from_bits(sign);
  if (aa == 0) return from_bits(ab == 0 ? kQuietNaN : sign);
  if (ab == 0) return from_bits(sign | kInf);

  uint64_t ma, mb;
  int32_t ea, eb;
  unpack(aa, &ma, &ea);
  unpack(ab, &mb, &eb);
  int32_t e = ea - eb + 1023;
  if (ma < mb) {  // make the quotient's first bit 1
    ma <<= 1;
    e -= 1;
  }
  // 55 quotient bits (53 + guard + round); the remainder is the sticky bit.
  uint64_t q = 0, r = ma;
  for (int i = 0; i < 55; ++i) {
    q <<= 1;
    if (r >= mb) {
      r -= mb;
      q |= 1;
    }
    r <<= 1;
  }
  const bool sticky = r != 0;
  if (e >= 0x7ff) return from_bits(sign | kInf);

  int shift = 2;
  if (e <= 0) {  // subnormal result: fewer significand bits
    shift += 1 - e;
    e = 0;
  }
  if (shift > 60) return from_bits(sign);  // far below half the smallest subnormal
  uint64_t m = q >> shift;
  const uint64_t rest = q & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (sticky || (m & 1) != 0))) ++m;
  if (e == 0) return from_bits(sign | m);  // a carry into bit 52 is the smallest normal, as encoded
  if (m >> 53) {
    m >>= 1;
    ++e;
    if (e >= 0x7ff) return from_bits(sign | kInf);
  }
  return from_bits(sign | (uint64_t)e << 52 | (m & kFrac));
}
