// x86 AVX-512 (F/BW/VL/VNNI) kernels. The GEMM of every quantized type works on zmm: 2 row
// tiles side by side (16 rows, lanes 0..7 tile t, 8..15 tile t+1) times NC activation rows,
// each group vector meeting a 4-byte activation broadcast that vpdpbusd takes straight from
// memory. Per block and lane this is the same integer sum and the same float fma as every
// other path (vec.h), so results are bit-identical.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni; only called after
// htp_vec_select() has seen those features and the OS's ZMM state support.
#define VEC_DOT 2
// The ymm GEMV (AMD) reads two weight streams, the halves of a decode unit, 4 KiB ahead, with
// decode units of kYmmGemvUnitBytes (the streams half a unit apart); measured on a Zen 5 (DESIGN §10).
#define VEC_GEMV_STREAMS 2
#define VEC_PREFETCH 4096
// GCC 12's avx512fintrin.h passes a self-initialized "undefined" vector as the unused
// pass-through of _mm512_inserti64x4, which -Wmaybe-uninitialized flags once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "htp/util.h"
#include "htp/vec/x86_kernels.h"

namespace hexllm::htp {
namespace {

// The GEMM drivers: the kernels keep NC activation rows' accumulators in registers, so NC is a
// template argument. `run.template operator()<NC>(c)` computes activation rows [c, c + NC);
// this runs blocks of NB and then the one instantiation the remainder needs.
template <int NB, class Run>
VEC_INLINE void by_act_blocks(uint32_t nact, Run run) {
  uint32_t c = 0;
  for (; c + NB <= nact; c += NB) run.template operator()<NB>(c);
  if (c < nact) htp_by_count<NB - 1>(nact - c, [&]<int NC>() { run.template operator()<NC>(c); });
}

VEC_INLINE __m512i zload2(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_inserti64x4(_mm512_zextsi256_si512(load(t0)), load(t1), 1);
}
VEC_INLINE __m512 zf16x16(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_zextsi128_si256(load128(t0)), load128(t1), 1));
}
VEC_INLINE __m512i znib_lo(__m512i v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0F)); }
VEC_INLINE __m512i znib_hi(__m512i v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F)); }
template <int S>
VEC_INLINE __m512i zshl16(__m512i x) {
  if constexpr (S > 0)
    return _mm512_slli_epi16(x, S);
  else if constexpr (S < 0)
    return _mm512_srli_epi16(x, -S);
  else
    return x;
}
// Bit 4 of group G's codes from an H5 vector (bit G of each byte).
template <int G>
VEC_INLINE __m512i zh5_bits(__m512i h) {
  return _mm512_and_si512(zshl16<4 - G>(h), _mm512_set1_epi8(0x10));
}
// Signed values (+128 as unsigned bytes) of 4-bit codes through a 16-entry table.
template <const int8_t (&Table)[16]>
VEC_INLINE __m512i zlut16(__m512i codes) {
  const __m512i t = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)Table));
  return _mm512_xor_si512(_mm512_shuffle_epi8(t, codes), _mm512_set1_epi8(-128));
}
VEC_INLINE __m512 ze8m0_half_x16(const uint8_t* t0, const uint8_t* t1) {
  int64_t v0, v1;
  __builtin_memcpy(&v0, t0, 8);
  __builtin_memcpy(&v1, t1, 8);
  const __m512i e = _mm512_cvtepu8_epi32(_mm_set_epi64x(v1, v0));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i tiny = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 is_tiny = _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_tiny, normal, tiny));
}

