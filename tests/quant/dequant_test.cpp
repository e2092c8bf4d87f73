// Dequantization of hand-built blocks against values derived by hand from the GGUF/ggml format
// definitions. Blocks are written as raw bytes at the spec's byte offsets (not through the structs),
// so these tests also pin the struct layouts of blocks.h.
#include "quant/dequant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/error.h"
#include "quant/blocks.h"
#include "quant/types.h"

namespace hexllm::quant {
namespace {

using Bytes = std::vector<uint8_t>;

std::vector<float> dequant(Type t, const Bytes& b, int64_t n) {
  EXPECT_EQ(b.size(), row_size(t, n)) << type_name(t);
  std::vector<float> y((size_t)n, -12345.0f);
  dequantize_row(t, b.data(), y.data(), n);
  return y;
}

void put16(Bytes& b, size_t off, uint16_t v) {
  b[off] = (uint8_t)(v & 0xFF);
  b[off + 1] = (uint8_t)(v >> 8);
}

// Bit-exact comparison (also tells -0 from +0 and compares infinities).
void expect_same(float want, float got, const char* what, int i) {
  uint32_t a, b;
  std::memcpy(&a, &want, 4);
  std::memcpy(&b, &got, 4);
  EXPECT_EQ(a, b) << what << " element " << i << ": want " << want << ", got " << got;
}

void expect_all(const std::vector<float>& want, const std::vector<float>& got, const char* what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); i++) expect_same(want[i], got[i], what, (int)i);
}

// F16 bit patterns used below: 0x3C00 = 1.0, 0x3800 = 0.5, 0x3400 = 0.25, 0xB800 = -0.5,
// 0xBC00 = -1.0, 0xC800 = -8.0 (sign | exponent (biased 15) << 10 | mantissa).

TEST(DequantHand, F32IsACopy) {
  // 1.0f = 0x3F800000, -2.5f = 0xC0200000 (little endian bytes).
  const Bytes b = {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0};
  expect_all({1.0f, -2.5f}, dequant(Type::F32, b, 2), "F32");
}

TEST(DequantHand, F16) {
  Bytes b(2 * 8);
  const uint16_t h[8] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x3555, 0x7C00, 0x0400};
  for (int i = 0; i < 8; i++) put16(b, 2 * i, h[i]);
  // 0x3555: exponent 13 -> 2^-2, mantissa 0x155 = 341 -> 0.25 * (1 + 341/1024) = 0.333251953125.
  // 0x0001: subnormal 2^-24. 0x0400: smallest normal 2^-14. 0x7BFF: (2 - 2^-10) * 2^15 = 65504.
  expect_all({1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24), -0.0f, 0.333251953125f,
              std::numeric_limits<float>::infinity(), std::ldexp(1.0f, -14)},
             dequant(Type::F16, b, 8), "F16");
}

TEST(DequantHand, BF16) {
  Bytes b(2 * 5);
  const uint16_t h[5] = {0x3F80, 0xC040, 0x4049, 0x0001, 0xFF80};
  for (int i = 0; i < 5; i++) put16(b, 2 * i, h[i]);
  // bf16 = top half of a float: 0x4049 -> 0x40490000 = 3.140625; 0x0001 -> 0x00010000 = 2^16 * 2^-149.
  expect_all({1.0f, -3.0f, 3.140625f, std::ldexp(1.0f, -133), -std::numeric_limits<float>::infinity()},
             dequant(Type::BF16, b, 5), "BF16");
}

