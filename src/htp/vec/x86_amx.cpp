// x86 AMX GEMM (AMX-TILE + AMX-BF16) for every quantized weight format, over bf16 activation
// rows (HTP_ACT_BF16, which the host picks from gemm_prefs.bf16_min_rows on): weights go to
// bf16 and TDPBF16PS multiplies 16 x 32 by 32 x 16 of them into a 16 x 16 tile of f32 sums that
// stays in the tile over a whole K chunk. (The int8 product needs each block's sums out of the
// tile to apply its scales: a 1 KiB tile store and 48 vector ops per block, which left AMX int8
// barely ahead of vpdpbusd.) A K-quant super-block is 8 such tiles of 32 elements, each with its
// sub-block scales applied in the conversion. The A tiles load straight from the act rows (16
// rows at the act stride): a Q8 activation converted to bf16 for every weight unit cost as much
// as the tile products there. GEMV, the exact Q8 GEMM (fewer act rows, or HEXLLM_ISA=exact),
// float weights and the Q8 quantizers are the AVX-512 table's.
//
// Numerics: not the bit-exact block sums of the Q8 paths (vec.h). A weight becomes
// bf16(d_w * value), an activation bf16(x) (2^-9 relative, finer than Q8's amax/254), and
// products are summed in f32 in the tile unit's order. An output's value depends only on its
// weight row, its activation row and K, not on the shape around it: partial tile pairs and
// activation groups are padded with zeros, so a unit or device split gives the same bits.
//
// Loop: per K chunk of kKChunk blocks the unit's tile pairs (16 weight rows each) are converted
// once into a per-thread buffer, and every 2 x 2 block of 16 x 16 outputs (4 accumulator tiles,
// 2 A and 2 B tiles) runs the chunk; partial sums wait between chunks in dst, or for padded
// blocks in a per-thread edge buffer that is copied out at the end.
//
// Compiled with the AVX-512 flags plus -mavx512bf16 -mamx-tile -mamx-bf16; only called after
// x86_cpu.cpp has seen AMX-BF16 and AVX512-BF16 in CPUID and XCR0 and the kernel has granted this
// process the tile data state.
#include <immintrin.h>
#include <stdlib.h>

#include "htp/vec/vec.h"
#include "quant/blocks.h"
// GCC 12's avx512fintrin.h passes a self-initialized "undefined" vector as the unused
// pass-through of _mm512_inserti64x4 and _mm512_extracti32x4_epi32, which -Wmaybe-uninitialized
// flags once inlined (and -Wuninitialized at -O1, the sanitizer build's level).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define VEC_INLINE inline __attribute__((always_inline))

namespace hexllm::htp {
namespace {

constexpr uint32_t R = kHtpTileRows;
constexpr uint32_t kM = 16;        // rows of a tile: activation rows of A and C, weight rows of B's columns
// K blocks per chunk: the accumulator tiles go through memory once per chunk (4 KiB in and out
// per 2 x 2 block), which at 8 blocks halved the tile unit's rate (Emerald Rapids, 2026-12-06).
constexpr uint32_t kKChunk = 64;
constexpr uint32_t kBlockK = 32;
constexpr uint32_t kTileBytes = 1024;  // every tile: 16 rows x 64 bytes

// Tile registers (the intrinsics take their numbers as literals): C00 0, C01 1, C10 2, C11 3
// (activation group i, weight pair j), A 4 and 5, B 6 and 7; all 16 rows x 64 bytes.
void tiles_configure() {
  struct alignas(64) {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
  } c;
  // Not _tile_loadconfig: GCC 12's takes the config as an 8-byte operand, so the compiler may
  // drop the stores to the rest of it.
  __asm__ volatile("ldtilecfg %0" : : "m"(c));
}

VEC_INLINE __m512i zload2(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_inserti64x4(_mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i*)t0)),
                            _mm256_loadu_si256((const __m256i*)t1), 1);
}
VEC_INLINE __m512 zf16x16(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_cvtph_ps(_mm256_inserti128_si256(
      _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i*)t0)), _mm_loadu_si128((const __m128i*)t1), 1));
}
VEC_INLINE __m512i nib_lo(__m512i v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0F)); }
VEC_INLINE __m512i nib_hi(__m512i v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F)); }
VEC_INLINE __m512i sub8(__m512i v, int z) { return _mm512_sub_epi8(v, _mm512_set1_epi8((char)z)); }
// Bit 4 of group G's codes from an H5 vector (bit G of each byte).
template <int G>
VEC_INLINE __m512i h5_bit(__m512i h) {
  const __m512i s = G <= 4 ? _mm512_slli_epi16(h, 4 - G) : _mm512_srli_epi16(h, G - 4);
  return _mm512_and_si512(s, _mm512_set1_epi8(0x10));
}
template <const int8_t (&Table)[16]>
VEC_INLINE __m512i lut16(__m512i codes) {
  return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)Table)), codes);
}