// zmm policies: groups<V>() gives the unsigned value vectors of groups 2V and 2V+1 of both
// tiles; kZero is what comes off each block sum (format zero-point, or the +128 offset).
struct ZQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_0_X8;
  static constexpr int kZero = 8;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V);
    g0 = znib_lo(v);
    g1 = znib_hi(v);
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 128, b1 + 128); }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
struct ZQ4_1 : ZQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_1_X8;
  static constexpr int kZero = 0;
  static constexpr bool kMin = true;
  static VEC_INLINE __m512 minv(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 144, b1 + 144); }
};
struct ZQ5_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_0_X8;
  static constexpr int kZero = 16;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V), h = zload2(b0 + 128, b1 + 128);
    g0 = _mm512_or_si512(znib_lo(v), zh5_bits<2 * V>(h));
    g1 = _mm512_or_si512(znib_hi(v), zh5_bits<2 * V + 1>(h));
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 160, b1 + 160); }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
struct ZQ5_1 : ZQ5_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_1_X8;
  static constexpr int kZero = 0;
  static constexpr bool kMin = true;
  static VEC_INLINE __m512 minv(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 176, b1 + 176); }
};
struct ZQ8_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q8_0_X8;
  static constexpr int kZero = 128;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    g0 = _mm512_xor_si512(zload2(b0 + 64 * V, b1 + 64 * V), _mm512_set1_epi8(-128));
    g1 = _mm512_xor_si512(zload2(b0 + 64 * V + 32, b1 + 64 * V + 32), _mm512_set1_epi8(-128));
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) { return zf16x16(b0 + 256, b1 + 256); }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
template <uint32_t T, const int8_t (&Table)[16]>
struct ZLut4 {
  static constexpr uint32_t kTile = T;
  static constexpr int kZero = 128;
  static constexpr bool kMin = false;
  template <int V>
  static VEC_INLINE void groups(const uint8_t* b0, const uint8_t* b1, __m512i& g0, __m512i& g1) {
    const __m512i v = zload2(b0 + 32 * V, b1 + 32 * V);
    g0 = zlut16<Table>(znib_lo(v));
    g1 = zlut16<Table>(znib_hi(v));
  }
  static VEC_INLINE __m512 scale(const uint8_t* b0, const uint8_t* b1) {
    if constexpr (T == HTP_TILE_MXFP4_X8)
      return ze8m0_half_x16(b0 + 128, b1 + 128);
    else
      return zf16x16(b0 + 128, b1 + 128);
  }
  static VEC_INLINE __m512 minv(const uint8_t*, const uint8_t*) { return _mm512_setzero_ps(); }
};
using ZIQ4_NL = ZLut4<HTP_TILE_IQ4_NL_X8, quant::kIq4nlValues>;
using ZMXFP4 = ZLut4<HTP_TILE_MXFP4_X8, quant::kMxfp4Values>;

VEC_INLINE __m512i bcast4z(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// acc += per 32-bit lane dot of 4 u8 weights and the 4 activation bytes at p, broadcast from
// memory: one micro-fused uop. GCC keeps the broadcast as its own vpbroadcastd, which costs an
// extra uop per product and made the front end, not the dot units, the limit. The accumulator
// goes in and out by value ("0" / "=v"): as a "+v" lvalue GCC may keep the caller's accumulator
// array in memory and store it after every product (it did once the drivers took it through a
// lambda: 292 instructions per block instead of 172, and 40% slower).
VEC_INLINE void zdot4(__m512i& acc, __m512i w, const int8_t* p) {
  __m512i r;
  __asm__("vpdpbusd %3%{1to16%}, %2, %0" : "=v"(r) : "0"(acc), "v"(w), "m"(*(const int32_t*)p));
  acc = r;
}

// One activation block as the zmm GEMM reads it: the NC rows of a block side by side, so one
// base pointer (no index register: indexed memory operands split into two uops) reaches every
// row's bytes, and the zero-point product (or the min term's d * sum) is ready to broadcast.
struct zact {
  int8_t q[32];
  float d;
  int32_t zs;  // -kZero * sum, or the bits of d * (float)sum for formats with a min
};

// Prefetch `dist` bytes past b0 and b1 (the GEMV's run-time distance, see zgemm_cols).
template <uint32_t Bytes>
VEC_INLINE void zprefetch_at(const uint8_t* b0, const uint8_t* b1, size_t dist) {
  for (uint32_t off = 0; off < Bytes; off += 64) {
    _mm_prefetch((const char*)b0 + dist + off, _MM_HINT_T0);
    _mm_prefetch((const char*)b1 + dist + off, _MM_HINT_T0);
  }
}

// The zmm GEMV (one activation row) reads 4 weight streams per thread (zpairs) and prefetches
// each ahead; with 4 streams, 2 KiB ahead measured ~5% faster than 4 KiB on 4 KiB pages (Xeon).
// On an Emerald Rapids Xeon (2 MiB pages), 1B Q4_0 tg128 at 2 threads against 2 KiB: 0-5%
// slower at 4 KiB, 1% faster to 3% slower at 1 KiB, 2-6% slower with prefetcht1 (3 pairs each).
constexpr size_t kZPrefetch = 2048;
template <uint32_t Bytes>
VEC_INLINE void zprefetch(const uint8_t* b0, const uint8_t* b1) {
  zprefetch_at<Bytes>(b0, b1, kZPrefetch);
}

// K blocks per pass over the row tiles: the interleaved activations of NC rows (NC x 40 bytes per
// block) stay within a few tens of KiB of stack. GEMV takes K up to 8192 in one pass, so each
// weight stream is read straight through (10 KiB of stack).
template <int NC>
constexpr uint32_t kZKChunk = NC == 1 ? 256 : 64;

template <class P, int NC>
VEC_INLINE void zact_fill(const htp_act_q8_32* const* a, uint32_t b0, uint32_t nbc, zact* buf) {
  for (uint32_t b = 0; b < nbc; b++)
    for (int c = 0; c < NC; c++) {
      const htp_act_q8_32& x = a[c][b0 + b];
      zact& z = buf[b * NC + c];
      __builtin_memcpy(z.q, x.q, 32);
      z.d = x.d;
      if constexpr (P::kMin) {
        const float ds = x.d * (float)x.sum;
        __builtin_memcpy(&z.zs, &ds, 4);
      } else {
        z.zs = -P::kZero * x.sum;
      }
    }
}

template <class P, int NC, int V>
VEC_INLINE void zstep(const uint8_t* b0, const uint8_t* b1, const zact* x, __m512i* s) {
  __m512i g0, g1;
  P::template groups<V>(b0, b1, g0, g1);
  for (int c = 0; c < NC; c++) {
    zdot4(s[c], g0, x[c].q + 8 * V);
    zdot4(s[c], g1, x[c].q + 8 * V + 4);
  }
}

// One K block of 16 rows (tiles t0, t0+1) x NC activation rows. Every activation row has its
// own chain of products (started at its zero-point, so no subtraction follows), and the group
// loop runs outside the row loop: NC independent chains hide the vpdpbusd latency.
template <class P, int NC>
VEC_INLINE void zpair_block(const uint8_t* b0, const uint8_t* b1, const zact* x, __m512* acc) {
  __m512i s[NC];
  for (int c = 0; c < NC; c++) s[c] = P::kMin ? _mm512_setzero_si512() : _mm512_set1_epi32(x[c].zs);
  zstep<P, NC, 0>(b0, b1, x, s);
  zstep<P, NC, 1>(b0, b1, x, s);
  zstep<P, NC, 2>(b0, b1, x, s);
  zstep<P, NC, 3>(b0, b1, x, s);
  const __m512 dw = P::scale(b0, b1);
  for (int c = 0; c < NC; c++) {
    acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(x[c].d)), _mm512_cvtepi32_ps(s[c]), acc[c]);
    if constexpr (P::kMin) {
      float ds;
      __builtin_memcpy(&ds, &x[c].zs, 4);
      acc[c] = _mm512_fmadd_ps(P::minv(b0, b1), _mm512_set1_ps(ds), acc[c]);
    }
  }
}