TEST(DequantHand, Q4_0) {
  // bytes 0-1: d (F16), bytes 2-17: qs; element j = low nibble of qs[j], j + 16 = high nibble.
  Bytes b(18);
  put16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; j++) b[2 + j] = (uint8_t)(j | ((15 - j) << 4));
  // qs[0] = 0xF0: element 0 = (0 - 8) * 0.5 = -4, element 16 = (15 - 8) * 0.5 = 3.5.
  // qs[9] = 0x69: element 9 = (9 - 8) * 0.5 = 0.5, element 25 = (6 - 8) * 0.5 = -1.
  const std::vector<float> want = {-4,  -3.5, -3,   -2.5, -2,   -1.5, -1,   -0.5, 0,    0.5, 1,
                                   1.5, 2,    2.5,  3,    3.5,  3.5,  3,    2.5,  2,    1.5, 1,
                                   0.5, 0,    -0.5, -1,   -1.5, -2,   -2.5, -3,   -3.5, -4};
  expect_all(want, dequant(Type::Q4_0, b, 32), "Q4_0");

  // A negative scale flips signs: d = -0.5, qs[0] = 0x0F -> element 0 = (15 - 8) * -0.5 = -3.5,
  // element 16 = (0 - 8) * -0.5 = 4.
  put16(b, 0, 0xB800);
  b[2] = 0x0F;
  const std::vector<float> y = dequant(Type::Q4_0, b, 32);
  expect_same(-3.5f, y[0], "Q4_0 negative d", 0);
  expect_same(4.0f, y[16], "Q4_0 negative d", 16);
  expect_same(-0.0f, y[8], "Q4_0 negative d", 8);  // (8 - 8) * -0.5 = -0
}

TEST(DequantHand, Q4_1) {
  // d, m (F16), qs[16]; x = d * q + m.
  Bytes b(20);
  put16(b, 0, 0x3400);  // d = 0.25
  put16(b, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; j++) b[4 + j] = (uint8_t)(j | ((15 - j) << 4));
  // element j = 0.25 j - 1; element 16 + j = 0.25 (15 - j) - 1, e.g. element 16 = 2.75.
  std::vector<float> want(32);
  const float lo[16] = {-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75};
  for (int j = 0; j < 16; j++) {
    want[j] = lo[j];
    want[16 + j] = lo[15 - j];
  }
  expect_all(want, dequant(Type::Q4_1, b, 32), "Q4_1");
}

TEST(DequantHand, Q5_0) {
  // d (F16), qh (4 bytes, little-endian uint32: bit j is the 5th bit of element j), qs[16].
  Bytes b(22);
  put16(b, 0, 0x3800);  // d = 0.5
  // High bits set for elements 0, 10, 17 and 31: qh = 0x80020401.
  b[2] = 0x01;  // bit 0
  b[3] = 0x04;  // bit 10
  b[4] = 0x02;  // bit 17
  b[5] = 0x80;  // bit 31
  for (int j = 0; j < 16; j++) b[6 + j] = (uint8_t)(j | (j << 4));
  std::vector<float> want(32);
  for (int j = 0; j < 16; j++) {
    want[j] = 0.5f * (float)(j - 16);       // nibble j, no high bit
    want[16 + j] = 0.5f * (float)(j - 16);  // nibble j, no high bit
  }
  want[0] = 0.0f;    // (0 | 16) - 16 = 0
  want[10] = 5.0f;   // (10 | 16) - 16 = 10 -> 5
  want[17] = 0.5f;   // (1 | 16) - 16 = 1 -> 0.5
  want[31] = 7.5f;   // (15 | 16) - 16 = 15 -> 7.5
  want[16] = -8.0f;  // (0 | 0) - 16 = -16 -> -8
  expect_all(want, dequant(Type::Q5_0, b, 32), "Q5_0");
}

TEST(DequantHand, Q5_1) {
  // d, m (F16), qh[4], qs[16]; x = d * q + m with q in [0, 31].
  Bytes b(24);
  put16(b, 0, 0x3C00);  // d = 1
  put16(b, 2, 0xC800);  // m = -8
  b[4] = 0x00;
  b[5] = 0x80;  // bit 15: element 15
  b[6] = 0x01;  // bit 16: element 16
  b[7] = 0x40;  // bit 30: element 30
  for (int j = 0; j < 16; j++) b[8 + j] = (uint8_t)((15 - j) | (j << 4));
  std::vector<float> want(32);
  for (int j = 0; j < 16; j++) {
    want[j] = (float)(15 - j) - 8.0f;
    want[16 + j] = (float)j - 8.0f;
  }
  want[15] = (float)(0 | 16) - 8.0f;   // 8
  want[16] = (float)(0 | 16) - 8.0f;   // 8
  want[30] = (float)(14 | 16) - 8.0f;  // 22
  expect_all(want, dequant(Type::Q5_1, b, 32), "Q5_1");
}

