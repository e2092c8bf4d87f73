// x86 micro-kernels over the 8-row tiles, included by one source file per instruction set:
// x86_avx2.cpp (VEC_DOT 0: vpmaddubsw), x86_avxvnni.cpp (VEC_DOT 1: VEX vpdpbusd/vpdpwssd on
// ymm), x86_avx512.cpp (VEC_DOT 2: the EVEX forms, plus its own zmm GEMM). Each file is
// compiled with its own target flags and only called after htp_vec_select() has seen them
// (the rest of the binary stays plain x86-64); everything here has internal linkage.
//
// Integer dot products multiply unsigned weight bytes by signed activation bytes. The weight
// codes are unsigned (zero-points go through the activation block sums) except Q8_0, IQ4_NL
// and MXFP4 whose values are signed: vpmaddubsw moves their sign onto the activation
// (abs/sign); vpdpbusd adds 128 to them instead (xor 0x80) and takes 128 * sum(a) off the
// block sum, which is exact. One 32-byte group vector = 8 rows x 4 K, so every lane of every
// vector is one weight row: lanes accumulate in K order, exactly like the generic kernel,
// which makes the results bit-identical (see vec.h).
//
// int16 headroom of the vpmaddubsw path (activations |a| <= 127, pair sums of maddubs):
//   4-bit codes  2*15*127  = 3810  -> 8 groups add up to 30480 before widening
//   5-bit codes  2*31*127  = 7874  -> 4 groups (31496)
//   6-bit codes  2*63*127  = 16002 -> 2 groups (32004)
//   MXFP4        2*12*127  = 3048  -> 8 groups;  Q8_0/IQ4_NL 2*128*127 = 32512 -> 1 group
// vpdpbusd accumulates in int32 directly; K-quants keep the int16 sums for their scales
// (vpdpwssd multiplies and adds them in one step).
#pragma once

#include <immintrin.h>

#include "htp/vec/vec.h"
#include "quant/blocks.h"

#ifndef VEC_DOT
#error "define VEC_DOT (0 AVX2, 1 AVX-VNNI, 2 AVX-512 VNNI) before including x86_kernels.h"
#endif
#define VEC_INLINE inline __attribute__((always_inline))
#ifndef VEC_GEMV_STREAMS
#define VEC_GEMV_STREAMS 2
#endif
#ifndef VEC_PREFETCH
#define VEC_PREFETCH 1024
#endif

namespace hexllm::htp {
namespace {

constexpr uint32_t R = kHtpTileRows;

VEC_INLINE __m256i load(const uint8_t* p) { return _mm256_loadu_si256((const __m256i*)p); }
VEC_INLINE __m128i load128(const uint8_t* p) { return _mm_loadu_si128((const __m128i*)p); }

VEC_INLINE __m256i bcast4(const void* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Shift 16-bit lanes left by S (right by -S): used on byte data with a mask afterwards.
template <int S>
VEC_INLINE __m256i shl16(__m256i x) {
  if constexpr (S > 0)
    return _mm256_slli_epi16(x, S);
  else if constexpr (S < 0)
    return _mm256_srli_epi16(x, -S);
  else
    return x;
}

VEC_INLINE __m256 f16x8(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }

VEC_INLINE __m256 e8m0_half_x8(const uint8_t* p) {
  int64_t v;
  __builtin_memcpy(&v, p, 8);
  const __m256i e = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(v));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i tiny = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i is_tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, tiny, is_tiny));
}

// Replicate sub-block value h of the pair layout (16 bytes, byte 2r+h) into both int16 halves
// of row r's 32-bit lane.
template <int H, bool Signed>
VEC_INLINE __m256i pair_rep(const uint8_t* p) {
  const __m256i x = Signed ? _mm256_cvtepi8_epi16(load128(p)) : _mm256_cvtepu8_epi16(load128(p));
  // Per 128-bit lane (4 rows): bytes 4r'+2H, 4r'+2H+1, twice for each row r'.
  const __m256i rows = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13,  //
                                        0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
  const __m256i idx = _mm256_add_epi8(rows, _mm256_set1_epi8(2 * H));
  return _mm256_shuffle_epi8(x, idx);
}