// The e8m0 scale of MXFP4 as the float it means halved (the value table is doubled), as
// quant::e8m0_to_fp32_half: 2^(e-128) as a normal float, or a subnormal for e < 2.
VEC_INLINE __m512 e8m0_half_x16(const uint8_t* t0, const uint8_t* t1) {
  int64_t v0, v1;
  __builtin_memcpy(&v0, t0, 8);
  __builtin_memcpy(&v1, t1, 8);
  const __m512i e = _mm512_cvtepu8_epi32(_mm_set_epi64x(v1, v0));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i tiny = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(2)), normal, tiny));
}

// Policies: groups<V>() gives the signed integer values of groups 2V and 2V+1 of both row tiles
// (byte 4n + j: element 4g + j of row n, n < 16); scale() and minv() the 16 rows' block scale
// and min: x = scale * value (+ min).
template <uint32_t T, int Zero, bool Min>
struct AQ4 {
  static constexpr uint32_t kTile = T;
  static constexpr bool kMin = Min;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V);
    g0 = sub8(nib_lo(v), Zero);
    g1 = sub8(nib_hi(v), Zero);
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 128, b1 + 128); }
  static VEC_INLINE __m512 minv(const uint8_t* b0, const uint8_t* b1) {
    if constexpr (Min) return zf16x16(b0 + 144, b1 + 144);
    return _mm512_setzero_ps();
  }
};
using AQ4_0 = AQ4<HTP_TILE_Q4_0_X8, 8, false>;
using AQ4_1 = AQ4<HTP_TILE_Q4_1_X8, 0, true>;
template <uint32_t T, int Zero, bool Min>
struct AQ5 {
  static constexpr uint32_t kTile = T;
  static constexpr bool kMin = Min;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V), h = zload2(b0 + 128, b1 + 128);
    g0 = sub8(_mm512_or_si512(nib_lo(v), h5_bit<2 * V>(h)), Zero);
    g1 = sub8(_mm512_or_si512(nib_hi(v), h5_bit<2 * V + 1>(h)), Zero);
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 160, b1 + 160); }
  static VEC_INLINE __m512 minv(const uint8_t* b0, const uint8_t* b1) {
    if constexpr (Min) return zf16x16(b0 + 176, b1 + 176);
    return _mm512_setzero_ps();
  }
};
using AQ5_0 = AQ5<HTP_TILE_Q5_0_X8, 16, false>;
using AQ5_1 = AQ5<HTP_TILE_Q5_1_X8, 0, true>;
struct AQ8_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q8_0_X8;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    g0 = zload2(b0 + 64 * V, b1 + 64 * V);
    g1 = zload2(b0 + 64 * V + 32, b1 + 64 * V + 32);
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 256, b1 + 256); }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
template <uint32_t T, const int8_t (&Table)[16]>
struct ALut4 {
  static constexpr uint32_t kTile = T;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V);
    g0 = lut16<Table>(nib_lo(v));
    g1 = lut16<Table>(nib_hi(v));
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) {
    if constexpr (T == HTP_TILE_MXFP4_X8) return e8m0_half_x16(b0 + 128, b1 + 128);
    return zf16x16(b0 + 128, b1 + 128);
  }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