TEST(DequantHand, Q8_0) {
  // d (F16), int8 qs[32].
  Bytes b(34);
  put16(b, 0, 0x3400);  // d = 0.25
  for (int j = 0; j < 32; j++) b[2 + j] = (uint8_t)(int8_t)(j - 16);
  b[2] = 0x80;  // -128 -> -32
  b[3] = 0x7F;  // 127 -> 31.75
  b[4] = 0xFF;  // -1 -> -0.25
  std::vector<float> want(32);
  for (int j = 0; j < 32; j++) want[j] = 0.25f * (float)(j - 16);
  want[0] = -32.0f;
  want[1] = 31.75f;
  want[2] = -0.25f;
  expect_all(want, dequant(Type::Q8_0, b, 32), "Q8_0");
}

TEST(DequantHand, Q8_1) {
  // d, s (F16; s is not used to dequantize), int8 qs[32].
  Bytes b(36);
  put16(b, 0, 0x3800);  // d = 0.5
  put16(b, 2, 0x1234);
  for (int j = 0; j < 32; j++) b[4 + j] = (uint8_t)(int8_t)(3 * j - 50);
  std::vector<float> want(32);
  for (int j = 0; j < 32; j++) want[j] = 0.5f * (float)(3 * j - 50);  // e.g. element 0 = -25
  expect_all(want, dequant(Type::Q8_1, b, 32), "Q8_1");
}

TEST(DequantHand, Q2_K) {
  // scales[16] at 0, qs[64] at 16, d at 80, dmin at 82.
  // Sub-block s (16 elements): scale = low nibble of scales[s], min = high nibble.
  // Element 128 h + 32 g + l: bits 2g..2g+1 of qs[32 h + l]; sub-block (128 h + 32 g + l) / 16.
  Bytes b(84);
  for (int s = 0; s < 16; s++) b[s] = (uint8_t)(s | ((15 - s) << 4));
  for (int k = 0; k < 64; k++) b[16 + k] = 0xE4;  // 11 10 01 00: group g has q = g
  b[16 + 32 + 5] = 0x1B;                          // 00 01 10 11 for h = 1, l = 5
  put16(b, 80, 0x3C00);                           // d = 1
  put16(b, 82, 0x3800);                           // dmin = 0.5
  const std::vector<float> y = dequant(Type::Q2_K, b, 256);
  for (int e = 0; e < 256; e++) {
    const int s = e / 16, g = (e % 128) / 32;
    int q = g;
    if (e % 32 == 5 && e >= 128) q = 3 - g;  // the modified byte
    expect_same((float)(s * q) - 0.5f * (float)(15 - s), y[e], "Q2_K", e);
  }
  expect_same(-7.5f, y[0], "Q2_K", 0);      // s 0, q 0: 0 - 0.5 * 15
  expect_same(-4.5f, y[40], "Q2_K", 40);    // h 0, g 1, l 8: s 2, q 1: 2 - 0.5 * 13
  expect_same(20.5f, y[133], "Q2_K", 133);  // h 1, g 0, l 5: s 8, q 3: 24 - 0.5 * 7
  expect_same(17.5f, y[165], "Q2_K", 165);  // h 1, g 1, l 5: s 10, q 2: 20 - 0.5 * 5
  expect_same(-0.5f, y[229], "Q2_K", 229);  // h 1, g 3, l 5: s 14, q 0: 0 - 0.5 * 1
  expect_same(45.0f, y[255], "Q2_K", 255);  // s 15, q 3: 45 - 0
}