// NP tile pairs from t0 (pair p at t0 + 2p row tiles) x NC activation rows over nbc K blocks;
// acc[p * NC + c]. GEMV (NC = 1) takes NP = 2: the pool's weights sit on 4 KiB pages, where one
// core reads ~30% faster from 4 streams than from 2 (the hardware prefetchers stop at every page).
template <class P, int NC, int NP>
VEC_INLINE void zpairs(const uint8_t* t0, size_t rb, const zact* buf, uint32_t nbc, __m512* acc, size_t pf = 0) {
  constexpr uint32_t kBB = htp_tile_info(P::kTile).block_bytes;
  for (uint32_t b = 0; b < nbc; b++)
    for (int p = 0; p < NP; p++) {
      const uint8_t* b0 = t0 + 2 * p * rb + (size_t)b * kBB;
      if constexpr (NC == 1) {
        if (pf == 0) zprefetch<kBB>(b0, b0 + rb);
        else zprefetch_at<kBB>(b0, b0 + rb, pf);
      }
      zpair_block<P, NC>(b0, b0 + rb, buf + b * NC, acc + p * NC);
    }
}

// NC activation rows against all row tiles: tile pairs on zmm, K in chunks of kZKChunk blocks
// (a chunk's sums go through dst, which keeps every lane's fma sequence), a last odd tile on ymm.
template <class P, int NC>
void zgemm_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride,
                uint32_t k, uint32_t nrows) {
  constexpr uint32_t T = P::kTile;
  constexpr uint32_t kBB = htp_tile_info(T).block_bytes;
  const uint32_t nb = k / 32;
  const size_t rb = htp_tile_row_bytes(T, k);
  const htp_act_q8_32* a[NC];
  for (int c = 0; c < NC; c++) a[c] = (const htp_act_q8_32*)(act + c * act_stride);
  constexpr uint32_t kChunk = kZKChunk<NC>;
  alignas(64) zact buf[kChunk * NC];
  const uint32_t n_pairs = nrows > R ? (nrows - R + 2 * R - 1) / (2 * R) : 0;  // second tile has a row
  for (uint32_t kb = 0; kb < nb; kb += kChunk) {
    const uint32_t nbc = nb - kb < kChunk ? nb - kb : kChunk;
    zact_fill<P, NC>(a, kb, nbc, buf);
    auto run = [&]<int NP>(uint32_t t) {
      __m512 acc[NP * NC];
      __mmask16 m[NP];
      for (int p = 0; p < NP; p++) {
        const uint32_t n = nrows - (t + 2 * p) * R;
        m[p] = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
        for (int c = 0; c < NC; c++)
          acc[p * NC + c] =
              kb == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m[p], dst + c * dst_stride + (t + 2 * p) * R);
      }
      // Short rows (a tile shorter than twice the prefetch distance): the in-row distance would
      // land in rows the other streams are reading, so prefetch the next group's rows instead;
      // never past the last tile pair (that would read another worker's unit).
      size_t pf = 0;
      if constexpr (NC == 1)
        if (rb < 2 * kZPrefetch && nb <= kChunk) pf = t + 4 * NP <= 2 * n_pairs ? 2 * NP * rb : 0;
      zpairs<P, NC, NP>(w + t * rb + (size_t)kb * kBB, rb, buf, nbc, acc, pf);
      for (int p = 0; p < NP; p++)
        for (int c = 0; c < NC; c++)
          _mm512_mask_storeu_ps(dst + c * dst_stride + (t + 2 * p) * R, m[p], acc[p * NC + c]);
    };
    uint32_t t = 0;
    if constexpr (NC == 1)
      for (; t + 4 <= 2 * n_pairs; t += 4) run.template operator()<2>(t);
    for (; t < 2 * n_pairs; t += 2) run.template operator()<1>(t);
  }
  const uint32_t t = 2 * n_pairs;
  if (t * R < nrows) {
    __m256 acc[NC];
    for (int c = 0; c < NC; c++) acc[c] = _mm256_setzero_ps();
    tile_any<T, 1, NC>(w + t * rb, rb, a, nb, acc);
    for (int c = 0; c < NC; c++) store_rows(dst + c * dst_stride + t * R, acc[c], nrows - t * R);
  }
}