using AIQ4_NL = ALut4<HTP_TILE_IQ4_NL_X8, quant::kIq4nlValues>;
using AMXFP4 = ALut4<HTP_TILE_MXFP4_X8, quant::kMxfp4Values>;

// 16 floats of rows n = 4q + l / 4 (lane l): the scale vector of 16 rows spread over the lanes
// of quarter q of a group vector.
template <int Q>
VEC_INLINE __m512 spread4(__m512 v) {
  const __m512i idx = _mm512_add_epi32(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2),
                                       _mm512_set1_epi32(4 * Q));
  return _mm512_permutexvar_ps(idx, v);
}

// Group vector g (int8 values, byte 4n + j) as bf16 B tile rows 2g and 2g + 1 (row 2g: the pairs
// (4g, 4g+1) of the 16 rows, dword n; row 2g + 1: the pairs (4g+2, 4g+3)).
template <bool Min>
VEC_INLINE void group_to_b(__m512i g, const __m512* s, const __m512* m, uint8_t* row2g) {
  __m512 f[4];
  auto quarter = [&]<int Q>() {
    f[Q] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(g, Q)));
    f[Q] = Min ? _mm512_fmadd_ps(f[Q], s[Q], m[Q]) : _mm512_mul_ps(f[Q], s[Q]);
  };
  quarter.template operator()<0>();
  quarter.template operator()<1>();
  quarter.template operator()<2>();
  quarter.template operator()<3>();
  // Rows 0..7 then 8..15, each 4 bf16 (two dwords: pair (j0, j1), pair (j2, j3)).
  const __m512i lo = (__m512i)_mm512_cvtne2ps_pbh(f[1], f[0]), hi = (__m512i)_mm512_cvtne2ps_pbh(f[3], f[2]);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  _mm512_store_si512(row2g, _mm512_permutex2var_epi32(lo, even, hi));
  _mm512_store_si512(row2g + 64, _mm512_permutex2var_epi32(lo, odd, hi));
}

// Scale vectors of the 16 rows spread for group_to_b.
struct spread {
  __m512 q[4];
  explicit VEC_INLINE spread(__m512 v) : q{spread4<0>(v), spread4<1>(v), spread4<2>(v), spread4<3>(v)} {}
};

// A 32-element block format's block (tiles' block bytes b0, b1) as one B tile.
template <class P>
VEC_INLINE void block32_to_b(const uint8_t* b0, const uint8_t* b1, uint8_t* out) {
  const spread s(P::scale(b0, b1)), m(P::minv(b0, b1));
  auto put = [&]<int V>() {
    __m512i g0, g1;
    P::template groups<V>(b0, b1, g0, g1);
    group_to_b<P::kMin>(g0, s.q, m.q, out + 2 * 64 * (2 * V));
    group_to_b<P::kMin>(g1, s.q, m.q, out + 2 * 64 * (2 * V + 1));
  };
  put.template operator()<0>();
  put.template operator()<1>();
  put.template operator()<2>();
  put.template operator()<3>();
}

// ---- K-quants: one B tile is 32 elements of a 256-element super-block ----------------------

// Sub-block h's value of both tiles' sub-block pair bytes (16 B each, byte 2r + h: row r), as
// 16 floats (rows 0..7 of t0, then of t1).
template <bool Signed>
VEC_INLINE __m512 pair_values(const uint8_t* p0, const uint8_t* p1, uint32_t h) {
  const __m128i idx = _mm_add_epi8(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0), _mm_set1_epi8((char)h));
  const __m128i v = _mm_unpacklo_epi64(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)p0), idx),
                                       _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)p1), idx));
  return _mm512_cvtepi32_ps(Signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v));
}