VEC_INLINE __m256i nib_lo(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }
VEC_INLINE __m256i nib_hi(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}

// Bit 4 of group G's codes from an H5 vector (bit G of each byte).
template <int G>
VEC_INLINE __m256i h5_bits(__m256i h) {
  return _mm256_and_si256(shl16<4 - G>(h), _mm256_set1_epi8(0x10));
}
// Bits 4,5 of group I (0..3) from an H6 vector (bits 2I, 2I+1 of each byte).
template <int I>
VEC_INLINE __m256i h6_bits(__m256i h) {
  return _mm256_and_si256(shl16<4 - 2 * I>(h), _mm256_set1_epi8(0x30));
}

VEC_INLINE __m256i madd1(__m256i p) { return _mm256_madd_epi16(p, _mm256_set1_epi16(1)); }

constexpr bool kVnni = VEC_DOT != 0;
// acc + per 32-bit lane sum of 4 u8*s8 products (vpdpbusd), and of 2 s16*s16 (vpdpwssd; the
// AVX2 form is vpmaddwd + vpaddd). Both wrap, never saturate: exact while sums fit in int32.
VEC_INLINE __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
#if VEC_DOT == 1
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#elif VEC_DOT == 2
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  (void)u, (void)s;
  return acc;  // unused: the AVX2 path goes through vpmaddubsw
#endif
}
VEC_INLINE __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
#if VEC_DOT == 1
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#elif VEC_DOT == 2
  return _mm256_dpwssd_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// Software prefetch of each weight stream, kPrefetch bytes ahead: the hardware prefetchers alone
// left GEMV well under the read bandwidth on an early VM (Q6_K at 1/3 of it). With two streams
// (gemv_q) 1 KiB ahead measured best on a Zen 3 (4 KiB: 3-8% slower generation; none: K-quants
// 15-19% slower, their compute no longer hides the misses). Prefetching past the end of the
// matrix is harmless. Only GEMV (one activation row) prefetches: GEMM callers keep their weight
// chunk in L2. The hint is non-temporal: decode reads each weight line once, and lines that
// went through L2 would push out what the next ops reuse (activations, KV rows, logits) and be
// written into the victim L3 on their way out (measured on a Zen 5 only: DESIGN §10,
// "Non-temporal weight prefetch").
constexpr uint32_t kPrefetch = VEC_PREFETCH;
VEC_INLINE void prefetch_lines(const uint8_t* p, uint32_t bytes) {
  for (uint32_t off = 0; off < bytes; off += 64) _mm_prefetch((const char*)p + off, _MM_HINT_NTA);
}
template <uint32_t Bytes>
VEC_INLINE void prefetch_block(const uint8_t* blk) {
  prefetch_lines(blk + kPrefetch, Bytes);
}

// The first kPrefetch bytes of a weight stream, which the in-loop prefetch (kPrefetch past each
// block) never reaches: without them every GEMV call, so every decode unit, starts its second
// stream on demand misses. On a Zen 5 units of 4-112 row tiles of a [896 x 896] Q4_0 streamed
// 1.2-1.6x faster from DRAM with them, on its avx2 path 1.02-1.36x (bench/vec, DESIGN §10).
VEC_INLINE void prefetch_head(const uint8_t* stream) { prefetch_lines(stream, kPrefetch); }

// kZero * sum(a) in every lane, from a broadcast load (no scalar multiply and move per column).
template <int Zero>
VEC_INLINE __m256i zero_point(const int32_t* sum) {
  static_assert(Zero == 8 || Zero == 16 || Zero == 128, "power-of-two zero-points");
  const __m256i s = _mm256_castps_si256(_mm256_broadcast_ss((const float*)sum));
  return _mm256_slli_epi32(s, Zero == 8 ? 3 : Zero == 16 ? 4 : 7);
}

// Zero-point the kernels take off each block sum: the format's, or the +128 offset vpdpbusd
// puts on signed values.
template <class P>
constexpr int kZeroOf = kVnni && P::kSigned ? 128 : P::kZero;

// Pins a value in a register at this point. GCC otherwise hoists all the products of a block
// and re-associates the int16 sums into trees, which needs more than 16 registers and spills.
VEC_INLINE void pin(__m256i& x) { __asm__("" : "+x"(x)); }

