// Helpers shared by the HVX kernels (hexagon_hvx*.cpp). Hexagon v67, 128-byte HVX, integer only:
// v67 HVX has no float arithmetic, so every float step (scales, fma per block) runs on the scalar
// core in the order of the generic kernels, which keeps the results bit-identical (vec.h).
//
// One 128-byte vector holds four 32-byte tile vectors ("sections" v = 0..3). After a vrmpy every
// int32 lane i is (section i / 8, row i % 8): the sections are partial sums of the same row over
// different groups and are added together before the per-block float step.
#pragma once

#if defined(__hexagon__)

#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>
#include <stddef.h>
#include <stdint.h>

#include "htp/abi/tiles.h"

#define HVX_INLINE inline __attribute__((always_inline))

namespace hexllm::htp::hvx {

constexpr uint32_t R = kHtpTileRows;

// Reads the n (1..128) bytes at p into the low bytes of a vector with two aligned loads that
// never touch an aligned line holding none of those bytes (an unaligned vmemu may read the next
// line, which can be past the end of a buffer).
HVX_INLINE HVX_Vector loadu(const void* p, uint32_t n) {
  const uintptr_t a = (uintptr_t)p;
  const HVX_Vector lo = *(const HVX_Vector*)(a & ~(uintptr_t)127);
  const HVX_Vector hi = *(const HVX_Vector*)((a + n - 1) & ~(uintptr_t)127);
  return Q6_V_valign_VVR(hi, lo, (uint32_t)a);
}

HVX_INLINE HVX_Vector splat8(uint8_t b) { return Q6_Vb_vsplat_R(b); }
HVX_INLINE HVX_Vector splat16(uint16_t h) { return Q6_Vh_vsplat_R(h); }

// Byte-index vectors for vlut32 and shift-count vectors, built at compile time.
struct alignas(128) ByteVec {
  uint8_t b[128];
};

template <class F>
constexpr ByteVec make_bytes(F f) {
  ByteVec v{};
  for (uint32_t i = 0; i < 128; i++) v.b[i] = f(i);
  return v;
}

HVX_INLINE HVX_Vector vec_of(const ByteVec& v) { return *(const HVX_Vector*)v.b; }

// Byte 32v + 4r + j of a nibble vector holds element j of group 2v (low nibble) and 2v+1 (high
// nibble) of row r: the activation bytes each lane multiplies.
inline constexpr ByteVec kIdxLo = make_bytes([](uint32_t i) { return (uint8_t)(8 * (i / 32) + i % 4); });
inline constexpr ByteVec kIdxHi = make_bytes([](uint32_t i) { return (uint8_t)(8 * (i / 32) + 4 + i % 4); });
// Q8_0 group vectors: section v of the first vector is group v, of the second group 4 + v.
inline constexpr ByteVec kIdxG0 = make_bytes([](uint32_t i) { return (uint8_t)(4 * (i / 32) + i % 4); });
inline constexpr ByteVec kIdxG1 = make_bytes([](uint32_t i) { return (uint8_t)(16 + 4 * (i / 32) + i % 4); });

// vlut32 table: entry e sits in bytes 2e and 2e+1 (both, so the lookup does not depend on
// which of the pair a lane reads). From 32 bytes at the bottom of x.
HVX_INLINE HVX_Vector lut_table(HVX_Vector x) { return Q6_V_lo_W(Q6_W_vshuff_VVR(x, x, -1)); }

HVX_INLINE HVX_Vector lut(HVX_Vector idx, HVX_Vector table) { return Q6_Vb_vlut32_VbVbR(idx, table, 0); }

// The activation operands of one 32-element block: table of its 32 int8 codes.
HVX_INLINE HVX_Vector act_table(const int8_t* q) { return lut_table(loadu(q, 32)); }

// Nibbles of a 128-byte nibble vector as bytes 0..15.
HVX_INLINE HVX_Vector nib_lo(HVX_Vector v) { return Q6_V_vand_VV(v, splat8(0x0F)); }
HVX_INLINE HVX_Vector nib_hi(HVX_Vector v) { return Q6_V_vand_VV(Q6_Vuh_vlsr_VuhR(v, 4), splat8(0x0F)); }

// Sections of 32 bytes: [x0 x0 x0 x0] from the low 32 bytes of x.
HVX_INLINE HVX_Vector rep4(HVX_Vector x) {
  const HVX_Vector x2 = Q6_V_lo_W(Q6_W_vshuff_VVR(x, x, -32));
  return Q6_V_lo_W(Q6_W_vshuff_VVR(x2, x2, -32));
}

// Bit 4 of the 5-bit codes of the four nibble vectors of a chunk5 from its H5 vector (bit i of
// each byte is bit 4 of group i): section v takes bit 2v (low nibbles) and 2v+1 (high nibbles).
inline constexpr ByteVec kH5Shift = make_bytes([](uint32_t i) { return (uint8_t)(i % 2 == 0 ? 2 * (i / 32) : 0); });
HVX_INLINE void h5_bits(const uint8_t* h5, HVX_Vector& lo, HVX_Vector& hi) {
  const HVX_Vector hs = Q6_Vh_vlsr_VhVh(rep4(loadu(h5, 32)), vec_of(kH5Shift));
  lo = Q6_Vh_vasl_VhR(Q6_V_vand_VV(hs, splat8(0x01)), 4);
  hi = Q6_Vh_vasl_VhR(Q6_V_vand_VV(hs, splat8(0x02)), 3);
}

// Adds the four sections of each of s0..s3 (blocks 0..3): lane 8b + r of the result is the sum
// of row r over all sections of block b.
HVX_INLINE HVX_Vector reduce4(HVX_Vector s0, HVX_Vector s1, HVX_Vector s2, HVX_Vector s3) {
  const HVX_VectorPair d01 = Q6_W_vdeal_VVR(s1, s0, -32);
  const HVX_VectorPair d23 = Q6_W_vdeal_VVR(s3, s2, -32);
  const HVX_Vector p01 = Q6_Vw_vadd_VwVw(Q6_V_lo_W(d01), Q6_V_hi_W(d01));
  const HVX_Vector p23 = Q6_Vw_vadd_VwVw(Q6_V_lo_W(d23), Q6_V_hi_W(d23));
  const HVX_VectorPair d = Q6_W_vdeal_VVR(p23, p01, -32);
  return Q6_Vw_vadd_VwVw(Q6_V_lo_W(d), Q6_V_hi_W(d));
}

// Adds the four sections of s: lanes 0..7 hold the row sums.
HVX_INLINE HVX_Vector reduce1(HVX_Vector s) {
  const HVX_Vector h = Q6_Vw_vadd_VwVw(s, Q6_V_vror_VR(s, 64));
  return Q6_Vw_vadd_VwVw(h, Q6_V_vror_VR(h, 32));
}

// Integer lanes handed to the scalar core: HVX has no vector-to-scalar move besides vextract
// (one lane each), so a block's sums go through one aligned store.
struct alignas(128) Lanes {
  int32_t w[32];
};

HVX_INLINE void to_lanes(Lanes& l, HVX_Vector v) { *(HVX_Vector*)l.w = v; }

HVX_INLINE HVX_Vector splat32(uint32_t w) { return Q6_V_vsplat_R(w); }

// A splat made where it is used: the compiler hoists constant vectors out of every loop and keeps
// them live, which costs registers the loop body needs (and then spills); one vsplat is cheaper.
HVX_INLINE HVX_Vector splat32_here(uint32_t w) {
  HVX_Vector v;
  __asm__ volatile("%0 = vsplat(%1)" : "=v"(v) : "r"(w));
  return v;
}

// Exact f16 -> f32 of the low halfword of each word (the bits of fp16_to_fp32, base/fp16.h):
// normal numbers rebias the exponent, exponent 31 (inf, nan) becomes 255, subnormals are
// normalized with a leading-zero count (mant * 2^-24 = 2^(p-24) * 1.f, p = top bit of mant).
HVX_INLINE HVX_Vector f16_to_f32_words(HVX_Vector h) {
  const HVX_Vector zero = Q6_V_vzero();
  const HVX_Vector em = Q6_V_vand_VV(h, splat32_here(0x7fff));
  const HVX_Vector sign = Q6_Vw_vasl_VwR(Q6_V_vxor_VV(h, em), 16);
  const HVX_Vector e = Q6_Vuw_vlsr_VuwR(em, 10);
  const HVX_Vector bias = splat32_here(112u << 23);
  HVX_Vector norm = Q6_Vw_vadd_VwVw(Q6_Vw_vasl_VwR(em, 13), bias);
  norm = Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VwVw(e, splat32_here(31)), Q6_Vw_vadd_VwVw(norm, bias), norm);
  // Exponent 0: em is the mantissa (1..1023, clz >= 22), p = 31 - clz. Shifted up by clz - 8 it
  // has its top bit at bit 23, which adds one to the exponent field p + 103: (133 - clz) << 23.
  const HVX_Vector clz = Q6_Vuw_vcl0_Vuw(em);
  const HVX_Vector frac = Q6_Vw_vasl_VwVw(em, Q6_Vw_vsub_VwVw(clz, splat32_here(8)));
  HVX_Vector sub = Q6_Vw_vadd_VwVw(Q6_Vw_vasl_VwR(Q6_Vw_vsub_VwVw(splat32_here(133), clz), 23), frac);
  sub = Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VwVw(em, zero), zero, sub);
  return Q6_V_vor_VV(sign, Q6_V_vmux_QVV(Q6_Q_vcmp_eq_VwVw(e, zero), sub, norm));
}