TEST(DequantHand, Q3_K) {
  // hmask[32] at 0, qs[64] at 32, scales[12] at 96, d at 108.
  // Stored 6-bit scales S (signed scale = S - 32), chosen to exercise every bit position:
  //   S = 0 63 17 46 5 40 33 28 12 51 2 60 37 21 48 9
  // Low nibbles: bytes 0-7 hold S[0..7] (low nibble) and S[8..15] (high nibble):
  //   byte 0 = 0 | 12 << 4 = 0xC0, byte 1 = 15 | 3 << 4 = 0x3F, byte 2 = 1 | 2 << 4 = 0x21, ...
  // Top 2 bits of S[j] at byte 8 + j % 4, bits 2 (j / 4):
  //   byte 8 = H0 | H4 << 2 | H8 << 4 | H12 << 6 = 0 | 0 | 0 | 2 << 6 = 0x80, ...
  const int S[16] = {0, 63, 17, 46, 5, 40, 33, 28, 12, 51, 2, 60, 37, 21, 48, 9};
  const uint8_t packed[12] = {0xC0, 0x3F, 0x21, 0xCE, 0x55, 0x58, 0x01, 0x9C, 0x80, 0x7B, 0xC9, 0x36};
  Bytes b(110);
  // hmask: even l -> 0x55 (bits 0, 2, 4, 6), odd l -> 0xAA. Element 128 h + 32 g + l uses bit 4h + g.
  for (int l = 0; l < 32; l++) b[l] = (l % 2 == 0) ? 0x55 : 0xAA;
  for (int k = 0; k < 64; k++) b[32 + k] = 0xE4;  // 2 low bits: group g -> g
  for (int k = 0; k < 12; k++) b[96 + k] = packed[k];
  put16(b, 108, 0x3800);  // d = 0.5
  const std::vector<float> y = dequant(Type::Q3_K, b, 256);
  for (int e = 0; e < 256; e++) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32;
    const bool high = ((4 * h + g) % 2 == 0) == (l % 2 == 0);  // 0x55 has the even bits
    const int q = g - (high ? 0 : 4);
    expect_same(0.5f * (float)(S[e / 16] - 32) * (float)q, y[e], "Q3_K", e);
  }
  // Element 32: h 0, g 1, l 0: bit 1 of 0x55 clear -> q = 1 - 4 = -3; sub-block 2, S = 17 -> -15.
  //   0.5 * -15 * -3 = 22.5
  expect_same(22.5f, y[32], "Q3_K", 32);
  // Element 33: bit 1 of 0xAA set -> q = 1; 0.5 * -15 * 1 = -7.5
  expect_same(-7.5f, y[33], "Q3_K", 33);
  // Element 250: h 1, g 3, l 26: bit 7 of 0x55 clear -> q = 3 - 4 = -1; sub-block 15, S = 9:
  //   low nibble = high nibble of byte 7 (0x9C) = 9, top bits = byte 11 (0x36) >> 6 = 0 -> 9 - 32 = -23.
  //   0.5 * -23 * -1 = 11.5
  expect_same(11.5f, y[250], "Q3_K", 250);
  // Element 150: h 1, g 0, l 22: bit 4 of 0x55 set -> q = 0; value 0.5 * (S[9] - 32) * 0 = 0.
  expect_same(0.0f, y[150], "Q3_K", 150);
  // Element 160: h 1, g 1, l 0: bit 5 of 0x55 clear -> q = -3; sub-block 10, S = 2:
  //   low = high nibble of byte 2 (0x21) = 2, top = (byte 10 (0xC9) >> 4) & 3 = 0 -> -30.
  //   0.5 * -30 * -3 = 45
  expect_same(45.0f, y[160], "Q3_K", 160);
  // Element 16: sub-block 1, S = 63 (low 15 from byte 1, top 3 from byte 9 bits 0-1): scale 31,
  //   h 0, g 0, l 16 (even): bit 0 of 0x55 set -> q = 0.
  expect_same(0.0f, y[16], "Q3_K", 16);
  // Element 49: sub-block 3, S = 46 -> 14; g 1, l 17 (odd): bit 1 of 0xAA set -> q = 1 -> 7.
  expect_same(7.0f, y[49], "Q3_K", 49);
}