// ---- 32-element block types ----------------------------------------------------------------
//
// Policy: kTile, kSigned (values signed -> sign trick), kI16 (groups per int16 sum), kZero
// (zero-point applied as -kZero * sum(a)), kMin (x = d*q + m), groups<V>() giving the value
// vectors of groups 2V and 2V+1, scale() the 8 row scales.

struct PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_0_X8;
  static constexpr bool kSigned = false, kMin = false;
  static constexpr int kI16 = 8, kZero = 8;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b, __m256i& g0, __m256i& g1) {
    const __m256i v = load(b + 32 * V);
    g0 = nib_lo(v);
    g1 = nib_hi(v);
  }
  static VEC_INLINE __m256 scale(const uint8_t* b) { return f16x8(b + 128); }
  static VEC_INLINE __m256 minv(const uint8_t*) { return _mm256_setzero_ps(); }
};

struct PQ4_1 : PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_1_X8;
  static constexpr bool kMin = true;
  static constexpr int kZero = 0;
  static VEC_INLINE __m256 minv(const uint8_t* b) { return f16x8(b + 144); }
};

struct PQ5_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_0_X8;
  static constexpr bool kSigned = false, kMin = false;
  static constexpr int kI16 = 4, kZero = 16;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b, __m256i& g0, __m256i& g1) {
    const __m256i v = load(b + 32 * V);
    const __m256i h = load(b + 128);
    g0 = _mm256_or_si256(nib_lo(v), h5_bits<2 * V>(h));
    g1 = _mm256_or_si256(nib_hi(v), h5_bits<2 * V + 1>(h));
  }
  static VEC_INLINE __m256 scale(const uint8_t* b) { return f16x8(b + 160); }
  static VEC_INLINE __m256 minv(const uint8_t*) { return _mm256_setzero_ps(); }
};

struct PQ5_1 : PQ5_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_1_X8;
  static constexpr bool kMin = true;
  static constexpr int kZero = 0;
  static VEC_INLINE __m256 minv(const uint8_t* b) { return f16x8(b + 176); }
};

struct PQ8_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q8_0_X8;
  static constexpr bool kSigned = true, kMin = false;
  static constexpr int kI16 = 1, kZero = 0;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b, __m256i& g0, __m256i& g1) {
    g0 = load(b + 64 * V);
    g1 = load(b + 64 * V + 32);
  }
  static VEC_INLINE __m256 scale(const uint8_t* b) { return f16x8(b + 256); }
  static VEC_INLINE __m256 minv(const uint8_t*) { return _mm256_setzero_ps(); }
};

template <const int8_t (&Table)[16]>
VEC_INLINE __m256i lut16(__m256i codes) {
  const __m128i t = _mm_loadu_si128((const __m128i*)Table);
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(t), codes);
}

struct PIQ4_NL {
  static constexpr uint32_t kTile = HTP_TILE_IQ4_NL_X8;
  static constexpr bool kSigned = true, kMin = false;
  static constexpr int kI16 = 1, kZero = 0;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b, __m256i& g0, __m256i& g1) {
    const __m256i v = load(b + 32 * V);
    g0 = lut16<quant::kIq4nlValues>(nib_lo(v));
    g1 = lut16<quant::kIq4nlValues>(nib_hi(v));
  }
  static VEC_INLINE __m256 scale(const uint8_t* b) { return f16x8(b + 128); }
  static VEC_INLINE __m256 minv(const uint8_t*) { return _mm256_setzero_ps(); }
};

struct PMXFP4 {
  static constexpr uint32_t kTile = HTP_TILE_MXFP4_X8;
  static constexpr bool kSigned = true, kMin = false;
  static constexpr int kI16 = 8, kZero = 0;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b, __m256i& g0, __m256i& g1) {
    const __m256i v = load(b + 32 * V);
    g0 = lut16<quant::kMxfp4Values>(nib_lo(v));
    g1 = lut16<quant::kMxfp4Values>(nib_hi(v));
  }
  static VEC_INLINE __m256 scale(const uint8_t* b) { return e8m0_half_x8(b + 128); }
  static VEC_INLINE __m256 minv(const uint8_t*) { return _mm256_setzero_ps(); }
};

