// Quantizers: bytes of hand-worked examples of ggml's documented reference algorithms, and
// round trips (quantize, then dequantize) against error bounds derived from each format.
#include "quant/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/types.h"

namespace hexllm::quant {
namespace {

using Bytes = std::vector<uint8_t>;

// A block's expected bytes: `head` followed by `fill` up to `size` (built in one piece: GCC 12
// reports a false -Warray-bounds for growing a short braced vector with resize()).
Bytes block_bytes(std::initializer_list<uint8_t> head, size_t size, uint8_t fill) {
  Bytes b(size, fill);
  std::copy(head.begin(), head.end(), b.begin());
  return b;
}

const Type kQuantizable[] = {Type::F32,  Type::F16,  Type::BF16,   Type::Q4_0, Type::Q4_1,
                             Type::Q5_0, Type::Q5_1, Type::Q8_0,   Type::Q8_1, Type::Q8_K,
                             Type::Q4_K, Type::Q6_K, Type::IQ4_NL, Type::MXFP4};

Bytes quantize(Type t, const std::vector<float>& x) {
  Bytes b(row_size(t, (int64_t)x.size()), 0xCD);
  quantize_row(t, x.data(), b.data(), (int64_t)x.size());
  return b;
}

std::vector<float> dequantize(Type t, const Bytes& b, size_t n) {
  std::vector<float> y(n);
  dequantize_row(t, b.data(), y.data(), (int64_t)n);
  return y;
}

std::vector<float> round_trip(Type t, const std::vector<float>& x) {
  return dequantize(t, quantize(t, x), x.size());
}

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return std::sqrt(s / (double)a.size());
}

uint16_t load16(const Bytes& b, size_t off) { return (uint16_t)(b[off] | (b[off + 1] << 8)); }

float h2f(uint16_t h) { return fp16_to_fp32(h); }

// The element of largest magnitude with its sign (first one on ties), as the algorithms define it.
float signed_absmax(const float* x, int n) {
  float best = 0;
  for (int j = 0; j < n; j++)
    if (std::fabs(x[j]) > std::fabs(best)) best = x[j];
  return best;
}

// ---------------------------------------------------------------------------------------------
// Hand-worked examples of the reference algorithms (ggml's quantize_row_*_ref).

TEST(QuantizeHand, Q4_0) {
  // d = m / -8 with m the value of largest magnitude (-4) -> d = 0.5 (F16 0x3800), 1/d = 2;
  // q = min(15, trunc(x * 2 + 8.5)).
  std::vector<float> x(32, 0.0f);  // 0 -> trunc(8.5) = 8
  x[0] = -4.0f;                    // -8 + 8.5 = 0.5 -> 0
  x[1] = 1.3f;                     // 2.6 + 8.5 = 11.1 -> 11
  x[2] = 0.25f;                    // 0.5 + 8.5 = 9 -> 9 (halves round up)
  x[3] = -0.25f;                   // -0.5 + 8.5 = 8 -> 8
  x[4] = 3.9f;                     // 7.8 + 8.5 = 16.3 -> 16 -> clamped to 15
  x[5] = -3.76f;                   // -7.52 + 8.5 = 0.98 -> 0
  x[16] = 2.0f;                    // 4 + 8.5 = 12.5 -> 12
  x[17] = -1.75f;                  // -3.5 + 8.5 = 5 -> 5
  Bytes want = block_bytes({0x00, 0x38, 0xC0, 0x5B, 0x89, 0x88, 0x8F, 0x80}, 18, 0x88);
  EXPECT_EQ(want, quantize(Type::Q4_0, x));
}

TEST(QuantizeHand, Q4_1) {
  // min = -1, max = 2: d = 3 / 15 = 0.2 (F16 0x3266), m = -1 (0xBC00), 1/d = 5;
  // q = min(15, trunc((x + 1) * 5 + 0.5)).
  std::vector<float> x(32, 0.0f);  // 5 + 0.5 -> 5
  x[0] = -1.0f;                    // 0.5 -> 0
  x[1] = 2.0f;                     // 15.5 -> 15
  x[2] = 0.5f;                     // 7.5 + 0.5 = 8 -> 8
  x[3] = 0.13f;                    // 5.65 + 0.5 = 6.15 -> 6
  x[16] = 1.0f;                    // 10.5 -> 10
  Bytes want = block_bytes({0x66, 0x32, 0x00, 0xBC, 0xA0, 0x5F, 0x58, 0x56}, 20, 0x55);
  EXPECT_EQ(want, quantize(Type::Q4_1, x));
}

TEST(QuantizeHand, Q5_0) {
  // m = 8 -> d = 8 / -16 = -0.5 (0xB800), 1/d = -2; q = min(31, trunc(x * -2 + 16.5)).
  std::vector<float> x(32, 0.0f);  // 16.5 -> 16 (high bit set, nibble 0)
  x[0] = 8.0f;                     // 0.5 -> 0
  x[1] = -7.9f;                    // 32.3 -> 31
  x[2] = 1.0f;                     // 14.5 -> 14
  x[3] = -0.25f;                   // 17 -> 17
  x[20] = 3.0f;                    // 10.5 -> 10
  // qh: bit j set where q[j] >= 16: all but elements 0, 2 and 20 -> 0xFFEFFFFA.
  // qs[j] = (q[j] & 15) | (q[j + 16] & 15) << 4: qs[1] = 15, qs[2] = 14, qs[3] = 1, qs[4] = 10 << 4.
  Bytes want = block_bytes({0x00, 0xB8, 0xFA, 0xFF, 0xEF, 0xFF, 0x00, 0x0F, 0x0E, 0x01, 0xA0}, 22, 0x00);
  EXPECT_EQ(want, quantize(Type::Q5_0, x));
}

TEST(QuantizeHand, Q5_1) {
  // min = -1, max = 2.875: d = 3.875 / 31 = 0.125 (0x3000), m = -1 (0xBC00), 1/d = 8;
  // q = trunc((x + 1) * 8 + 0.5).
  std::vector<float> x(32, 0.0f);  // 8.5 -> 8
  x[0] = -1.0f;                    // 0
  x[1] = 2.875f;                   // 31
  x[2] = 0.3f;                     // 10.4 + 0.5 -> 10
  x[3] = 0.5625f;                  // 12.5 + 0.5 = 13 -> 13
  x[17] = 1.5f;                    // 20.5 -> 20 (high bit)
  // qh: elements 1 and 17 -> 0x00020002.
  Bytes want = block_bytes({0x00, 0x30, 0x00, 0xBC, 0x02, 0x00, 0x02, 0x00, 0x80, 0x4F, 0x8A, 0x8D}, 24, 0x88);
  EXPECT_EQ(want, quantize(Type::Q5_1, x));
}

TEST(QuantizeHand, Q8_0AndQ8_1) {
  // max |x| = 127 -> d = 1 (0x3C00); q = roundf(x), halves away from zero.
  std::vector<float> x(32, 0.0f);
  x[0] = 2.5f;     // 3
  x[1] = -2.5f;    // -3
  x[2] = 0.5f;     // 1
  x[3] = -0.5f;    // -1
  x[4] = 1.4999f;  // 1
  x[5] = 127.0f;   // 127
  x[6] = -126.5f;  // -127
  x[31] = 7.0f;    // 7
  Bytes want(34, 0x00);
  want[0] = 0x00;
  want[1] = 0x3C;
  const int8_t q[8] = {3, -3, 1, -1, 1, 127, -127, 0};
  for (int j = 0; j < 8; j++) want[2 + j] = (uint8_t)q[j];
  want[2 + 31] = 7;
  EXPECT_EQ(want, quantize(Type::Q8_0, x));

  // Q8_1: the same quants after d and s = fp16(d * sum q) = fp16(3 - 3 + 1 - 1 + 1 + 127 - 127 + 7 = 8)
  // = 0x4800.
  Bytes want1(36);
  want1[0] = 0x00;
  want1[1] = 0x3C;
  want1[2] = 0x00;
  want1[3] = 0x48;
  std::memcpy(want1.data() + 4, want.data() + 2, 32);
  EXPECT_EQ(want1, quantize(Type::Q8_1, x));
}

TEST(QuantizeHand, Q8_K) {
  // m = -127 -> iscale = -127 / m = 1, d = 1 / iscale = 1; q = round half to even (ggml's
  // nearest_int), capped at 127.
  std::vector<float> x(256, 0.0f);
  x[0] = 2.5f;     // 2
  x[1] = 3.5f;     // 4
  x[2] = -2.5f;    // -2
  x[3] = 0.5f;     // 0
  x[4] = 1.5f;     // 2
  x[5] = -127.0f;  // -127
  x[20] = 126.5f;  // 126
  x[255] = -9.0f;  // -9
  const Bytes b = quantize(Type::Q8_K, x);
  block_q8_K blk;
  std::memcpy(&blk, b.data(), sizeof(blk));
  EXPECT_EQ(1.0f, blk.d);
  const int8_t want[6] = {2, 4, -2, 0, 2, -127};
  for (int j = 0; j < 6; j++) EXPECT_EQ(want[j], blk.qs[j]) << j;
  EXPECT_EQ(126, blk.qs[20]);
  EXPECT_EQ(-9, blk.qs[255]);
  // bsums: group 0 = 2 + 4 - 2 + 0 + 2 - 127 = -121; group 1 = 126; group 15 = -9; others 0.
  EXPECT_EQ(-121, blk.bsums[0]);
  EXPECT_EQ(126, blk.bsums[1]);
  EXPECT_EQ(-9, blk.bsums[15]);
  for (int g = 2; g < 15; g++) EXPECT_EQ(0, blk.bsums[g]) << g;

  // Positive m = 63.5 -> iscale = -2, d = -0.5: the signs flip.
  std::vector<float> x2(256, 0.0f);
  x2[0] = 63.5f;   // -127
  x2[1] = 1.25f;   // -2.5 -> -2
  x2[2] = -1.75f;  // 3.5 -> 4
  std::memcpy(&blk, quantize(Type::Q8_K, x2).data(), sizeof(blk));
  EXPECT_EQ(-0.5f, blk.d);
  EXPECT_EQ(-127, blk.qs[0]);
  EXPECT_EQ(-2, blk.qs[1]);
  EXPECT_EQ(4, blk.qs[2]);
  EXPECT_EQ(-125, blk.bsums[0]);
}

// ---------------------------------------------------------------------------------------------
// F16 / BF16: round to nearest, ties to even.

TEST(QuantizeFloat, F16TiesToEven) {
  const float one = 1.0f;
  const float ulp = std::ldexp(1.0f, -10);  // F16 spacing in [1, 2)
  const std::vector<float> x = {
      one + ulp / 2,                                  // tie between 0x3C00 (even) and 0x3C01 -> 0x3C00
      one + 3 * ulp / 2,                              // tie between 0x3C01 and 0x3C02 (even) -> 0x3C02
      one + ulp / 2 + std::ldexp(1.0f, -20),          // just above the tie -> 0x3C01
      -(one + ulp / 2),                               // -> 0xBC00
      65504.0f,                                       // largest finite: 0x7BFF
      65519.0f,                                       // below the tie with 65536 -> 0x7BFF
      65520.0f,                                       // tie: rounds to "65536" (even) = inf 0x7C00
      std::ldexp(1.0f, -25),                          // half the smallest subnormal: tie -> 0 (even)
      3 * std::ldexp(1.0f, -25),                      // 1.5 subnormal units: tie -> 2 units = 0x0002
      -std::ldexp(1.0f, -24),                         // -smallest subnormal: 0x8001
      std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25),  // 1023.5 units: tie -> 1024 units = 0x0400
  };
  const uint16_t want[] = {0x3C00, 0x3C02, 0x3C01, 0xBC00, 0x7BFF, 0x7BFF,
                           0x7C00, 0x0000, 0x0002, 0x8001, 0x0400};
  const Bytes b = quantize(Type::F16, x);
  for (size_t i = 0; i < x.size(); i++) EXPECT_EQ(want[i], load16(b, 2 * i)) << "element " << i;
  const Bytes nan = quantize(Type::F16, {std::numeric_limits<float>::quiet_NaN()});
  EXPECT_TRUE(std::isnan(h2f(load16(nan, 0))));
}