// The 8 f16 values at p + i * stride (i < n <= 4, 16 bytes each) as f32 bits in lanes 8i + r.
// The pieces are merged by two rounds of vshuff (no predicates: there are only four, and using
// them here made the compiler spill).
HVX_INLINE HVX_Vector f16x8_blocks(const uint8_t* p, uint32_t stride, uint32_t n) {
  const HVX_Vector z = Q6_V_vzero();
  const HVX_Vector v0 = loadu(p, 16);
  const HVX_Vector v1 = n > 1 ? loadu(p + stride, 16) : z;
  const HVX_Vector v2 = n > 2 ? loadu(p + 2 * stride, 16) : z;
  const HVX_Vector v3 = n > 3 ? loadu(p + 3 * stride, 16) : z;
  const HVX_Vector v01 = Q6_V_lo_W(Q6_W_vshuff_VVR(v1, v0, -16));
  const HVX_Vector v23 = Q6_V_lo_W(Q6_W_vshuff_VVR(v3, v2, -16));
  const HVX_Vector x = Q6_V_lo_W(Q6_W_vshuff_VVR(v23, v01, -32));
  // Halfword j -> word j (zero upper half).
  return f16_to_f32_words(Q6_V_lo_W(Q6_W_vshuff_VVR(z, x, -2)));
}

HVX_INLINE float lane_f32(const Lanes& l, uint32_t i) {
  float f;
  __builtin_memcpy(&f, &l.w[i], 4);
  return f;
}

// Fused multiply-add on the scalar core (one rounding), as vec/generic.cpp.
HVX_INLINE float fma32(float a, float b, float c) { return __builtin_HEXAGON_F2_sffma(c, a, b); }


// Accumulators of up to 4 activation rows x 8 weight rows, cleared with one vector store: a
// `= {}` becomes a call to memset, and every HVX register is caller-saved.
struct alignas(128) Acc {
  float y[4][R];
  HVX_INLINE void clear() { *(HVX_Vector*)y = Q6_V_vzero(); }
};

}  // namespace hexllm::htp::hvx

#endif  // __hexagon__