// Kernels below work on NT row tiles x NC activation rows at once; lane index t * NC + c.
// GEMM uses NT x NC = 2 x 3 (32-element blocks) or 1 x 4 (K-quants), see gemm_q. GEMV uses NC=1
// and NT = 2 with the two tiles half the range apart (gemv_q).

// Per-lane int16 partial sums of groups 2V, 2V+1; widened to int32 every P::kI16 groups.
template <class P, int NT, int NC, int V>
VEC_INLINE void step32(const uint8_t* const* blk, const htp_act_q8_32* const* a, uint32_t b, __m256i* s16,
                       __m256i* s32) {
  __m256i g0[NT], g1[NT], u0[NT], u1[NT];
  for (int t = 0; t < NT; t++) {
    P::template groups<V>(blk[t], g0[t], g1[t]);
    if constexpr (P::kSigned && kVnni) {
      u0[t] = _mm256_xor_si256(g0[t], _mm256_set1_epi8(-128));
      u1[t] = _mm256_xor_si256(g1[t], _mm256_set1_epi8(-128));
    } else {
      u0[t] = P::kSigned ? _mm256_abs_epi8(g0[t]) : g0[t];
      u1[t] = P::kSigned ? _mm256_abs_epi8(g1[t]) : g1[t];
    }
  }
  for (int c = 0; c < NC; c++) {
    const __m256i b0 = bcast4(a[c][b].q + 8 * V), b1 = bcast4(a[c][b].q + 8 * V + 4);
    for (int t = 0; t < NT; t++) {
      const int l = t * NC + c;
      if constexpr (kVnni) {
        s32[l] = dpbusd(dpbusd(s32[l], u0[t], b0), u1[t], b1);
        pin(s32[l]);
      } else {
        __m256i a0 = b0, a1 = b1;
        if constexpr (P::kSigned) {
          a0 = _mm256_sign_epi8(a0, g0[t]);
          a1 = _mm256_sign_epi8(a1, g1[t]);
        }
        const __m256i p0 = _mm256_maddubs_epi16(u0[t], a0), p1 = _mm256_maddubs_epi16(u1[t], a1);
        if constexpr (P::kI16 == 1) {
          s32[l] = _mm256_add_epi32(s32[l], _mm256_add_epi32(madd1(p0), madd1(p1)));
          pin(s32[l]);
        } else {
          const __m256i p = _mm256_add_epi16(p0, p1);
          constexpr bool first = (2 * V) % P::kI16 == 0;
          constexpr bool last = (2 * V + 2) % P::kI16 == 0;
          s16[l] = first ? p : _mm256_add_epi16(s16[l], p);
          pin(s16[l]);
          if constexpr (last) s32[l] = _mm256_add_epi32(s32[l], madd1(s16[l]));
        }
      }
    }
  }
}

template <class P, int NT, int NC>
VEC_INLINE void tile32(const uint8_t* tile, size_t row_bytes, const htp_act_q8_32* const* a, uint32_t nb,
                       __m256* acc) {
  constexpr uint32_t kBB = htp_tile_info(P::kTile).block_bytes;
  for (uint32_t b = 0; b < nb; b++) {
    const uint8_t* blk[NT];
    for (int t = 0; t < NT; t++) {
      blk[t] = tile + t * row_bytes + (size_t)b * kBB;
      if constexpr (NC == 1) prefetch_block<kBB>(blk[t]);
    }
    __m256i s16[NT * NC], s32[NT * NC];
    for (int l = 0; l < NT * NC; l++) s32[l] = _mm256_setzero_si256();
    step32<P, NT, NC, 0>(blk, a, b, s16, s32);
    step32<P, NT, NC, 1>(blk, a, b, s16, s32);
    step32<P, NT, NC, 2>(blk, a, b, s16, s32);
    step32<P, NT, NC, 3>(blk, a, b, s16, s32);
    for (int t = 0; t < NT; t++) {
      const __m256 dw = P::scale(blk[t]);
      for (int c = 0; c < NC; c++) {
        const int l = t * NC + c;
        __m256i isum = s32[l];
        if constexpr (kZeroOf<P> != 0) isum = _mm256_sub_epi32(isum, zero_point<kZeroOf<P>>(&a[c][b].sum));
        acc[l] =
            _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(a[c][b].d)), _mm256_cvtepi32_ps(isum), acc[l]);
        if constexpr (P::kMin)
          acc[l] = _mm256_fmadd_ps(P::minv(blk[t]), _mm256_set1_ps(a[c][b].d * (float)a[c][b].sum), acc[l]);
      }
    }
  }
}