// Shared by Q4_K and Q5_K: 6-bit scales sc and mins m of the 8 sub-blocks and their 12-byte packing.
//   sc = 1 63 17 32 45 8 50 27,  m = 0 5 63 12 33 60 7 19
// bytes 0-3, sc[j] | (sc[j+4] >> 4) << 6:
//   1 | 2 << 6 = 0x81, 63 | 0 = 0x3F, 17 | 3 << 6 = 0xD1, 32 | 1 << 6 = 0x60
// bytes 4-7, m[j] | (m[j+4] >> 4) << 6:
//   0 | 2 << 6 = 0x80, 5 | 3 << 6 = 0xC5, 63 | 0 = 0x3F, 12 | 1 << 6 = 0x4C
// bytes 8-11, (sc[j+4] & 15) | (m[j+4] & 15) << 4:
//   13 | 1 << 4 = 0x1D, 8 | 12 << 4 = 0xC8, 2 | 7 << 4 = 0x72, 11 | 3 << 4 = 0x3B
const int kSc[8] = {1, 63, 17, 32, 45, 8, 50, 27};
const int kMin[8] = {0, 5, 63, 12, 33, 60, 7, 19};
const uint8_t kPackedScaleMin[12] = {0x81, 0x3F, 0xD1, 0x60, 0x80, 0xC5, 0x3F, 0x4C, 0x1D, 0xC8, 0x72, 0x3B};

TEST(DequantHand, ScaleMinK4Helper) {
  for (int j = 0; j < 8; j++) {
    uint8_t sc, m;
    get_scale_min_k4(j, kPackedScaleMin, &sc, &m);
    EXPECT_EQ(kSc[j], sc) << "sub-block " << j;
    EXPECT_EQ(kMin[j], m) << "sub-block " << j;
  }
}

TEST(DequantHand, Q4_K) {
  // d at 0, dmin at 2, scales[12] at 4, qs[128] at 16.
  // Chunk c (64 elements) uses qs[32 c + l]: low nibble = element 64 c + l (sub-block 2c),
  // high nibble = element 64 c + 32 + l (sub-block 2c + 1). x = d * sc * q - dmin * m.
  Bytes b(144);
  put16(b, 0, 0x3800);  // d = 0.5
  put16(b, 2, 0x3400);  // dmin = 0.25
  for (int k = 0; k < 12; k++) b[4 + k] = kPackedScaleMin[k];
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++) b[16 + 32 * c + l] = (uint8_t)((l & 15) | ((15 - (l & 15)) << 4));
  const std::vector<float> y = dequant(Type::Q4_K, b, 256);
  for (int e = 0; e < 256; e++) {
    const int s = e / 32, l = e % 32;
    const int q = (s % 2 == 0) ? (l & 15) : 15 - (l & 15);
    expect_same(0.5f * (float)kSc[s] * (float)q - 0.25f * (float)kMin[s], y[e], "Q4_K", e);
  }
  // Element 3: sub-block 0 (sc 1, m 0), q = 3: 0.5 * 1 * 3 - 0 = 1.5
  expect_same(1.5f, y[3], "Q4_K", 3);
  // Element 33: sub-block 1 (sc 63, m 5), high nibble of qs[1] = 14: 0.5 * 63 * 14 - 0.25 * 5 = 439.75
  expect_same(439.75f, y[33], "Q4_K", 33);
  // Element 170 = sub-block 5 (sc 8, m 60), chunk 2 high nibble of
  //   qs[64 + 10] = 15 - 10 = 5: 0.5 * 8 * 5 - 0.25 * 60 = 5
  expect_same(5.0f, y[170], "Q4_K", 170);
  // Element 255: sub-block 7 (sc 27, m 19), high nibble of qs[127] = 15 - 15 = 0: -4.75
  expect_same(-4.75f, y[255], "Q4_K", 255);
}