// Columns per pass: each weight vector is unpacked once for NC activation rows; NC chains of
// dependent vpdpbusd per block keep both dot units fed.
constexpr int kZCols = 12;

template <class P>
void zgemm(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst, size_t dst_stride,
           uint32_t k, uint32_t nrows) {
  by_act_blocks<kZCols>(nact, [&]<int NC>(uint32_t c) {
    zgemm_cols<P, NC>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  });
}

// ---- K-quants on zmm: 16 rows (2 tiles) x NC activation rows per 256-element super-block ----
//
// Each sub-block's integer dot is built from vpdpbusd chains short enough that every lane's
// sum fits in int16 (Q4_K: 16 elements x 15 x 127 = 30480; Q5_K: 8 x 31 x 127 = 31496). The
// int32 lane then reads as (its value, sign) in int16 halves, so vpdpwssd with (scale, 0)
// multiplies it by the row's 6-bit scale and adds it to the super-block sum: exact, no vpmulld.

// Sub-block pair p's bytes of both tiles (16 B each, byte 2r+h = sub-block 2p+h of row r) as
// 16 dwords of two int16 halves.
VEC_INLINE __m512i zpairs16(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_cvtepu8_epi16(_mm256_inserti128_si256(_mm256_zextsi128_si256(load128(t0)), load128(t1), 1));
}

template <bool Q5, int NC, int V>
VEC_INLINE void zk45_step(const uint8_t* b0, const uint8_t* b1, uint32_t s, const htp_act_q8_256* const* a,
                          uint32_t b, __m512i* part) {
  constexpr uint32_t kChunk = Q5 ? 160 : 128;
  const __m512i v = zload2(b0 + kChunk * s + 32 * V, b1 + kChunk * s + 32 * V);
  __m512i g0 = znib_lo(v), g1 = znib_hi(v);
  if constexpr (Q5) {
    const __m512i h = zload2(b0 + kChunk * s + 128, b1 + kChunk * s + 128);
    g0 = _mm512_or_si512(g0, zh5_bits<2 * V>(h));
    g1 = _mm512_or_si512(g1, zh5_bits<2 * V + 1>(h));
  }
  for (int c = 0; c < NC; c++) {
    const int8_t* q = a[c][b].q + 32 * s + 8 * V;
    part[c] = _mm512_dpbusd_epi32(part[c], g0, bcast4z(q));
    part[c] = _mm512_dpbusd_epi32(part[c], g1, bcast4z(q + 4));
  }
}

// Adds scale x part to s32 and clears part.
template <int NC>
VEC_INLINE void zk_scale(__m512i* s32, __m512i* part, __m512i sc) {
  for (int c = 0; c < NC; c++) {
    s32[c] = _mm512_dpwssd_epi32(s32[c], part[c], sc);
    part[c] = _mm512_setzero_si512();
  }
}