// ---- K-quants (256-element super-blocks) ---------------------------------------------------

// Q4_K / Q5_K: 8 sub-blocks of 32 (4 nibble vectors each), scales and mins in pair layout.
template <bool Q5>
struct PK45 {
  static constexpr uint32_t kTile = Q5 ? HTP_TILE_Q5_K_X8 : HTP_TILE_Q4_K_X8;
  static constexpr uint32_t kSc = Q5 ? 1280 : 1024, kMn = kSc + 64, kD = kSc + 128, kDmin = kSc + 144;
};

template <bool Q5, int NT, int NC, int V>
VEC_INLINE void stepk45(const uint8_t* const* sb, uint32_t s, const htp_act_q8_256* const* a, uint32_t b,
                        __m256i* s16, __m256i* s32, const __m256i* sc) {
  __m256i g0[NT], g1[NT];
  for (int t = 0; t < NT; t++) {
    // Sub-block s: 4 nibble vectors (+ the H5 vector for Q5_K) at s * kChunk.
    constexpr uint32_t kChunk = Q5 ? 160 : 128;
    const __m256i v = load(sb[t] + kChunk * s + 32 * V);
    g0[t] = nib_lo(v);
    g1[t] = nib_hi(v);
    if constexpr (Q5) {
      const __m256i h = load(sb[t] + kChunk * s + 128);
      g0[t] = _mm256_or_si256(g0[t], h5_bits<2 * V>(h));
      g1[t] = _mm256_or_si256(g1[t], h5_bits<2 * V + 1>(h));
    }
  }
  constexpr int kI16 = Q5 ? 4 : 8;
  for (int c = 0; c < NC; c++) {
    const int8_t* q = a[c][b].q + 32 * s + 8 * V;
    const __m256i b0 = bcast4(q), b1 = bcast4(q + 4);
    for (int t = 0; t < NT; t++) {
      const int l = t * NC + c;
      const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(g0[t], b0), _mm256_maddubs_epi16(g1[t], b1));
      constexpr bool first = (2 * V) % kI16 == 0;
      constexpr bool last = (2 * V + 2) % kI16 == 0;
      s16[l] = first ? p : _mm256_add_epi16(s16[l], p);
      pin(s16[l]);
      if constexpr (last) s32[l] = dpwssd(s32[l], s16[l], sc[t]);
    }
  }
}

template <bool Q5, int NT, int NC, int H>
VEC_INLINE void subk45(const uint8_t* const* sb, uint32_t p, const htp_act_q8_256* const* a, uint32_t b,
                       __m256i* s32) {
  using P = PK45<Q5>;
  const uint32_t s = 2 * p + H;
  __m256i sc[NT], s16[NT * NC];
  for (int t = 0; t < NT; t++) sc[t] = pair_rep<H, false>(sb[t] + P::kSc + 16 * p);
  stepk45<Q5, NT, NC, 0>(sb, s, a, b, s16, s32, sc);
  stepk45<Q5, NT, NC, 1>(sb, s, a, b, s16, s32, sc);
  stepk45<Q5, NT, NC, 2>(sb, s, a, b, s16, s32, sc);
  stepk45<Q5, NT, NC, 3>(sb, s, a, b, s16, s32, sc);
}