TEST(QuantizeFloat, BF16TiesToEven) {
  const float ulp = std::ldexp(1.0f, -7);  // BF16 spacing in [1, 2)
  const std::vector<float> x = {
      1.0f + ulp / 2,                          // tie -> 0x3F80 (even)
      1.0f + 3 * ulp / 2,                      // tie -> 0x3F82 (even)
      1.0f + ulp / 2 + std::ldexp(1.0f, -20),  // above the tie -> 0x3F81
      -3.0f,                                   // exact: 0xC040
      3.0e38f,                                 // 0x7F61B1E6: low half 0xB1E6 > 0x8000 -> 0x7F62
  };
  const uint16_t want[] = {0x3F80, 0x3F82, 0x3F81, 0xC040, 0x7F62};
  const Bytes b = quantize(Type::BF16, x);
  for (size_t i = 0; i < x.size(); i++) EXPECT_EQ(want[i], load16(b, 2 * i)) << "element " << i;
  const Bytes nan = quantize(Type::BF16, {std::numeric_limits<float>::quiet_NaN()});
  EXPECT_TRUE(std::isnan(bf16_to_fp32(load16(nan, 0))));
}

TEST(QuantizeFloat, F32IsACopy) {
  const std::vector<float> x = gaussian(100, 1);
  EXPECT_EQ(x, round_trip(Type::F32, x));
}