// Q4_K / Q5_K: sub-block s (32 elements) of super-block bytes sb0, sb1; x = d*sc*q - dmin*m.
template <bool Q5>
struct AQK45 {
  static constexpr uint32_t kTile = Q5 ? HTP_TILE_Q5_K_X8 : HTP_TILE_Q4_K_X8;
  static constexpr uint32_t kChunk = Q5 ? 160 : 128, kSc = Q5 ? 1280 : 1024, kMn = kSc + 64, kD = kMn + 64,
                            kDmin = kD + 16;
  static VEC_INLINE void block(const uint8_t* sb0, const uint8_t* sb1, uint32_t s, uint8_t* out) {
    const __m512 d = zf16x16(sb0 + kD, sb1 + kD), dmin = zf16x16(sb0 + kDmin, sb1 + kDmin);
    const uint32_t po = 16 * (s / 2), h = s % 2;
    const spread sc(_mm512_mul_ps(d, pair_values<false>(sb0 + kSc + po, sb1 + kSc + po, h)));
    const spread mn(_mm512_sub_ps(_mm512_setzero_ps(),
                                  _mm512_mul_ps(dmin, pair_values<false>(sb0 + kMn + po, sb1 + kMn + po, h))));
    const uint8_t* c0 = sb0 + kChunk * s;
    const uint8_t* c1 = sb1 + kChunk * s;
    auto put = [&]<int V>() {
      const __m512i v = zload2(c0 + 32 * V, c1 + 32 * V);
      __m512i g0 = nib_lo(v), g1 = nib_hi(v);
      if constexpr (Q5) {
        const __m512i hb = zload2(c0 + 128, c1 + 128);
        g0 = _mm512_or_si512(g0, h5_bit<2 * V>(hb));
        g1 = _mm512_or_si512(g1, h5_bit<2 * V + 1>(hb));
      }
      group_to_b<true>(g0, sc.q, mn.q, out + 2 * 64 * (2 * V));
      group_to_b<true>(g1, sc.q, mn.q, out + 2 * 64 * (2 * V + 1));
    };
    put.template operator()<0>();
    put.template operator()<1>();
    put.template operator()<2>();
    put.template operator()<3>();
  }
};

// Bits 4, 5 of group I's codes from an H6 vector (bits 2I, 2I + 1 of each byte).
template <int I>
VEC_INLINE __m512i h6_bits(__m512i h) {
  const __m512i s = I <= 2 ? _mm512_slli_epi16(h, 4 - 2 * I) : _mm512_srli_epi16(h, 2 * I - 4);
  return _mm512_and_si512(s, _mm512_set1_epi8(0x30));
}

// Q6_K: sub-blocks 2t and 2t + 1 (16 elements each, groups 0..3 and 4..7 of the tile) of
// super-block bytes sb0, sb1; x = d*sc*(q-32), int8 scales.
struct AQ6K {
  static constexpr uint32_t kTile = HTP_TILE_Q6_K_X8;
  static VEC_INLINE void block(const uint8_t* sb0, const uint8_t* sb1, uint32_t t, uint8_t* out) {
    const __m512 d = zf16x16(sb0 + 1664, sb1 + 1664);
    for (uint32_t h = 0; h < 2; h++) {
      const spread sc(_mm512_mul_ps(d, pair_values<true>(sb0 + 1536 + 16 * t, sb1 + 1536 + 16 * t, h)));
      const uint8_t* c0 = sb0 + 96 * (2 * t + h);
      const uint8_t* c1 = sb1 + 96 * (2 * t + h);
      const __m512i v0 = zload2(c0, c1), v1 = zload2(c0 + 32, c1 + 32), hb = zload2(c0 + 64, c1 + 64);
      const __m512i g[4] = {_mm512_or_si512(nib_lo(v0), h6_bits<0>(hb)), _mm512_or_si512(nib_hi(v0), h6_bits<1>(hb)),
                            _mm512_or_si512(nib_lo(v1), h6_bits<2>(hb)), _mm512_or_si512(nib_hi(v1), h6_bits<3>(hb))};
      for (int i = 0; i < 4; i++) group_to_b<false>(sub8(g[i], 32), sc.q, sc.q, out + 2 * 64 * (4 * h + i));
    }
  }
};