// Super-block b of one tile pair (b0, b1: its bytes in tiles t, t+1) x NC activation rows.
template <bool Q5, int NC>
VEC_INLINE void zk45(const uint8_t* b0, const uint8_t* b1, const htp_act_q8_256* const* a, uint32_t b, __m512* acc) {
  using P = PK45<Q5>;
  const __m512i lo16 = _mm512_set1_epi32(0xffff);
  __m512i s32[NC], part[NC];
  for (int c = 0; c < NC; c++) s32[c] = part[c] = _mm512_setzero_si512();
  for (uint32_t p = 0; p < 4; p++) {
    const __m512i scp = zpairs16(b0 + P::kSc + 16 * p, b1 + P::kSc + 16 * p);
    for (uint32_t h = 0; h < 2; h++) {
      const uint32_t s = 2 * p + h;
      const __m512i sc = h == 0 ? _mm512_and_si512(scp, lo16) : _mm512_srli_epi32(scp, 16);
      zk45_step<Q5, NC, 0>(b0, b1, s, a, b, part);
      if constexpr (Q5) zk_scale<NC>(s32, part, sc);
      zk45_step<Q5, NC, 1>(b0, b1, s, a, b, part);
      zk_scale<NC>(s32, part, sc);
      zk45_step<Q5, NC, 2>(b0, b1, s, a, b, part);
      if constexpr (Q5) zk_scale<NC>(s32, part, sc);
      zk45_step<Q5, NC, 3>(b0, b1, s, a, b, part);
      zk_scale<NC>(s32, part, sc);
    }
  }
  const __m512 d = zf16x16(b0 + P::kD, b1 + P::kD), dmin = zf16x16(b0 + P::kDmin, b1 + P::kDmin);
  for (int c = 0; c < NC; c++) {
    __m512i mins = _mm512_setzero_si512();
    for (uint32_t p = 0; p < 4; p++) {
      int32_t sp;
      __builtin_memcpy(&sp, a[c][b].sum32 + 2 * p, 4);
      mins = _mm512_dpwssd_epi32(mins, zpairs16(b0 + P::kMn + 16 * p, b1 + P::kMn + 16 * p),
                                 _mm512_set1_epi32(sp));
    }
    const __m512 da = _mm512_set1_ps(a[c][b].d);
    acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(d, da), _mm512_cvtepi32_ps(s32[c]), acc[c]);
    acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, da), _mm512_cvtepi32_ps(mins), acc[c]);
  }
}

// Q6_K: 16 sub-blocks of 16 (codes 0..63, int8 scales). A sub-block's sum can exceed int16,
// so it is scaled with vpmulld; the -32 zero-point goes through the activation sums per 16.
template <int I>
VEC_INLINE __m512i zh6_bits(__m512i h) {
  return _mm512_and_si512(zshl16<4 - 2 * I>(h), _mm512_set1_epi8(0x30));
}
VEC_INLINE __m512i zpairs16s(const uint8_t* t0, const uint8_t* t1) {
  return _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_zextsi128_si256(load128(t0)), load128(t1), 1));
}

template <int NC>
VEC_INLINE void zk6(const uint8_t* b0, const uint8_t* b1, const htp_act_q8_256* const* a, uint32_t b, __m512* acc) {
  __m512i s32[NC];
  for (int c = 0; c < NC; c++) s32[c] = _mm512_setzero_si512();
  for (uint32_t u = 0; u < 16; u++) {
    const __m512i scp = zpairs16s(b0 + 1536 + 16 * (u / 2), b1 + 1536 + 16 * (u / 2));
    const __m512i sc = u % 2 == 0 ? _mm512_srai_epi32(_mm512_slli_epi32(scp, 16), 16) : _mm512_srai_epi32(scp, 16);
    const __m512i v0 = zload2(b0 + 96 * u, b1 + 96 * u), v1 = zload2(b0 + 96 * u + 32, b1 + 96 * u + 32);
    const __m512i h = zload2(b0 + 96 * u + 64, b1 + 96 * u + 64);
    const __m512i g0 = _mm512_or_si512(znib_lo(v0), zh6_bits<0>(h));
    const __m512i g1 = _mm512_or_si512(znib_hi(v0), zh6_bits<1>(h));
    const __m512i g2 = _mm512_or_si512(znib_lo(v1), zh6_bits<2>(h));
    const __m512i g3 = _mm512_or_si512(znib_hi(v1), zh6_bits<3>(h));
    for (int c = 0; c < NC; c++) {
      const int8_t* q = a[c][b].q + 16 * u;
      __m512i part = _mm512_dpbusd_epi32(_mm512_setzero_si512(), g0, bcast4z(q));
      part = _mm512_dpbusd_epi32(part, g1, bcast4z(q + 4));
      part = _mm512_dpbusd_epi32(part, g2, bcast4z(q + 8));
      part = _mm512_dpbusd_epi32(part, g3, bcast4z(q + 12));
      s32[c] = _mm512_add_epi32(s32[c], _mm512_mullo_epi32(part, sc));
    }
  }
  const __m512 d = zf16x16(b0 + 1664, b1 + 1664);
  for (int c = 0; c < NC; c++) {
    __m512i corr = _mm512_setzero_si512();
    for (uint32_t p = 0; p < 8; p++) {
      int32_t sp;
      __builtin_memcpy(&sp, a[c][b].sum16 + 2 * p, 4);
      corr = _mm512_dpwssd_epi32(corr, zpairs16s(b0 + 1536 + 16 * p, b1 + 1536 + 16 * p), _mm512_set1_epi32(sp));
    }
    const __m512i isum = _mm512_sub_epi32(s32[c], _mm512_slli_epi32(corr, 5));
    acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(a[c][b].d)), _mm512_cvtepi32_ps(isum), acc[c]);
  }
}