// ---------------------------------------------------------------------------------------------
// Round trips of random data against per-element bounds of the simple formats. The block scale
// is stored as F16 while the quants were computed with the exact float scale; the bounds carry
// that rounding explicitly: |x - dh q| <= |x - d q| + |d - dh| |q|.

constexpr uint32_t kSeed = 20240605;
constexpr float kSlack = 1e-6f;  // relative float rounding in x * (1/d)

// Symmetric formats: Q4_0 (nq = 8, levels -8..7), Q5_0 (16, -16..15), Q8_0 (127, symmetric).
struct SymmetricCase {
  Type type;
  int nq;
};

TEST(QuantizeRoundTrip, SymmetricBlockFormats) {
  for (const SymmetricCase c :
       {SymmetricCase{Type::Q4_0, 8}, SymmetricCase{Type::Q5_0, 16}, SymmetricCase{Type::Q8_0, 127}}) {
    const std::vector<float> x = gaussian(32 * 512, kSeed, 0.7f);
    const Bytes b = quantize(c.type, x);
    const std::vector<float> y = dequantize(c.type, b, x.size());
    const size_t bsize = type_size(c.type);
    for (size_t blk = 0; blk < x.size() / 32; blk++) {
      const float* xb = x.data() + 32 * blk;
      const float m = signed_absmax(xb, 32);
      // Q8_0: d = |m| / 127; Q4_0/Q5_0: d = m / -nq (the extreme maps to the -nq end).
      const float d = c.type == Type::Q8_0 ? std::fabs(m) / 127.0f : m / (float)-c.nq;
      const uint16_t dh_bits = load16(b, blk * bsize);
      ASSERT_EQ(fp32_to_fp16(d), dh_bits) << type_name(c.type) << " block " << blk;
      const float dh = h2f(dh_bits);
      for (int j = 0; j < 32; j++) {
        const float t = xb[j] / d;  // position on the quant grid, in [-nq, nq]
        const float q_max = c.type == Type::Q8_0 ? 127.0f : (float)(c.nq - 1);
        // Inside the grid the error is at most half a step; the top end (t in (nq - 1/2, nq])
        // clamps to nq - 1, at most one step away.
        const float steps = t <= q_max + 0.5f ? 0.5f : 1.0f;
        const float bound =
            steps * std::fabs(d) + std::fabs(d - dh) * (std::fabs(t) + 1) + kSlack * std::fabs(m);
        ASSERT_LE(std::fabs(y[32 * blk + j] - xb[j]), bound)
            << type_name(c.type) << " block " << blk << " element " << j << " x " << xb[j];
      }
    }
  }
}