TEST(DequantHand, Q5_K) {
  // d at 0, dmin at 2, scales[12] at 4, qh[32] at 16, qs[128] at 48.
  // The 5th bit of element 32 s + l (sub-block s) is bit s of qh[l].
  Bytes b(176);
  put16(b, 0, 0x3400);  // d = 0.25
  put16(b, 2, 0x3C00);  // dmin = 1
  for (int k = 0; k < 12; k++) b[4 + k] = kPackedScaleMin[k];
  for (int l = 0; l < 32; l++) b[16 + l] = (uint8_t)(0x5A + 3 * l);
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++) b[48 + 32 * c + l] = (uint8_t)((l & 15) | ((15 - (l & 15)) << 4));
  const std::vector<float> y = dequant(Type::Q5_K, b, 256);
  for (int e = 0; e < 256; e++) {
    const int s = e / 32, l = e % 32;
    const int nib = (s % 2 == 0) ? (l & 15) : 15 - (l & 15);
    const int hi = ((0x5A + 3 * l) & 0xFF) >> s & 1;
    expect_same(0.25f * (float)kSc[s] * (float)(nib + 16 * hi) - (float)kMin[s], y[e], "Q5_K", e);
  }
  // Element 0: qh[0] = 0x5A = 0101 1010, bit 0 clear -> q = 0: 0 - 0 = 0.
  expect_same(0.0f, y[0], "Q5_K", 0);
  // Element 33: sub-block 1 (sc 63, m 5), qh[1] = 0x5D = 0101 1101, bit 1 clear; nibble 14:
  //   0.25 * 63 * 14 - 5 = 215.5
  expect_same(215.5f, y[33], "Q5_K", 33);
  // Element 98: sub-block 3 (sc 32, m 12), l = 2: qh[2] = 0x60 = 0110 0000, bit 3 clear,
  //   nibble 15 - 2 = 13: 0.25 * 32 * 13 - 12 = 92
  expect_same(92.0f, y[98], "Q5_K", 98);
  // Element 226: sub-block 7 (sc 27, m 19), l = 2: bit 7 of 0x60 clear, nibble 13:
  //   0.25 * 27 * 13 - 19 = 68.75
  expect_same(68.75f, y[226], "Q5_K", 226);
  // Element 197: sub-block 6 (sc 50, m 7), l = 5: qh[5] = 0x69 = 0110 1001, bit 6 set;
  //   nibble 5 -> q = 21: 0.25 * 50 * 21 - 7 = 255.5
  expect_same(255.5f, y[197], "Q5_K", 197);
}

TEST(DequantHand, Q6_K) {
  // ql[128] at 0, qh[64] at 128, int8 scales[16] at 192, d at 208.
  // Start from all-zero quant bits (every q = 0 - 32), then set a few bytes and check that exactly
  // the elements they encode change.
  const int8_t sc[16] = {-128, 127, 1, -1, 5, -7, 64, -64, 3, 2, -3, 100, -100, 0, 9, -9};
  Bytes b(210);
  for (int j = 0; j < 16; j++) b[192 + j] = (uint8_t)sc[j];
  put16(b, 208, 0x3400);  // d = 0.25
  std::vector<float> want(256);
  for (int e = 0; e < 256; e++) want[e] = 0.25f * (float)sc[e / 16] * -32.0f;
  expect_all(want, dequant(Type::Q6_K, b, 256), "Q6_K zero bits");

  // ql[104] = 0x75: half 1 (bytes 64..127), offset 40 = 32 + 8 -> l = 8, odd quarter.
  //   low nibble 5 -> quarter 1: element 128 + 32 + 8 = 168 (sub-block 10, scale -3): q = 5 - 32 = -27
  //   high nibble 7 -> quarter 3: element 128 + 96 + 8 = 232 (sub-block 14, scale 9): q = 7 - 32 = -25
  b[104] = 0x75;
  want[168] = 0.25f * -3.0f * -27.0f;  // 20.25
  want[232] = 0.25f * 9.0f * -25.0f;   // -56.25
  // qh[128 + 32 + 8] = qh[40] (half 1, l = 8) = 0b11'10'01'00:
  //   bits 0-1 = 0 -> element 136 (quarter 0) unchanged high part: low nibble of ql[72] = 0 -> q = -32
  //   bits 2-3 = 1 -> element 168: q = 5 | 1 << 4 = 21 - 32 = -11
  //   bits 4-5 = 2 -> element 200 (quarter 2, sub-block 12, scale -100): q = 0 | 2 << 4 = 32 - 32 = 0
  //   bits 6-7 = 3 -> element 232: q = 7 | 3 << 4 = 55 - 32 = 23
  b[128 + 40] = 0xE4;
  want[168] = 0.25f * -3.0f * -11.0f;  // 8.25
  want[200] = 0.25f * -100.0f * 0.0f;  // -0
  want[232] = 0.25f * 9.0f * 23.0f;    // 51.75
  // ql[15] = 0xF3: half 0, l = 15, even quarters: element 15 (sub-block 0, scale -128) q = 3 - 32
  //   and element 64 + 15 = 79 (sub-block 4, scale 5) q = 15 - 32.
  b[15] = 0xF3;
  want[15] = 0.25f * -128.0f * -29.0f;  // 928
  want[79] = 0.25f * 5.0f * -17.0f;     // -21.25
  // qh[31] = 0xFF: half 0, l = 31: every quarter gets high bits 3 -> elements 31, 63, 95, 127.
  b[128 + 31] = 0xFF;
  // Their low nibbles stay 0, so q = (0 | 3 << 4) - 32 = 16.
  want[31] = 0.25f * 127.0f * 16.0f;   // sub-block 1 (scale 127): 508
  want[63] = 0.25f * -1.0f * 16.0f;    // sub-block 3 (scale -1): -4
  want[95] = 0.25f * -7.0f * 16.0f;    // sub-block 5 (scale -7): -28
  want[127] = 0.25f * -64.0f * 16.0f;  // sub-block 7 (scale -64): -256
  expect_all(want, dequant(Type::Q6_K, b, 256), "Q6_K probes");
  EXPECT_EQ(8.25f, want[168]);
  EXPECT_EQ(51.75f, want[232]);
}