template <bool Q5, int NT, int NC>
VEC_INLINE void tilek45(const uint8_t* tile, size_t row_bytes, const htp_act_q8_256* const* a, uint32_t nb,
                        __m256* acc) {
  using P = PK45<Q5>;
  constexpr uint32_t kBB = htp_tile_info(P::kTile).block_bytes;
  for (uint32_t b = 0; b < nb; b++) {
    const uint8_t* sb[NT];
    for (int t = 0; t < NT; t++) {
      sb[t] = tile + t * row_bytes + (size_t)b * kBB;
      if constexpr (NC == 1) prefetch_block<kBB>(sb[t]);
    }
    __m256i s32[NT * NC], mins[NT * NC];
    for (int l = 0; l < NT * NC; l++) s32[l] = mins[l] = _mm256_setzero_si256();
    for (uint32_t p = 0; p < 4; p++) {
      subk45<Q5, NT, NC, 0>(sb, p, a, b, s32);
      subk45<Q5, NT, NC, 1>(sb, p, a, b, s32);
      for (int t = 0; t < NT; t++) {
        const __m256i mn = _mm256_cvtepu8_epi16(load128(sb[t] + P::kMn + 16 * p));
        for (int c = 0; c < NC; c++)
          mins[t * NC + c] = dpwssd(mins[t * NC + c], mn, bcast4(a[c][b].sum32 + 2 * p));
      }
    }
    for (int t = 0; t < NT; t++) {
      const __m256 d = f16x8(sb[t] + P::kD), dmin = f16x8(sb[t] + P::kDmin);
      for (int c = 0; c < NC; c++) {
        const int l = t * NC + c;
        const __m256 da = _mm256_set1_ps(a[c][b].d);
        acc[l] = _mm256_fmadd_ps(_mm256_mul_ps(d, da), _mm256_cvtepi32_ps(s32[l]), acc[l]);
        acc[l] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, da), _mm256_cvtepi32_ps(mins[l]), acc[l]);
      }
    }
  }
}

// Q6_K: 16 sub-blocks of 16 = nibble vectors 2u, 2u+1 plus an H6 vector; int8 scales in pairs.
template <int NT, int NC, int H>
VEC_INLINE void subk6(const uint8_t* const* sb, uint32_t p, const htp_act_q8_256* const* a, uint32_t b,
                      __m256i* s32) {
  const uint32_t u = 2 * p + H;
  __m256i sc[NT], g0[NT], g1[NT], g2[NT], g3[NT];
  for (int t = 0; t < NT; t++) {
    sc[t] = pair_rep<H, true>(sb[t] + 1536 + 16 * p);
    // Sub-block u: nibble vectors 2u, 2u+1 then the H6 vector, 96 bytes.
    const __m256i v0 = load(sb[t] + 96 * u), v1 = load(sb[t] + 96 * u + 32), h = load(sb[t] + 96 * u + 64);
    g0[t] = _mm256_or_si256(nib_lo(v0), h6_bits<0>(h));
    g1[t] = _mm256_or_si256(nib_hi(v0), h6_bits<1>(h));
    g2[t] = _mm256_or_si256(nib_lo(v1), h6_bits<2>(h));
    g3[t] = _mm256_or_si256(nib_hi(v1), h6_bits<3>(h));
  }
  for (int c = 0; c < NC; c++) {
    const int8_t* q = a[c][b].q + 16 * u;
    const __m256i b0 = bcast4(q), b1 = bcast4(q + 4), b2 = bcast4(q + 8), b3 = bcast4(q + 12);
    for (int t = 0; t < NT; t++) {
      const int l = t * NC + c;
      const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(g0[t], b0), _mm256_maddubs_epi16(g1[t], b1));
      const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(g2[t], b2), _mm256_maddubs_epi16(g3[t], b3));
      s32[l] = kVnni ? dpwssd(dpwssd(s32[l], p01, sc[t]), p23, sc[t])
                     : _mm256_add_epi32(s32[l], _mm256_add_epi32(_mm256_madd_epi16(p01, sc[t]),
                                                                 _mm256_madd_epi16(p23, sc[t])));
      pin(s32[l]);
    }
  }
}