// Affine formats: Q4_1 (15 steps) and Q5_1 (31 steps).
TEST(QuantizeRoundTrip, AffineBlockFormats) {
  for (const Type t : {Type::Q4_1, Type::Q5_1}) {
    const float steps = t == Type::Q4_1 ? 15.0f : 31.0f;
    std::vector<float> x = gaussian(32 * 512, kSeed + 1, 2.0f);
    for (size_t i = 0; i < x.size(); i += 97) x[i] += 3.0f;  // some skew
    const Bytes b = quantize(t, x);
    const std::vector<float> y = dequantize(t, b, x.size());
    for (size_t blk = 0; blk < x.size() / 32; blk++) {
      const float* xb = x.data() + 32 * blk;
      float mn = xb[0], mx = xb[0];
      for (int j = 0; j < 32; j++) {
        mn = std::min(mn, xb[j]);
        mx = std::max(mx, xb[j]);
      }
      const float d = (mx - mn) / steps;
      ASSERT_EQ(fp32_to_fp16(d), load16(b, blk * type_size(t))) << type_name(t) << " block " << blk;
      ASSERT_EQ(fp32_to_fp16(mn), load16(b, blk * type_size(t) + 2)) << type_name(t) << " block " << blk;
      const float dh = h2f(fp32_to_fp16(d)), mh = h2f(fp32_to_fp16(mn));
      const float bound =
          0.5f * d + std::fabs(d - dh) * steps + std::fabs(mn - mh) + kSlack * (mx - mn + std::fabs(mn));
      for (int j = 0; j < 32; j++)
        ASSERT_LE(std::fabs(y[32 * blk + j] - xb[j]), bound)
            << type_name(t) << " block " << blk << " element " << j;
    }
  }
}

