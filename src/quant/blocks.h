// Block layouts of the quantized GGUF types, byte for byte as ggml stores them, plus the
// constants and small decoding helpers that kernels need.
// Freestanding (only <stdint.h>/<stddef.h>): the device runtime includes it.
//
// Conventions shared by the 32-element formats (Q4_0, Q4_1, Q5_*, IQ4_NL, MXFP4): byte qs[j]
// holds element j in its low nibble and element j + 16 in its high nibble.
// Scales typed `uint16_t` are IEEE half bit patterns (see base/fp16.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::quant {

inline constexpr int QK4_0 = 32;
inline constexpr int QK4_1 = 32;
inline constexpr int QK5_0 = 32;
inline constexpr int QK5_1 = 32;
inline constexpr int QK8_0 = 32;
inline constexpr int QK8_1 = 32;
inline constexpr int QK4_NL = 32;
inline constexpr int QK_MXFP4 = 32;
inline constexpr int QK_K = 256;         // K-quant super-block
inline constexpr int K_SCALE_SIZE = 12;  // packed 6-bit scales/mins of Q4_K and Q5_K

// x[j] = d * ((nibble j) - 8)
struct block_q4_0 {
  uint16_t d;
  uint8_t qs[QK4_0 / 2];
};

// x[j] = d * (nibble j) + m
struct block_q4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[QK4_1 / 2];
};

// 5-bit q = nibble | (bit j of the little-endian uint32 qh) << 4;  x[j] = d * (q - 16)
struct block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK5_0 / 2];
};

// as Q5_0 but unsigned: x[j] = d * q + m
struct block_q5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[QK5_1 / 2];
};

// x[j] = d * qs[j]
struct block_q8_0 {
  uint16_t d;
  int8_t qs[QK8_0];
};

// as Q8_0, plus s = d * sum(qs) (used by the Q4_1/Q5_1 dot products)
struct block_q8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[QK8_1];
};

// 16 sub-blocks of 16. scales[i]: low nibble scale, high nibble min of sub-block i.
// qs: 2-bit quants; each 128-element half uses 32 bytes, shifts 0,2,4,6 select 32-element groups.
// x = d * sc * q - dmin * m
struct block_q2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16 with signed 6-bit scales (stored + 32) packed into 12 bytes.
// q = 2 low bits from qs (layout as Q2_K) minus 4 unless the hmask bit is set.
// x = d * (scale - 32) * q
struct block_q3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};

// 8 sub-blocks of 32 with 6-bit scales and mins packed into 12 bytes (get_scale_min_k4).
// Each 64-element chunk uses 32 bytes of qs: low nibbles the first 32, high nibbles the next 32.
// x = d * sc * q - dmin * m
struct block_q4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qs[QK_K / 2];
};

// Q4_K plus a fifth bit: bit (2c) of qh[l] for the low-nibble half of chunk c, bit (2c+1) for
// the high-nibble half.
struct block_q5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};

// 16 sub-blocks of 16 with int8 scales. 6-bit q = 4 bits from ql | 2 bits from qh << 4, minus 32.
// Each 128-element half uses 64 bytes of ql and 32 of qh (see dequant.cpp for the exact map).
// x = d * scales[i] * q
struct block_q6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;
};

// Activation format of the K-quant dot products. bsums[i] = sum of qs[16 i .. 16 i + 15].
struct block_q8_K {
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16];
};

// x[j] = d * kIq4nlValues[nibble j]
struct block_iq4_nl {
  uint16_t d;
  uint8_t qs[QK4_NL / 2];
};

// OCP MX FP4: shared e8m0 exponent e, e2m1 elements (bit 3 = sign).
// x[j] = 2^(e - 127) * e2m1(nibble j) = e8m0_to_fp32_half(e) * kMxfp4Values[nibble j]
struct block_mxfp4 {
  uint8_t e;
  uint8_t qs[QK_MXFP4 / 2];
};

static_assert(sizeof(block_q4_0) == 18, "block_q4_0 layout");
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 layout");
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 layout");
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 layout");
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 layout");
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 layout");
static_assert(sizeof(block_q2_K) == 84, "block_q2_K layout");
static_assert(sizeof(block_q3_K) == 110, "block_q3_K layout");
static_assert(sizeof(block_q4_K) == 144, "block_q4_K layout");
static_assert(sizeof(block_q5_K) == 176, "block_q5_K layout");
static_assert(sizeof(block_q6_K) == 210, "block_q6_K layout");
static_assert(sizeof(block_q8_K) == 292, "block_q8_K layout");
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl layout");
static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 layout");
static_assert(offsetof(block_q8_K, bsums) == 260, "block_q8_K layout");
static_assert(offsetof(block_q6_K, d) == 208, "block_q6_K layout");

// IQ4_NL's non-linear 4-bit levels (sorted ascending).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// e2m1 values times 2, so they are integers: index bits s.ee.m -> (-1)^s * {0,.5,1,1.5,2,3,4,6} * 2.
// The factor 2 is taken back by e8m0_to_fp32_half.
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// e8m0: 2^(e - 127); e = 0 is 2^-127 (a float subnormal), e = 255 gives inf here (NaN in OCP).
inline float e8m0_to_fp32(uint8_t e) {
  const uint32_t bits = e == 0 ? 0x00400000u : (uint32_t)e << 23;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

// 2^(e - 128), i.e. half the e8m0 value: pairs with kMxfp4Values. Finite for every e
// (e = 0 -> 2^-128 and e = 1 -> 2^-127 are float subnormals).
inline float e8m0_to_fp32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

// Q4_K/Q5_K: 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes.
// Bytes 0-3: scales 0-3 (low 6 bits); bytes 4-7: mins 0-3 (low 6 bits); bytes 8-11: low nibble
// scale j+4, high nibble min j+4, whose top 2 bits sit in bits 6-7 of bytes j and j+4.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q3_K: 6-bit scale of sub-block j (0..15), stored + 32. Low nibbles: bytes 0-7 hold scales 0-7
// (low nibble) and 8-15 (high nibble); top 2 bits: byte 8 + j % 4, bit pair j / 4.
inline int get_scale_q3_k(int j, const uint8_t* s) {
  const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace hexllm::quant