template <int NT, int NC>
VEC_INLINE void tilek6(const uint8_t* tile, size_t row_bytes, const htp_act_q8_256* const* a, uint32_t nb,
                       __m256* acc) {
  constexpr uint32_t kBB = htp_tile_info(HTP_TILE_Q6_K_X8).block_bytes;
  for (uint32_t b = 0; b < nb; b++) {
    const uint8_t* sb[NT];
    for (int t = 0; t < NT; t++) {
      sb[t] = tile + t * row_bytes + (size_t)b * kBB;
      if constexpr (NC == 1) prefetch_block<kBB>(sb[t]);
    }
    __m256i s32[NT * NC], corr[NT * NC];
    for (int l = 0; l < NT * NC; l++) s32[l] = corr[l] = _mm256_setzero_si256();
    for (uint32_t p = 0; p < 8; p++) {
      subk6<NT, NC, 0>(sb, p, a, b, s32);
      subk6<NT, NC, 1>(sb, p, a, b, s32);
      for (int t = 0; t < NT; t++) {
        const __m256i sc = _mm256_cvtepi8_epi16(load128(sb[t] + 1536 + 16 * p));
        for (int c = 0; c < NC; c++)
          corr[t * NC + c] = dpwssd(corr[t * NC + c], sc, bcast4(a[c][b].sum16 + 2 * p));
      }
    }
    for (int t = 0; t < NT; t++) {
      const __m256 d = f16x8(sb[t] + 1664);
      for (int c = 0; c < NC; c++) {
        const int l = t * NC + c;
        const __m256i isum = _mm256_sub_epi32(s32[l], _mm256_slli_epi32(corr[l], 5));
        acc[l] =
            _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(a[c][b].d)), _mm256_cvtepi32_ps(isum), acc[l]);
      }
    }
  }
}

// ---- drivers -------------------------------------------------------------------------------

template <uint32_t T, int NT, int NC, class A>
VEC_INLINE void tile_any(const uint8_t* tile, size_t rb, const A* const* a, uint32_t nb, __m256* acc) {
  if constexpr (T == HTP_TILE_Q4_0_X8) tile32<PQ4_0, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q4_1_X8) tile32<PQ4_1, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q5_0_X8) tile32<PQ5_0, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q5_1_X8) tile32<PQ5_1, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q8_0_X8) tile32<PQ8_0, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_IQ4_NL_X8) tile32<PIQ4_NL, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_MXFP4_X8) tile32<PMXFP4, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q4_K_X8) tilek45<false, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q5_K_X8) tilek45<true, NT, NC>(tile, rb, a, nb, acc);
  if constexpr (T == HTP_TILE_Q6_K_X8) tilek6<NT, NC>(tile, rb, a, nb, acc);
}

VEC_INLINE void store_rows(float* dst, __m256 v, uint32_t n) {
  if (n >= R) {
    _mm256_storeu_ps(dst, v);
  } else {
    float tmp[R];
    _mm256_storeu_ps(tmp, v);
    for (uint32_t i = 0; i < n; i++) dst[i] = tmp[i];
  }
}

template <bool Small>
struct act_of {
  using type = htp_act_q8_32;
};
template <>
struct act_of<false> {
  using type = htp_act_q8_256;
};
template <uint32_t T>
using act_t = typename act_of<htp_tile_info(T).act == HTP_ACT_Q8_32>::type;

// NC activation rows against all row tiles, NT tiles at a time (then single tiles at the end).
template <uint32_t T, int NT, int NC>
void gemm_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride,
               uint32_t k, uint32_t nrows) {
  using A = act_t<T>;
  const uint32_t nb = k / htp_tile_info(T).kblock;
  const size_t rb = htp_tile_row_bytes(T, k);
  const A* a[NC];
  for (int c = 0; c < NC; c++) a[c] = (const A*)(act + c * act_stride);
  uint32_t t = 0;
  if constexpr (NT > 1) {
    for (; (t + NT) * R <= nrows; t += NT) {
      __m256 acc[NT * NC];
      for (int l = 0; l < NT * NC; l++) acc[l] = _mm256_setzero_ps();
      tile_any<T, NT, NC>(w + t * rb, rb, a, nb, acc);
      for (int i = 0; i < NT; i++)
        for (int c = 0; c < NC; c++) _mm256_storeu_ps(dst + c * dst_stride + (t + i) * R, acc[i * NC + c]);
    }
  }
  for (; t * R < nrows; t++) {
    __m256 acc[NC];
    for (int c = 0; c < NC; c++) acc[c] = _mm256_setzero_ps();
    tile_any<T, 1, NC>(w + t * rb, rb, a, nb, acc);
    for (int c = 0; c < NC; c++) store_rows(dst + c * dst_stride + t * R, acc[c], nrows - t * R);
  }
}