TEST(DequantHand, Q8_K) {
  // float d at 0, int8 qs[256] at 4, int16 bsums[16] at 260 (ignored when dequantizing).
  Bytes b(292);
  const uint8_t d_bytes[4] = {0x00, 0x00, 0x00, 0x3E};  // 0x3E000000 = 0.125f
  std::memcpy(b.data(), d_bytes, 4);
  for (int j = 0; j < 256; j++) b[4 + j] = (uint8_t)(int8_t)(j - 128);
  for (int k = 0; k < 32; k++) b[260 + k] = 0x77;
  std::vector<float> want(256);
  for (int j = 0; j < 256; j++) want[j] = 0.125f * (float)(j - 128);  // -16 ... 15.875
  expect_all(want, dequant(Type::Q8_K, b, 256), "Q8_K");
}

TEST(DequantHand, IQ4_NL) {
  // d (F16), qs[16]; x = d * table[nibble], table = -127 -104 -83 -65 -49 -35 -22 -10 1 13 25 38 53 69 89
  // 113.
  Bytes b(18);
  put16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; j++) b[2 + j] = (uint8_t)(j | ((15 - j) << 4));
  const float half_table[16] = {-63.5, -52, -41.5, -32.5, -24.5, -17.5, -11,  -5,
                                0.5,   6.5, 12.5,  19,    26.5,  34.5,  44.5, 56.5};
  std::vector<float> want(32);
  for (int j = 0; j < 16; j++) {
    want[j] = half_table[j];
    want[16 + j] = half_table[15 - j];
  }
  expect_all(want, dequant(Type::IQ4_NL, b, 32), "IQ4_NL");
}