TEST(QuantizeRoundTrip, Q8_1Sum) {
  const std::vector<float> x = gaussian(32 * 64, kSeed + 2);
  const Bytes b = quantize(Type::Q8_1, x);
  const std::vector<float> y = dequantize(Type::Q8_1, b, x.size());
  // Same quants as Q8_0, and s = d * sum(q): the sum of the dequantized block up to F16 rounding.
  const Bytes b0 = quantize(Type::Q8_0, x);
  for (size_t blk = 0; blk < x.size() / 32; blk++) {
    EXPECT_EQ(0, std::memcmp(b0.data() + 34 * blk, b.data() + 36 * blk, 2));
    EXPECT_EQ(0, std::memcmp(b0.data() + 34 * blk + 2, b.data() + 36 * blk + 4, 32));
    double sum = 0;
    for (int j = 0; j < 32; j++) sum += y[32 * blk + j];
    const double s = h2f(load16(b, 36 * blk + 2));
    const float d = h2f(load16(b, 36 * blk));
    EXPECT_NEAR(sum, s, std::fabs(sum) * 2e-3 + d * 32 * 1e-3) << "block " << blk;
  }
}

TEST(QuantizeRoundTrip, Q8_K) {
  const std::vector<float> x = gaussian(256 * 64, kSeed + 3, 3.0f);
  const Bytes b = quantize(Type::Q8_K, x);
  const std::vector<float> y = dequantize(Type::Q8_K, b, x.size());
  for (size_t blk = 0; blk < x.size() / 256; blk++) {
    block_q8_K q;
    std::memcpy(&q, b.data() + blk * sizeof(q), sizeof(q));
    const float m = signed_absmax(x.data() + 256 * blk, 256);
    EXPECT_EQ(1.0f / (-127.0f / m), q.d) << "block " << blk;  // d = 1 / iscale, stored as float
    for (int g = 0; g < 16; g++) {
      int sum = 0;
      for (int l = 0; l < 16; l++) sum += q.qs[16 * g + l];
      EXPECT_EQ(sum, q.bsums[g]) << "block " << blk << " group " << g;
    }
    for (int j = 0; j < 256; j++) {
      const size_t i = 256 * blk + j;
      ASSERT_LE(std::fabs(y[i] - x[i]), (0.5f + 1e-4f) * std::fabs(q.d)) << "element " << i;
    }
  }
}