// Blocks of 32 per weight block (8 for the K-quants' super-blocks).
template <class P>
constexpr uint32_t kSubBlocks = htp_tile_info(P::kTile).kblock / 32;

// The stand-in for the missing second tile of an odd last pair: every field zero is value 0.
alignas(64) constexpr uint8_t kZeroBlock[1680] = {};
static_assert(sizeof(kZeroBlock) >= htp_tile_info(HTP_TILE_Q6_K_X8).block_bytes, "the largest block");

// 32-element blocks [kb, kb + nbc) of the tile pair (row tiles t0, t1; t1 null when the pair
// has one tile) as nbc B tiles.
template <class P>
void pair_to_b(const uint8_t* t0, const uint8_t* t1, uint32_t kb, uint32_t nbc, uint8_t* out) {
  constexpr uint32_t kBB = htp_tile_info(P::kTile).block_bytes, kSub = kSubBlocks<P>;
  for (uint32_t b = kb; b < kb + nbc; b++, out += kTileBytes) {
    const uint8_t* b0 = t0 + (size_t)(b / kSub) * kBB;
    const uint8_t* b1 = t1 != nullptr ? t1 + (size_t)(b / kSub) * kBB : kZeroBlock;
    if constexpr (kSub == 1) block32_to_b<P>(b0, b1, out);
    else P::block(b0, b1, b % kSub, out);
  }
}

// A per-thread buffer, grown as needed (the unit's size is the host's choice), freed at thread
// exit: a K chunk's B tiles for every tile pair of the unit, and the sums of the edge blocks.
struct thread_buffer {
  uint8_t* p = nullptr;
  size_t bytes = 0;
  ~thread_buffer() { free(p); }
  uint8_t* get(size_t want) {
    if (want > bytes) {
      free(p);
      p = (uint8_t*)aligned_alloc(64, want);
      bytes = p != nullptr ? want : 0;
    }
    return p;
  }
};
thread_local thread_buffer t_bbuf, t_edges;

// Where a 16 x 16 output block's f32 sums live between K chunks: in dst for whole blocks, in the
// edge buffer (row stride 64 bytes) for blocks past nact or nrows.
struct c_home {
  float* p;
  size_t stride;  // bytes
};

// Where a 16-row activation group's A tiles of the current K chunk are: tile b at p + b * step,
// rows `stride` bytes apart (the act rows themselves, or the zero-padded copy of a short group).
struct a_tiles {
  const uint8_t* p;
  size_t stride, step;
};