template <uint32_t T, int NC>
void zkgemm_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride,
                 uint32_t k, uint32_t nrows) {
  const uint32_t nb = k / 256;
  const size_t rb = htp_tile_row_bytes(T, k);
  const htp_act_q8_256* a[NC];
  for (int c = 0; c < NC; c++) a[c] = (const htp_act_q8_256*)(act + c * act_stride);
  constexpr uint32_t kBB = htp_tile_info(T).block_bytes;
  // NP tile pairs from row tile t (4 weight streams for GEMV, as zpairs).
  auto run = [&]<int NP>(uint32_t t) {
    __m512 acc[NP * NC];
    for (int l = 0; l < NP * NC; l++) acc[l] = _mm512_setzero_ps();
    for (uint32_t b = 0; b < nb; b++)
      for (int p = 0; p < NP; p++) {
        const uint8_t* b0 = w + (t + 2 * p) * rb + (size_t)b * kBB;
        if constexpr (NC == 1) zprefetch<kBB>(b0, b0 + rb);
        if constexpr (T == HTP_TILE_Q6_K_X8)
          zk6<NC>(b0, b0 + rb, a, b, acc + p * NC);
        else
          zk45<T == HTP_TILE_Q5_K_X8, NC>(b0, b0 + rb, a, b, acc + p * NC);
      }
    for (int p = 0; p < NP; p++) {
      const uint32_t n = nrows - (t + 2 * p) * R;
      const __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
      for (int c = 0; c < NC; c++) _mm512_mask_storeu_ps(dst + c * dst_stride + (t + 2 * p) * R, m, acc[p * NC + c]);
    }
  };
  uint32_t t = 0;
  if constexpr (NC == 1)
    for (; (t + 2) * R + R < nrows; t += 4) run.template operator()<2>(t);  // the second pair has a row
  for (; t * R + R < nrows; t += 2) run.template operator()<1>(t);
  if (t * R < nrows) {
    __m256 acc[NC];
    for (int c = 0; c < NC; c++) acc[c] = _mm256_setzero_ps();
    tile_any<T, 1, NC>(w + t * rb, rb, a, nb, acc);
    for (int c = 0; c < NC; c++) store_rows(dst + c * dst_stride + t * R, acc[c], nrows - t * R);
  }
}

constexpr int kZKCols = 8;

template <uint32_t T>
void zkgemm(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
            size_t dst_stride, uint32_t k, uint32_t nrows) {
  by_act_blocks<kZKCols>(nact, [&]<int NC>(uint32_t c) {
    zkgemm_cols<T, NC>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  });
}

// ---- float weights on zmm: 2 row tiles ([32 k][8 r] each) side by side, NC activation rows ----
// Every lane sums w[i] * x[i] in K order with one fma per element, as gemm_f does on ymm, so
// both give the same bits (and any NC the same as NC = 1: decode and batches agree).

template <uint32_t T>
VEC_INLINE __m512 zwload16(const uint8_t* t0, const uint8_t* t1, uint32_t i) {
  if constexpr (T == HTP_TILE_F32_X8) {
    const __m512d lo = _mm512_castpd256_pd512(_mm256_loadu_pd((const double*)(t0 + (size_t)i * 32)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_loadu_pd((const double*)(t1 + (size_t)i * 32)), 1));
  }
  const __m256i h = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(t0 + (size_t)i * 16)),
                                            load128(t1 + (size_t)i * 16), 1);
  if constexpr (T == HTP_TILE_F16_X8) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

template <uint32_t T, int NC>
void zgemm_f_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride,
                  uint32_t k, uint32_t nrows) {
  const uint32_t kp = htp_tile_padded_k(T, k);
  const size_t rb = htp_tile_row_bytes(T, k);
  const float* x[NC];
  for (int c = 0; c < NC; c++) x[c] = (const float*)(act + c * act_stride);
  const uint32_t n_pairs = nrows > R ? (nrows - R + 2 * R - 1) / (2 * R) : 0;  // second tile has a row
  for (uint32_t t = 0; t < 2 * n_pairs; t += 2) {
    const uint8_t* t0 = w + t * rb;
    const uint8_t* t1 = t0 + rb;
    __m512 acc[NC];
    for (int c = 0; c < NC; c++) acc[c] = _mm512_setzero_ps();
    for (uint32_t i = 0; i < kp; i++) {
      const __m512 wv = zwload16<T>(t0, t1, i);
      for (int c = 0; c < NC; c++) acc[c] = _mm512_fmadd_ps(wv, _mm512_set1_ps(x[c][i]), acc[c]);
    }
    const uint32_t n = nrows - t * R;
    const __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
    for (int c = 0; c < NC; c++) _mm512_mask_storeu_ps(dst + c * dst_stride + t * R, m, acc[c]);
  }
  const uint32_t t = 2 * n_pairs;
  if (t * R < nrows) gemm_f_cols<T, NC>(w + t * rb, act, act_stride, dst + t * R, dst_stride, k, nrows - t * R);
}