// K-quants and the non-linear formats: RMSE on N(0, 1) data.
//
// Reference points derived from the formats: a uniform quantizer with step s has RMS error about
// s / sqrt(12). Q4_1 with min/max scaling on blocks of 32 gaussian values (range ~ 4.1 sigma) gives
// s ~ 0.27, i.e. ~0.079; Q4_0 (step = max|x| / 8, ~0.27) ~0.08; Q5_0 half of that. Q4_K has the same
// 4-bit grid per 32 values, with a least-squares scale/min (better than min/max) stored in 6 bits
// (slightly worse): it must beat Q4_1. Q6_K has 64 levels instead of 16 (a 4x finer step).
// IQ4_NL's non-uniform levels (denser near 0) beat Q4_0. MXFP4 has power-of-two block scales and
// 8 magnitude levels: coarser than Q4_0. (golden_test.cpp compares Q4_K with llama.cpp's own
// quantization of the same weights.)
TEST(QuantizeRoundTrip, RmseOnGaussianData) {
  const std::vector<float> x = gaussian(256 * 1024, kSeed + 4);
  const double q4_0 = rmse(x, round_trip(Type::Q4_0, x));
  const double q4_1 = rmse(x, round_trip(Type::Q4_1, x));
  const double q5_0 = rmse(x, round_trip(Type::Q5_0, x));
  const double q4_k = rmse(x, round_trip(Type::Q4_K, x));
  const double q6_k = rmse(x, round_trip(Type::Q6_K, x));
  const double iq4_nl = rmse(x, round_trip(Type::IQ4_NL, x));
  const double mxfp4 = rmse(x, round_trip(Type::MXFP4, x));
  std::printf("rmse on N(0,1): Q4_0 %.5f Q4_1 %.5f Q5_0 %.5f Q4_K %.5f Q6_K %.5f IQ4_NL %.5f MXFP4 %.5f\n",
              q4_0, q4_1, q5_0, q4_k, q6_k, iq4_nl, mxfp4);
  EXPECT_LT(q4_0, 0.09);
  EXPECT_LT(q4_1, 0.085);
  EXPECT_LT(q4_k, q4_1);
  EXPECT_LT(q4_k, 0.075);
  EXPECT_LT(q6_k, 0.3 * q4_k);
  EXPECT_LT(q6_k, 0.02);
  EXPECT_LT(iq4_nl, q4_0);
  EXPECT_LT(iq4_nl, 0.08);
  EXPECT_LT(mxfp4, 0.12);
}

// ---------------------------------------------------------------------------------------------
// Values on a format's grid come back exactly.