// C[i][j] (+)= A(group i) x B(pair j) over nbc blocks for NG groups and NP pairs (1 or 2 each).
template <int NG, int NP>
VEC_INLINE void run_block(const a_tiles (&a)[2], const uint8_t* bt, size_t b_pair_bytes, uint32_t nbc, bool first,
                          const c_home (&c)[2][2]) {
  if (first) {
    _tile_zero(0);
    if constexpr (NP == 2) _tile_zero(1);
    if constexpr (NG == 2) _tile_zero(2);
    if constexpr (NG == 2 && NP == 2) _tile_zero(3);
  } else {
    _tile_loadd(0, c[0][0].p, c[0][0].stride);
    if constexpr (NP == 2) _tile_loadd(1, c[0][1].p, c[0][1].stride);
    if constexpr (NG == 2) _tile_loadd(2, c[1][0].p, c[1][0].stride);
    if constexpr (NG == 2 && NP == 2) _tile_loadd(3, c[1][1].p, c[1][1].stride);
  }
  for (uint32_t b = 0; b < nbc; b++) {
    _tile_loadd(4, a[0].p + b * a[0].step, a[0].stride);
    _tile_loadd(6, bt + b * kTileBytes, 64);
    if constexpr (NG == 2) _tile_loadd(5, a[1].p + b * a[1].step, a[1].stride);
    if constexpr (NP == 2) _tile_loadd(7, bt + b_pair_bytes + b * kTileBytes, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (NP == 2) _tile_dpbf16ps(1, 4, 7);
    if constexpr (NG == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (NG == 2 && NP == 2) _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c[0][0].p, c[0][0].stride);
  if constexpr (NP == 2) _tile_stored(1, c[0][1].p, c[0][1].stride);
  if constexpr (NG == 2) _tile_stored(2, c[1][0].p, c[1][0].stride);
  if constexpr (NG == 2 && NP == 2) _tile_stored(3, c[1][1].p, c[1][1].stride);
}

// The GEMM in K chunks of kc blocks with its buffers: bbuf 2 x pairs chunks of B tiles, apad one
// chunk of A tiles, ebuf (groups + pairs) tiles of edge sums (unused when every block is whole).
// The chunk does not change the sums' order (the f32 partial sums wait in memory exactly).
template <class P>
void amx_gemm_run(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                  size_t dst_stride, uint32_t k, uint32_t nrows, uint32_t kc, uint8_t* bbuf, uint8_t* apad,
                  float* ebuf) {
  const uint32_t ntiles = (nrows + R - 1) / R, pairs = (ntiles + 1) / 2, groups = (nact + kM - 1) / kM;
  const uint32_t whole_pairs = nrows / (2 * R), whole_groups = nact / kM;
  const size_t b_pair_bytes = (size_t)kc * kTileBytes;
  const bool edges = whole_pairs < pairs || whole_groups < groups;
  const uint32_t nb = k / kBlockK;
  const size_t rb = htp_tile_row_bytes(P::kTile, k), dst_bytes = dst_stride * sizeof(float);
  // Block (g, p): dst for whole blocks; the edge buffer's slot g for the last pair when it is
  // partial, slot groups + p for the last group when it is partial.
  auto home = [&](uint32_t g, uint32_t p) -> c_home {
    if (g < whole_groups && p < whole_pairs) return {dst + (size_t)g * kM * dst_stride + p * kM, dst_bytes};
    return {ebuf + (size_t)(p >= whole_pairs ? g : groups + p) * kM * kM, kM * sizeof(float)};
  };
  // The short last group's rows, copied per K chunk into zero-padded A tiles.
  const uint32_t short_rows = nact - whole_groups * kM;
  if (short_rows != 0) __builtin_memset(apad, 0, (size_t)kc * kTileBytes);
  auto chunk_blocks = [&](uint32_t kb) { return nb - kb < kc ? nb - kb : kc; };
  auto group_tiles = [&](uint32_t g, uint32_t kb) -> a_tiles {
    if (g < whole_groups) return {act + (size_t)g * kM * act_stride + (size_t)kb * 64, act_stride, 64};
    return {apad, 64, kTileBytes};
  };
  // While the tile unit runs one chunk, the vector units convert the next chunk's B tiles, a
  // slice after each 2 x 2 block; the B buffer is double.
  auto convert_b = [&](uint32_t kb, uint32_t p, uint8_t* buf) {
    const uint8_t* t0 = w + 2 * p * rb;
    pair_to_b<P>(t0, 2 * p + 1 < ntiles ? t0 + rb : nullptr, kb, chunk_blocks(kb), buf + p * b_pair_bytes);
  };
  const uint32_t gpairs = (groups + 1) / 2, ppairs = (pairs + 1) / 2;
  const uint32_t b_slice = (pairs + gpairs * ppairs - 1) / (gpairs * ppairs);
  tiles_configure();
  for (uint32_t p = 0; p < pairs; p++) convert_b(0, p, bbuf);
  for (uint32_t kb = 0, chunk = 0; kb < nb; kb += kc, chunk++) {
    const uint32_t nbc = chunk_blocks(kb);
    const bool next_chunk = kb + kc < nb;
    const uint8_t* bcur = bbuf + (chunk % 2) * pairs * b_pair_bytes;
    uint8_t* bnext = bbuf + ((chunk + 1) % 2) * pairs * b_pair_bytes;
    uint32_t b_done = next_chunk ? 0 : pairs;
    for (uint32_t r = 0; r < short_rows; r++)
      for (uint32_t b = 0; b < nbc; b++)
        __builtin_memcpy(apad + b * kTileBytes + r * 64, act + (size_t)(whole_groups * kM + r) * act_stride + (size_t)(kb + b) * 64,
               64);
    for (uint32_t gp = 0; gp < gpairs; gp++) {
      const uint32_t g = 2 * gp;
      const bool two_g = g + 1 < groups;
      const a_tiles a[2] = {group_tiles(g, kb), group_tiles(two_g ? g + 1 : g, kb)};
      for (uint32_t p = 0; p < pairs; p += 2) {
        const bool two_p = p + 1 < pairs;
        const c_home c[2][2] = {{home(g, p), home(g, two_p ? p + 1 : p)},
                                {home(two_g ? g + 1 : g, p), home(two_g ? g + 1 : g, two_p ? p + 1 : p)}};
        const uint8_t* bt = bcur + p * b_pair_bytes;
        if (two_g && two_p) run_block<2, 2>(a, bt, b_pair_bytes, nbc, kb == 0, c);
        else if (two_g) run_block<2, 1>(a, bt, b_pair_bytes, nbc, kb == 0, c);
        else if (two_p) run_block<1, 2>(a, bt, b_pair_bytes, nbc, kb == 0, c);
        else run_block<1, 1>(a, bt, b_pair_bytes, nbc, kb == 0, c);
        for (uint32_t e = b_done + b_slice < pairs ? b_done + b_slice : pairs; b_done < e; b_done++)
          convert_b(kb + kc, b_done, bnext);
      }
    }
    for (; b_done < pairs; b_done++) convert_b(kb + kc, b_done, bnext);
  }
  // Unused tile state makes every context switch save 8 KiB more.
  _tile_release();
  if (!edges) return;
  // The edge blocks' rows and columns that exist.
  for (uint32_t g = 0; g < groups; g++)
    for (uint32_t p = 0; p < pairs; p++) {
      if (g < whole_groups && p < whole_pairs) continue;
      const c_home h = home(g, p);
      const uint32_t rows = nact - g * kM < kM ? nact - g * kM : kM, cols = nrows - p * kM < kM ? nrows - p * kM : kM;
      const __mmask16 mask = (__mmask16)((1u << cols) - 1);
      for (uint32_t m = 0; m < rows; m++)
        _mm512_mask_storeu_ps(dst + (size_t)(g * kM + m) * dst_stride + p * kM, mask, _mm512_loadu_ps(h.p + m * kM));
    }
}

// One tile pair and one group with 8-block chunks on the stack (26 KiB, where 64-block ones
// would take 194 KiB of a worker's stack): the end of amx_gemm's fallback.
template <class P>
__attribute__((noinline)) void amx_gemm_small(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact,
                                              float* dst, size_t dst_stride, uint32_t k, uint32_t nrows) {
  constexpr uint32_t kc = 8;
  alignas(64) uint8_t b[2 * kc * kTileBytes], apad[kc * kTileBytes];
  alignas(64) float e[2 * kM * kM];
  amx_gemm_run<P>(w, act, act_stride, nact, dst, dst_stride, k, nrows, kc, b, apad, e);
}

// vec_gemm_fn over bf16 activation rows (HTP_ACT_BF16, any nact). When the per-thread buffers
// cannot grow, the weight rows and then the activation rows are halved (an output does not
// depend on the split or the chunk) down to one tile pair and one group (amx_gemm_small).
template <class P>
void amx_gemm(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst, size_t dst_stride,
              uint32_t k, uint32_t nrows) {
  const uint32_t pairs = (nrows + 2 * R - 1) / (2 * R), groups = (nact + kM - 1) / kM;
  const bool edges = nrows % (2 * R) != 0 || nact % kM != 0;
  const size_t chunk_bytes = (size_t)kKChunk * kTileBytes;
  uint8_t* bbuf = t_bbuf.get((2 * (size_t)pairs + 1) * chunk_bytes);
  float* ebuf = edges ? (float*)t_edges.get((size_t)(groups + pairs) * kTileBytes) : nullptr;
  if (bbuf != nullptr && (ebuf != nullptr || !edges)) {
    amx_gemm_run<P>(w, act, act_stride, nact, dst, dst_stride, k, nrows, kKChunk, bbuf,
                    bbuf + 2 * (size_t)pairs * chunk_bytes, ebuf);
  } else if (pairs > 1) {
    const uint32_t half = pairs / 2 * 2 * R;
    amx_gemm<P>(w, act, act_stride, nact, dst, dst_stride, k, half);
    amx_gemm<P>(w + (size_t)(half / R) * htp_tile_row_bytes(P::kTile, k), act, act_stride, nact, dst + half,
                dst_stride, k, nrows - half);
  } else if (groups > 1) {
    const uint32_t half = groups / 2 * kM;
    amx_gemm<P>(w, act, act_stride, half, dst, dst_stride, k, nrows);
    amx_gemm<P>(w, act + half * act_stride, act_stride, nact - half, dst + half * dst_stride, dst_stride, k, nrows);
  } else {
    amx_gemm_small<P>(w, act, act_stride, nact, dst, dst_stride, k, nrows);
  }
}

// HTP_ACT_BF16: k floats to bf16, round to nearest even (the generic quant_bf16's rule).
void quant_bf16(const float* x, uint8_t* act, uint32_t k) {
  uint32_t i = 0;
  for (; i + 32 <= k; i += 32)
    _mm512_storeu_si512(act + 2 * i, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i)));
  if (i < k) {
    const __mmask16 lo = (__mmask16)(k - i >= 16 ? 0xffff : (1u << (k - i)) - 1);
    const __mmask16 hi = (__mmask16)(k - i > 16 ? (1u << (k - i - 16)) - 1 : 0);
    const __m512i v = (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + i + 16), _mm512_maskz_loadu_ps(lo, x + i));
    _mm512_mask_storeu_epi16(act + 2 * i, (__mmask32)lo | (__mmask32)hi << 16, v);
  }
}