TEST(DequantHand, MXFP4) {
  // e (e8m0) at 0, qs[16] at 1. Nibble = s.ee.m (e2m1): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6;
  // x = 2^(e - 127) * e2m1. Element j = low nibble of qs[j], j + 16 = high nibble.
  Bytes b(17);
  b[0] = 127;  // scale 1
  for (int j = 0; j < 16; j++) b[1 + j] = (uint8_t)(j | ((15 - j) << 4));
  const float e2m1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0f, -0.5, -1, -1.5, -2, -3, -4, -6};
  std::vector<float> want(32);
  for (int j = 0; j < 16; j++) {
    want[j] = e2m1[j];
    want[16 + j] = e2m1[15 - j];
  }
  // Nibble 8 is "-0" in e2m1; ggml's table stores it as integer 0, so it dequantizes to +0.
  want[8] = 0.0f;
  want[16 + 7] = 0.0f;
  expect_all(want, dequant(Type::MXFP4, b, 32), "MXFP4 e=127");

  // e = 130: scale 8. Nibble 7 (6) -> 48, nibble 0xD (-3) -> -24.
  b[0] = 130;
  b[1] = 0xD7;
  std::vector<float> y = dequant(Type::MXFP4, b, 32);
  expect_same(48.0f, y[0], "MXFP4 e=130", 0);
  expect_same(-24.0f, y[16], "MXFP4 e=130", 16);

  // Extremes. e = 0: scale 2^-127 (a float subnormal): 0.5 * 2^-127 = 2^-128, 6 * 2^-127 = 3 * 2^-126.
  b[0] = 0;
  b[1] = 0x71;  // element 0: nibble 1 (0.5), element 16: nibble 7 (6)
  b[2] = 0x9A;  // element 1: nibble 0xA (-1), element 17: nibble 9 (-0.5)
  y = dequant(Type::MXFP4, b, 32);
  expect_same(std::ldexp(1.0f, -128), y[0], "MXFP4 e=0", 0);
  expect_same(3.0f * std::ldexp(1.0f, -126), y[16], "MXFP4 e=0", 16);
  expect_same(-std::ldexp(1.0f, -127), y[1], "MXFP4 e=0", 1);
  expect_same(-std::ldexp(1.0f, -128), y[17], "MXFP4 e=0", 17);
  // e = 1: scale 2^-126: 0.5 -> 2^-127.
  b[0] = 1;
  y = dequant(Type::MXFP4, b, 32);
  expect_same(std::ldexp(1.0f, -127), y[0], "MXFP4 e=1", 0);
  // e = 254: scale 2^127: 0.5 -> 2^126; 1 -> 2^127; 6 -> 6 * 2^127 overflows to inf.
  b[0] = 254;
  y = dequant(Type::MXFP4, b, 32);
  expect_same(std::ldexp(1.0f, 126), y[0], "MXFP4 e=254", 0);
  expect_same(-std::ldexp(1.0f, 127), y[1], "MXFP4 e=254", 1);
  expect_same(std::numeric_limits<float>::infinity(), y[16], "MXFP4 e=254", 16);
  // e = 255 (NaN in OCP; ggml computes 2^128 * value): 0.5 -> 2^127, -0.5 -> -2^127, 1 -> -inf.
  b[0] = 255;
  y = dequant(Type::MXFP4, b, 32);
  expect_same(std::ldexp(1.0f, 127), y[0], "MXFP4 e=255", 0);
  expect_same(-std::ldexp(1.0f, 127), y[17], "MXFP4 e=255", 17);
  expect_same(-std::numeric_limits<float>::infinity(), y[1], "MXFP4 e=255", 1);
}

TEST(DequantHand, E8M0Helpers) {
  EXPECT_EQ(1.0f, e8m0_to_fp32(127));
  EXPECT_EQ(0.5f, e8m0_to_fp32_half(127));
  EXPECT_EQ(std::ldexp(1.0f, -127), e8m0_to_fp32(0));
  EXPECT_EQ(std::ldexp(1.0f, -128), e8m0_to_fp32_half(0));
  EXPECT_EQ(std::ldexp(1.0f, -127), e8m0_to_fp32_half(1));
  EXPECT_EQ(std::ldexp(1.0f, 127), e8m0_to_fp32(254));
  EXPECT_EQ(std::ldexp(1.0f, 127), e8m0_to_fp32_half(255));
  EXPECT_TRUE(std::isinf(e8m0_to_fp32(255)));
}

TEST(DequantHand, RowOfSeveralBlocks) {
  // Two Q8_0 blocks back to back: the second starts at byte 34.
  Bytes b(68, 0);
  put16(b, 0, 0x3C00);   // d = 1
  put16(b, 34, 0xC000);  // d = -2
  b[2] = 5;
  b[36] = 5;
  const std::vector<float> y = dequant(Type::Q8_0, b, 64);
  EXPECT_EQ(5.0f, y[0]);
  EXPECT_EQ(-10.0f, y[32]);
}

TEST(DequantErrors, RejectsBadArguments) {
  float out[64];
  const uint8_t in[256] = {};
  EXPECT_THROW(dequantize_row(Type::Q4_0, in, out, 31), Error);
  EXPECT_THROW(dequantize_row(Type::Q4_K, in, out, 32), Error);
  EXPECT_THROW(dequantize_row(Type::I8, in, out, 4), Error);
  EXPECT_THROW(dequantize_row(static_cast<Type>(99), in, out, 4), Error);
  try {
    dequantize_row(Type::Q6_K, in, out, 100);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Q6_K"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hexllm::quant