// Grid values: 32-element blocks where element j is level L(j) times a power-of-two step.
TEST(QuantizeRoundTrip, RepresentableValuesAreExact) {
  struct Case {
    Type type;
    std::vector<float> x;
  };
  std::vector<Case> cases;
  const int n = 64;
  auto grid = [&](auto level) {
    std::vector<float> x(n);
    for (int i = 0; i < n; i++) x[i] = level(i);
    return x;
  };
  // Q4_0: k / 8 for k in [-8, 7], each block containing -8 (the extreme must be -8 d).
  cases.push_back({Type::Q4_0, grid([](int i) { return (float)((i * 5) % 16 - 8) / 8.0f; })});
  // Q5_0: k / 4 for k in [-16, 15].
  cases.push_back({Type::Q5_0, grid([](int i) { return (float)((i * 7) % 32 - 16) / 4.0f; })});
  // Q8_0 and Q8_1: k / 16 for k in [-127, 127], with +-127 present in each block.
  auto q8 = grid([](int i) { return (float)((i * 37) % 255 - 127) / 16.0f; });
  q8[0] = 127.0f / 16.0f;
  q8[32] = -127.0f / 16.0f;
  cases.push_back({Type::Q8_0, q8});
  cases.push_back({Type::Q8_1, q8});
  // Q8_K: the extreme -127 / 16 gives iscale = 16, d = 1/16.
  auto q8k = grid([](int i) { return (float)((i * 37) % 255 - 127) / 16.0f; });
  q8k.resize(256, 0.5f);
  q8k[0] = -127.0f / 16.0f;
  cases.push_back({Type::Q8_K, q8k});
  // Q4_1: -1 + k / 8 for k in [0, 15] with both ends present: d = 1.875 / 15 = 1/8.
  cases.push_back({Type::Q4_1, grid([](int i) { return -1.0f + (float)((i * 5) % 16) / 8.0f; })});
  // Q5_1: -2 + k / 8 for k in [0, 31].
  cases.push_back({Type::Q5_1, grid([](int i) { return -2.0f + (float)((i * 7) % 32) / 8.0f; })});
  // IQ4_NL: table level times 1/64, with -127 in each block.
  cases.push_back({Type::IQ4_NL, grid([](int i) { return (float)kIq4nlValues[(i * 5) % 16] / 64.0f; })});
  // MXFP4: e2m1 values times 2^-3, with 6 in each block (scale 2^-3 exactly).
  cases.push_back({Type::MXFP4, grid([](int i) {
                     const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
                     return (i % 2 ? -1.0f : 1.0f) * e2m1[(i * 3) % 8] / 8.0f;
                   })});
  // F16: 11 significant bits; BF16: 8.
  cases.push_back(
      {Type::F16, grid([](int i) { return (float)(i * 37 - 1000) * std::ldexp(1.0f, i % 12 - 10); })});
  cases.push_back(
      {Type::BF16, grid([](int i) { return (float)(i * 3 - 100) * std::ldexp(1.0f, i % 40 - 20); })});

  // Q4_K: sub-block j holds dq * sc[j] * q - dmin * m[j], q in [0, 15] with 0 and 15 present,
  // sc with max 63 and m with max 63 (so the super-block scales are exactly dq and dmin).
  {
    std::vector<float> x(256);
    const int sc[8] = {63, 17, 40, 1, 22, 63, 9, 31};
    const int m[8] = {0, 63, 5, 12, 40, 7, 63, 18};
    const float dq = 1.0f / 256, dmin = 1.0f / 128;
    for (int e = 0; e < 256; e++) {
      const int s = e / 32, l = e % 32;
      const int q = l == 0 ? 0 : (l == 1 ? 15 : (l * 7) % 16);
      x[e] = dq * (float)(sc[s] * q) - dmin * (float)m[s];
    }
    cases.push_back({Type::Q4_K, x});
  }
  // Q6_K: group j of 16 holds d * sc[j] * q with q in [-32, 31] and -32 present in each group
  // (the group's extreme maps to -32), one scale at -128 (the super-block's extreme).
  {
    std::vector<float> x(256);
    const int sc[16] = {-128, 17, 40, -1, 22, 63, -9, 31, 100, -77, 5, 127, -50, 2, 88, -3};
    const float d = 1.0f / 1024;
    for (int e = 0; e < 256; e++) {
      const int g = e / 16, l = e % 16;
      const int q = l == 3 ? -32 : (l * 11) % 64 - 31;  // never +32, so -32 stays the extreme
      x[e] = d * (float)(sc[g] * q);
    }
    cases.push_back({Type::Q6_K, x});
  }

  for (const Case& c : cases) {
    const std::vector<float> y = round_trip(c.type, c.x);
    for (size_t i = 0; i < c.x.size(); i++) ASSERT_EQ(c.x[i], y[i]) << type_name(c.type) << " element " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Special rows.

TEST(QuantizeRoundTrip, ZeroRows) {
  for (const Type t : kQuantizable) {
    const std::vector<float> x(512, 0.0f);
    const std::vector<float> y = round_trip(t, x);
    for (size_t i = 0; i < x.size(); i++) ASSERT_EQ(0.0f, y[i]) << type_name(t) << " element " << i;
  }
}

// One huge value in a row of N(0, 1): the outlier is kept (within the relative precision of the
// format's top level) and the other blocks of the row are quantized exactly as without it.
TEST(QuantizeRoundTrip, HugeOutlier) {
  struct Case {
    Type type;
    double rel;  // allowed relative error on the outlier
  };
  // Relative precision at the top of each grid: Q4_0 maps the extreme exactly to -8 d (F16 d:
  // 2^-11 relative); Q4_1/Q5_1 put it on the top level; K-quants fit it within ~1/2 step of a
  // 15- or 31-level range; IQ4_NL scales to the table end; MXFP4's top octave has levels 4 and 6,
  // so up to 1/5 relative.
  const Case cases[] = {{Type::Q4_0, 1e-3}, {Type::Q4_1, 1e-3},   {Type::Q5_0, 1e-3}, {Type::Q5_1, 1e-3},
                        {Type::Q8_0, 1e-3}, {Type::Q8_1, 1e-3},   {Type::Q8_K, 5e-3}, {Type::Q4_K, 0.04},
                        {Type::Q6_K, 0.02}, {Type::IQ4_NL, 0.02}, {Type::MXFP4, 0.2}, {Type::F16, 1e-3},
                        {Type::BF16, 4e-3}};
  for (const Case& c : cases) {
    std::vector<float> x = gaussian(1024, kSeed + 5);
    const Bytes plain = quantize(c.type, x);
    const size_t at = 300;  // in block 1 of the K-quants, block 9 of the 32-element formats
    x[at] = 1.0e4f;
    const Bytes b = quantize(c.type, x);
    const std::vector<float> y = dequantize(c.type, b, x.size());
    EXPECT_NEAR(x[at], y[at], c.rel * x[at]) << type_name(c.type);
    const int64_t bs = block_size(c.type);
    const size_t blk = at / (size_t)bs, bytes = type_size(c.type);
    for (size_t k = 0; k < x.size() / (size_t)bs; k++) {
      if (k == blk) continue;
      ASSERT_EQ(0, std::memcmp(plain.data() + k * bytes, b.data() + k * bytes, bytes))
          << type_name(c.type) << " block " << k << " changed";
    }
  }
}

// Non-finite input must not crash (quantizing a corrupt tensor is an input error, not UB), and
// its damage stays in the blocks that hold it: every other block quantizes exactly as the clean
// row does and dequantizes to finite values.
TEST(QuantizeRoundTrip, NonFiniteInputStaysInItsBlock) {
  const size_t kBad[] = {3, 40, 300};
  for (const Type t : kQuantizable) {
    const std::vector<float> clean = gaussian(1024, kSeed + 6);
    std::vector<float> x = clean;
    x[kBad[0]] = std::numeric_limits<float>::quiet_NaN();
    x[kBad[1]] = std::numeric_limits<float>::infinity();
    x[kBad[2]] = -std::numeric_limits<float>::infinity();
    Bytes want(row_size(t, 1024)), b(row_size(t, 1024));
    quantize_row(t, clean.data(), want.data(), 1024);
    quantize_row(t, x.data(), b.data(), 1024);
    std::vector<float> y(1024);
    dequantize_row(t, b.data(), y.data(), 1024);
    const size_t bs = (size_t)block_size(t), bytes = type_size(t);
    size_t checked = 0;
    for (size_t k = 0; k < 1024 / bs; k++) {
      bool damaged = false;
      for (size_t i : kBad) damaged = damaged || i / bs == k;
      if (damaged) continue;
      ASSERT_EQ(0, std::memcmp(want.data() + k * bytes, b.data() + k * bytes, bytes)) << type_name(t) << " block " << k;
      for (size_t i = k * bs; i < (k + 1) * bs; i++) ASSERT_TRUE(std::isfinite(y[i])) << type_name(t) << " element " << i;
      checked++;
    }
    EXPECT_GE(checked, 1024 / bs - 3) << type_name(t);
  }
}

// ---------------------------------------------------------------------------------------------
// quantize_rows and argument checks.

TEST(QuantizeRows, ThreadsGiveTheSameBytesAsOneRowAtATime) {
  const int64_t n_rows = 37, n_per_row = 512;
  const std::vector<float> x = gaussian((size_t)(n_rows * n_per_row), kSeed + 7);
  for (const Type t : kQuantizable) {
    const size_t rs = row_size(t, n_per_row);
    Bytes rows(rs * n_rows);
    for (int64_t r = 0; r < n_rows; r++)
      quantize_row(t, x.data() + r * n_per_row, rows.data() + r * rs, n_per_row);
    for (int threads : {1, 2, 3, 64}) {
      Bytes b(rs * n_rows, 0xEE);
      quantize_rows(t, x.data(), b.data(), n_rows, n_per_row, threads);
      ASSERT_EQ(rows, b) << type_name(t) << " with " << threads << " threads";
    }
  }
  quantize_rows(Type::Q4_0, x.data(), nullptr, 0, 32, 2);  // no rows: nothing to do
}

TEST(QuantizeRows, RejectsBadArguments) {
  std::vector<float> x(512, 1.0f);
  Bytes b(2048);
  EXPECT_FALSE(can_quantize(Type::Q2_K));
  EXPECT_FALSE(can_quantize(Type::I32));
  EXPECT_TRUE(can_quantize(Type::MXFP4));
  for (const Type t : {Type::Q2_K, Type::Q3_K, Type::Q5_K, Type::I8}) {
    try {
      quantize_row(t, x.data(), b.data(), 256);
      FAIL() << "no exception for " << type_name(t);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(type_name(t)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(quantize_row(Type::Q4_K, x.data(), b.data(), 32), Error);
  EXPECT_THROW(quantize_row(Type::Q8_0, x.data(), b.data(), 33), Error);
  EXPECT_THROW(quantize_rows(Type::Q8_0, x.data(), b.data(), 2, 31, 2), Error);
  EXPECT_THROW(quantize_rows(Type::Q8_0, x.data(), b.data(), -1, 32, 2), Error);
  EXPECT_THROW(quantize_row(static_cast<Type>(77), x.data(), b.data(), 32), Error);
  try {
    quantize_row(Type::IQ4_NL, x.data(), b.data(), 40);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("IQ4_NL"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hexllm::quant