vec_kernels amx_table() {
  vec_kernels k = *vec_avx512_kernels();
  k.name = "amx";
  // A weight block's conversion to bf16 (~190 vector ops per 32 x 16) costs as much as ~6 tile
  // products of 16 activation rows: passes of 384 rows keep it under a quarter of the tile time.
  // The FFN fusion at 140-row chunks (qwen2.5-0.5b, 1 worker) ran its op 17% slower than the
  // unfused gate, up and SWIGLU, whose passes carry all 512 rows.
  // Activations in bf16 from one A tile's rows on: converting Q8 blocks again for each weight
  // unit cost as much as the tile products at K = 8192 and 112-row units.
  k.gemm_prefs = {384, kM, 0, 0};
  k.quant[HTP_ACT_BF16] = quant_bf16;
  k.mm[HTP_TILE_Q4_0_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ4_0>;
  k.mm[HTP_TILE_Q4_1_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ4_1>;
  k.mm[HTP_TILE_Q5_0_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ5_0>;
  k.mm[HTP_TILE_Q5_1_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ5_1>;
  k.mm[HTP_TILE_Q8_0_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ8_0>;
  k.mm[HTP_TILE_IQ4_NL_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AIQ4_NL>;
  k.mm[HTP_TILE_MXFP4_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AMXFP4>;
  k.mm[HTP_TILE_Q4_K_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQK45<false>>;
  k.mm[HTP_TILE_Q5_K_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQK45<true>>;
  k.mm[HTP_TILE_Q6_K_X8 - HTP_TILE_FIRST].gemm_bf16 = amx_gemm<AQ6K>;
  return k;
}

}  // namespace

const vec_kernels* vec_amx_kernels() {
  static const vec_kernels k = amx_table();
  return &k;
}

}  // namespace hexllm::htp