// 12 activation rows: 8 independent fma chains per weight vector would just cover the fma
// latency on two ports, with nothing to spare for the weight vector's insert; 12 left flash
// attention's products (prefill, F32 Q x K and F16 V) ~3% faster (9 alternating pairs).
constexpr int kZFCols = 12;

template <uint32_t T>
void zgemm_f(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
             size_t dst_stride, uint32_t k, uint32_t nrows) {
  by_act_blocks<kZFCols>(nact, [&]<int NC>(uint32_t c) {
    zgemm_f_cols<T, NC>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  });
}

// GEMV: the GEMM's tile-pair kernel for one activation row (the same per-lane sums, so GEMV
// and GEMM agree bit for bit), with prefetch.
template <class P>
void zgemv(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  zgemm_cols<P, 1>(w, act, 0, dst, 0, k, nrows);
}
template <uint32_t T>
void zkgemv(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  zkgemm_cols<T, 1>(w, act, 0, dst, 0, k, nrows);
}

// ---- activation quantizers on zmm: quant_block's numerics (vec.h), so the same bytes ----------

// The activations stream from L3 or DRAM, and each block's chain (max, divide, codes, sums) is
// long: without software prefetch the quantizers ran at half speed. 2 KiB ahead, `lines` lines.
VEC_INLINE void zquant_prefetch(const float* x, int lines) {
  for (int l = 0; l < lines; l++) _mm_prefetch((const char*)(x + 512 + 16 * l), _MM_HINT_T0);
}

// Round-half-even codes of 16 floats (embedded rounding: independent of MXCSR).
VEC_INLINE __m512i zcodes(__m512 x, __m512 id) {
  return _mm512_cvt_roundps_epi32(_mm512_mul_ps(x, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// max(|x|, m): a NaN in x leaves m, as the generic comparison skips it.
VEC_INLINE __m512 zabs_max(const float* x, __m512 m) { return _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x)), m); }
// d = amax / 127 and 1 / d (0 for an all-zero block), as the generic quantizer.
VEC_INLINE float zscale(float amax, __m512* id) {
  const float d = amax / 127.0f;
  *id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  return d;
}

void zquant_q8_32(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_32*)act;
  for (uint32_t i = 0; i < k / 32; i++, x += 32) {
    zquant_prefetch(x, 2);
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    __m512 id;
    b[i].d = zscale(_mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1))), &id);
    const __m512i c0 = zcodes(x0, id), c1 = zcodes(x1, id);
    _mm_storeu_si128((__m128i*)b[i].q, _mm512_cvtsepi32_epi8(c0));
    _mm_storeu_si128((__m128i*)(b[i].q + 16), _mm512_cvtsepi32_epi8(c1));
    b[i].sum = _mm512_reduce_add_epi32(_mm512_add_epi32(c0, c1));
  }
}

// 64 codes (4 vectors of int32, |c| <= 127) as 64 bytes in order: two packs per 128-bit lane leave
// lane i = [c0_i, c1_i, c2_i, c3_i] (4 bytes each); one dword permute puts c_j's lane i at 4j + i.
VEC_INLINE __m512i zpack64(const __m512i* c) {
  const __m512i w = _mm512_packs_epi16(_mm512_packs_epi32(c[0], c[1]), _mm512_packs_epi32(c[2], c[3]));
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), w);
}

// The 16-code sums come from the packed bytes: vpsadbw on the codes + 128 (xor 0x80) sums 8
// bytes per qword, so two qwords are a sum16 + 16 * 128. Cheaper than 16 horizontal adds.
void zquant_q8_256(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_256*)act;
  for (uint32_t i = 0; i < k / 256; i++, x += 256) {
    zquant_prefetch(x, 16);
    __m512 m = _mm512_setzero_ps();
    for (int j = 0; j < 16; j++) m = zabs_max(x + 16 * j, m);
    __m512 id;
    b[i].d = zscale(_mm512_reduce_max_ps(m), &id);
    __m512i sums[4];  // qword 2l of sums[g]: sum16 of sub-block 4g + l, + 2048
    for (int g = 0; g < 4; g++) {
      __m512i c[4];
      for (int e = 0; e < 4; e++) c[e] = zcodes(_mm512_loadu_ps(x + 64 * g + 16 * e), id);
      const __m512i q = zpack64(c);
      _mm512_storeu_si512(b[i].q + 64 * g, q);
      const __m512i sad = _mm512_sad_epu8(_mm512_xor_si512(q, _mm512_set1_epi8(-128)), _mm512_setzero_si512());
      sums[g] = _mm512_add_epi64(sad, _mm512_bsrli_epi128(sad, 8));
    }
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m128i lo = _mm512_cvtepi64_epi16(_mm512_permutex2var_epi64(sums[0], even, sums[1]));
    const __m128i hi = _mm512_cvtepi64_epi16(_mm512_permutex2var_epi64(sums[2], even, sums[3]));
    const __m256i s16 = _mm256_sub_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1),
                                         _mm256_set1_epi16(16 * 128));
    _mm256_storeu_si256((__m256i*)b[i].sum16, s16);
    _mm_storeu_si128((__m128i*)b[i].sum32, _mm256_cvtepi32_epi16(_mm256_madd_epi16(s16, _mm256_set1_epi16(1))));
    b[i].pad[0] = b[i].pad[1] = b[i].pad[2] = 0;
  }
}