// GEMV in kGemvStreams weight streams: with 2, the row tiles split in halves and tile t is read
// with tile t + half (the two lanes of NT = 2; their distance is the halves'), so the hardware
// prefetchers follow two streams half a weight unit apart. On a Zen 3 (AVX2) one core read
// 64 KiB-apart streams 1.5x faster than a single one (26 vs 17 GB/s), and generation ran
// 1.05-1.27x faster (DESIGN §10). An odd last tile, or every tile with one stream, goes alone.
constexpr uint32_t kGemvStreams = VEC_GEMV_STREAMS;
static_assert(kGemvStreams == 1 || kGemvStreams == 2, "GEMV reads one or two weight streams");

template <uint32_t T>
void gemv_q(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  const size_t rb = htp_tile_row_bytes(T, k);
  const uint32_t nb = k / htp_tile_info(T).kblock;
  const uint32_t half = kGemvStreams == 2 ? (nrows + R - 1) / R / 2 : 0;
  const act_t<T>* a[1] = {(const act_t<T>*)act};
  prefetch_head(w);
  if (half != 0) prefetch_head(w + half * rb);
  for (uint32_t t = 0; t < half; t++) {
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    tile_any<T, 2, 1>(w + t * rb, half * rb, a, nb, acc);
    _mm256_storeu_ps(dst + t * R, acc[0]);
    store_rows(dst + (t + half) * R, acc[1], nrows - (t + half) * R);
  }
  if (2 * half * R < nrows)  // the odd last tile (the pairs' second tiles may be partial)
    gemm_cols<T, 1, 1>(w + 2 * half * rb, act, 0, dst + 2 * half * R, 0, k, nrows - 2 * half * R);
}

template <uint32_t T>
void gemm_q(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
            size_t dst_stride, uint32_t k, uint32_t nrows) {
  // Register blocking per family, measured (hot-cache GEMM, K=2048): 32-element blocks gain ~10%
  // from 2 row tiles x 3 columns (weights of 2 tiles share each activation broadcast); K-quants
  // keep 1 x 4 (their larger unpacked state spills at 2 x 3, Q6_K loses ~25%).
  constexpr bool kBlock32 = htp_tile_info(T).kblock == 32;
  constexpr int NT = kBlock32 ? 2 : 1, NC = kBlock32 ? 3 : 4;
  uint32_t c = 0;
  for (; c + NC <= nact; c += NC)
    gemm_cols<T, NT, NC>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  switch (nact - c) {
    case 3:
      gemm_cols<T, 1, 3>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    case 2:
      gemm_cols<T, 1, 2>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    case 1:
      gemm_cols<T, 1, 1>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
      break;
    default:
      break;
  }
}

}  // namespace
}  // namespace hexllm::htp

#include "htp/vec/x86_float_quant.h"

namespace hexllm::htp {
namespace {

template <uint32_t T>
constexpr vec_mm_kernels entry() {
  if constexpr (htp_tile_info(T).act == HTP_ACT_F32)
    return {gemv_f<T>, gemm_f<T>};
  else
    return {gemv_q<T>, gemm_q<T>};
}

// The table of this instruction set; x86_avx512.cpp replaces GEMM entries with zmm kernels.
constexpr vec_kernels x86_table(const char* name) {
  return {
      name,
      {entry<HTP_TILE_Q4_0_X8>(), entry<HTP_TILE_Q4_1_X8>(), entry<HTP_TILE_Q8_0_X8>(),
       entry<HTP_TILE_MXFP4_X8>(), entry<HTP_TILE_IQ4_NL_X8>(), entry<HTP_TILE_F32_X8>(),
       entry<HTP_TILE_F16_X8>(), entry<HTP_TILE_BF16_X8>(), entry<HTP_TILE_Q5_0_X8>(),
       entry<HTP_TILE_Q5_1_X8>(), entry<HTP_TILE_Q4_K_X8>(), entry<HTP_TILE_Q5_K_X8>(),
       entry<HTP_TILE_Q6_K_X8>()},
      {quant_f32, quant_q8_32, quant_q8_256},
  };
}
static_assert(HTP_TILE_END - HTP_TILE_FIRST == 13, "x86_table lists every tile type");

}  // namespace
}  // namespace hexllm::htp