// Decode units of the ymm GEMV. On a Zen 5 (2 vCPUs), tg64 in alternating rounds against one
// stream in 128 KiB units: 1 MiB units with two streams 1.08-1.17x at 1 thread and 1.07-1.20x
// at 2 (four presets, medians of 4-10 rounds). Two streams in 128 KiB units, or one stream in
// 1 MiB units: no faster. 512 KiB or 2 MiB units with two streams 1.03-1.14x, four streams in
// 1 MiB units 1.07x / 0.98x (1B Q4_0, 3-7 rounds).
constexpr uint32_t kYmmGemvUnitBytes = 1u << 20;

// zmm_gemv: the GEMV on zmm too (the GEMM's tile-pair kernel), else the ymm GEMV of
// x86_kernels.h in its EVEX form (vpdpbusd ymm). Both give the same bits.
constexpr vec_kernels avx512_table(bool zmm_gemv) {
  vec_kernels k = x86_table("avx512");
  k.gemv_variant = zmm_gemv ? "zmm GEMV" : "ymm GEMV";
  if (!zmm_gemv) k.gemm_prefs.gemv_unit_bytes = kYmmGemvUnitBytes;
  auto set = [&k, zmm_gemv](uint32_t tile, vec_gemv_fn v, vec_gemm_fn m) {
    k.mm[tile - HTP_TILE_FIRST].gemm = m;
    if (zmm_gemv) k.mm[tile - HTP_TILE_FIRST].gemv = v;
  };
  set(HTP_TILE_Q4_0_X8, zgemv<ZQ4_0>, zgemm<ZQ4_0>);
  set(HTP_TILE_Q4_1_X8, zgemv<ZQ4_1>, zgemm<ZQ4_1>);
  set(HTP_TILE_Q5_0_X8, zgemv<ZQ5_0>, zgemm<ZQ5_0>);
  set(HTP_TILE_Q5_1_X8, zgemv<ZQ5_1>, zgemm<ZQ5_1>);
  set(HTP_TILE_Q8_0_X8, zgemv<ZQ8_0>, zgemm<ZQ8_0>);
  set(HTP_TILE_IQ4_NL_X8, zgemv<ZIQ4_NL>, zgemm<ZIQ4_NL>);
  set(HTP_TILE_MXFP4_X8, zgemv<ZMXFP4>, zgemm<ZMXFP4>);
  set(HTP_TILE_Q4_K_X8, zkgemv<HTP_TILE_Q4_K_X8>, zkgemm<HTP_TILE_Q4_K_X8>);
  set(HTP_TILE_Q5_K_X8, zkgemv<HTP_TILE_Q5_K_X8>, zkgemm<HTP_TILE_Q5_K_X8>);
  set(HTP_TILE_Q6_K_X8, zkgemv<HTP_TILE_Q6_K_X8>, zkgemm<HTP_TILE_Q6_K_X8>);
  // Float weights: the GEMM serves decode too (matmul.cpp), so the GEMV entry stays ymm.
  k.mm[HTP_TILE_F32_X8 - HTP_TILE_FIRST].gemm = zgemm_f<HTP_TILE_F32_X8>;
  k.mm[HTP_TILE_F16_X8 - HTP_TILE_FIRST].gemm = zgemm_f<HTP_TILE_F16_X8>;
  k.mm[HTP_TILE_BF16_X8 - HTP_TILE_FIRST].gemm = zgemm_f<HTP_TILE_BF16_X8>;
  k.quant[HTP_ACT_Q8_32] = zquant_q8_32;
  k.quant[HTP_ACT_Q8_256] = zquant_q8_256;
  return k;
}

}  // namespace

const vec_kernels* vec_avx512_kernels_gemv(bool zmm_gemv) {
  static constexpr vec_kernels zmm = avx512_table(true), ymm = avx512_table(false);
  return zmm_gemv ? &zmm : &ymm;
}

const vec_kernels* vec_avx512_kernels() { return vec_avx512_kernels_gemv(vec_cpu_zmm_gemv()); }

}  // namespace hexllm::htp
