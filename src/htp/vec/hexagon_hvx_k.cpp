// HVX kernels for the K-quant tiles (256-element super-blocks), Hexagon v67 128-byte HVX.
//
// Q4_K / Q5_K: a sub-block of 32 is one chunk4/chunk5, one 128-byte nibble vector, so its dot
// products use the same activation indices as Q4_0. Four sub-blocks are reduced together (lane
// 8s + r), multiplied lane-wise by their 6-bit scales (vmpyie, word x unsigned halfword) and
// accumulated; the super-block's integer sum per row then goes to the scalar core, which applies
// d and dmin in the order of generic.cpp (bit-identical). The mins term sum(mn * sum32) is 64
// scalar multiply-adds per super-block and stays scalar.
//
// Q6_K: sub-blocks of 16 are 96-byte chunk6 (2 nibble vectors + H6); two sub-blocks make one
// 128-byte vector. Codes become signed (q - 32) before a signed vrmpy, so no correction through
// sum16 is needed. The int8 scales s enter vmpyie as s + 128 (unsigned); 128 * dot is taken off.
//
// Integer headroom: |dot| <= 32 * 63 * 128 per sub-block, scales < 256: well inside int32.
#if defined(__hexagon__)

#include "htp/vec/hexagon_hvx_k.h"

#include "base/fp16.h"
#include "htp/vec/hexagon_hvx.h"

namespace hexllm::htp {
namespace {

using namespace hvx;

// Lane i = 8s + r of a reduced group of four sub-blocks takes the scale of sub-block s, row r:
// byte 16 * (s / 2) + 2r + s % 2 of the group's 32 scale bytes (pair layout of tiles.h).
inline constexpr ByteVec kIdxSc =
    make_bytes([](uint32_t k) { return (uint8_t)(16 * (k / 32 / 2) + 2 * (k / 4 % 8) + k / 32 % 2); });
// Q6_K: bits 4,5 of the codes come from bits 0,1 / 4,5 (low nibbles) of H6 in sections 0 / 1.
inline constexpr ByteVec kH6Shift = make_bytes([](uint32_t i) { return (uint8_t)(i % 2 == 0 && i / 32 % 2 == 0 ? 4 : 0); });

HVX_INLINE float fp16_at(const uint8_t* p, uint32_t r) {
  uint16_t h;
  __builtin_memcpy(&h, p + 2 * r, 2);
  return fp16_to_fp32(h);
}

// Scales of sub-blocks 4g..4g+3 as words (lane 8s + r), from their 32 pair-layout bytes.
template <bool Signed>
HVX_INLINE HVX_Vector scales(const uint8_t* sc32) {
  HVX_Vector v = lut(vec_of(kIdxSc), lut_table(loadu(sc32, 32)));
  if constexpr (Signed) v = Q6_V_vxor_VV(v, splat8(0x80));
  return Q6_V_vand_VV(v, Q6_V_vsplat_R(0xFF));
}

struct W2 {
  HVX_Vector lo, hi;
};

template <bool Q5>
HVX_INLINE W2 unpack45(const uint8_t* chunk) {
  const HVX_Vector v = loadu(chunk, 128);
  if constexpr (Q5) {
    HVX_Vector lo, hi;
    h5_bits(chunk + 128, lo, hi);
    return {Q6_V_vor_VV(nib_lo(v), lo), Q6_V_vor_VV(nib_hi(v), hi)};
  }
  return {nib_lo(v), nib_hi(v)};
}

// Two chunk6 (sub-blocks u, u+1) at p as signed codes q - 32: sections [u0 u1 u+1_0 u+1_1].
HVX_INLINE W2 unpack6(const uint8_t* p) {
  const HVX_VectorPred first64 = Q6_Q_vsetq_R(64);
  const HVX_Vector v = Q6_V_vmux_QVV(first64, loadu(p, 128), loadu(p + 32, 128));
  const HVX_VectorPair hh = Q6_W_vshuff_VVR(loadu(p + 64, 128), loadu(p + 64, 128), -32);
  const HVX_Vector h = Q6_V_vmux_QVV(first64, Q6_V_lo_W(hh), Q6_V_hi_W(hh));
  const HVX_Vector sh = vec_of(kH6Shift);
  const HVX_Vector b_lo = Q6_V_vand_VV(Q6_Vh_vasl_VhVh(h, sh), splat8(0x30));
  const HVX_Vector b_hi = Q6_V_vand_VV(Q6_Vh_vasl_VhVh(Q6_Vuh_vlsr_VuhR(h, 2), sh), splat8(0x30));
  const HVX_Vector z = splat8(32);
  return {Q6_Vb_vsub_VbVb(Q6_V_vor_VV(nib_lo(v), b_lo), z), Q6_Vb_vsub_VbVb(Q6_V_vor_VV(nib_hi(v), b_hi), z)};
}

template <bool Signed>
HVX_INLINE HVX_Vector dot2(const W2& w, const int8_t* q) {
  const HVX_Vector t = act_table(q);
  if constexpr (Signed)
    return Q6_Vw_vrmpyacc_VwVbVb(Q6_Vw_vrmpy_VbVb(w.lo, lut(vec_of(kIdxLo), t)), w.hi, lut(vec_of(kIdxHi), t));
  else
    return Q6_Vw_vrmpyacc_VwVubVb(Q6_Vw_vrmpy_VubVb(w.lo, lut(vec_of(kIdxLo), t)), w.hi, lut(vec_of(kIdxHi), t));
}

enum Kind { kQ4K, kQ5K, kQ6K };

// Activation rows per pass of the weights in GEMM: each adds live accumulators to the unpacked
// sub-blocks and constants; past these the register allocator spills in the super-block loop
// (checked by scripts/inspect-hexagon.sh). Q5_K holds its H5 bits as well, so it takes one.
template <Kind K>
constexpr int kGemmCols = K == kQ5K ? 1 : 2;

template <Kind K>
struct Layout {
  static constexpr uint32_t kTile = K == kQ4K ? HTP_TILE_Q4_K_X8 : K == kQ5K ? HTP_TILE_Q5_K_X8 : HTP_TILE_Q6_K_X8;
  static constexpr uint32_t kChunk = K == kQ5K ? 160 : 128;
  static constexpr uint32_t kSc = K == kQ4K ? 1024 : K == kQ5K ? 1280 : 1536;
  static constexpr uint32_t kD = K == kQ6K ? 1664 : kSc + 128;
};

// NC activation rows against one super-block of one row tile; y[c][r] accumulates.
template <Kind K, int NC>
HVX_INLINE void superblock(const uint8_t* sb, const htp_act_q8_256* const* a, uint32_t b, float (*y)[R]) {
  using L = Layout<K>;
  HVX_Vector acc[NC], rsum[NC];
#pragma clang loop unroll(full)
  for (int c = 0; c < NC; c++) acc[c] = rsum[c] = Q6_V_vzero();
  for (uint32_t g = 0; g < 4; g++) {
    if constexpr (K == kQ6K) {
      const W2 w01 = unpack6(sb + 384 * g), w23 = unpack6(sb + 384 * g + 192);
      const HVX_Vector sc = scales<true>(sb + L::kSc + 32 * g);
#pragma clang loop unroll(full)
      for (int c = 0; c < NC; c++) {
        const int8_t* q = a[c][b].q + 64 * g;
        const HVX_VectorPair d = Q6_W_vdeal_VVR(dot2<true>(w23, q + 32), dot2<true>(w01, q), -32);
        const HVX_Vector red = Q6_Vw_vadd_VwVw(Q6_V_lo_W(d), Q6_V_hi_W(d));
        acc[c] = Q6_Vw_vmpyieacc_VwVwVuh(acc[c], red, sc);
        rsum[c] = Q6_Vw_vadd_VwVw(rsum[c], red);
      }
    } else {
      if (g >= 2) break;
      const uint8_t* ch = sb + L::kChunk * 4 * g;
      const W2 w0 = unpack45<K == kQ5K>(ch), w1 = unpack45<K == kQ5K>(ch + L::kChunk),
               w2 = unpack45<K == kQ5K>(ch + 2 * L::kChunk), w3 = unpack45<K == kQ5K>(ch + 3 * L::kChunk);
      const HVX_Vector sc = scales<false>(sb + L::kSc + 32 * g);
#pragma clang loop unroll(full)
      for (int c = 0; c < NC; c++) {
        const int8_t* q = a[c][b].q + 128 * g;
        const HVX_Vector red = reduce4(dot2<false>(w0, q), dot2<false>(w1, q + 32), dot2<false>(w2, q + 64),
                                       dot2<false>(w3, q + 96));
        acc[c] = Q6_Vw_vmpyieacc_VwVwVuh(acc[c], red, sc);
      }
    }
  }
#pragma clang loop unroll(full)
  for (int c = 0; c < NC; c++) {
    HVX_Vector s = acc[c];
    if constexpr (K == kQ6K) s = Q6_Vw_vsub_VwVw(s, Q6_Vw_vasl_VwR(rsum[c], 7));
    Lanes l;
    to_lanes(l, reduce1(s));
    const htp_act_q8_256& ab = a[c][b];
    for (uint32_t r = 0; r < R; r++) {
      y[c][r] = fma32(fp16_at(sb + L::kD, r) * ab.d, (float)l.w[r], y[c][r]);
      if constexpr (K != kQ6K) {
        int32_t imin = 0;
        for (uint32_t s8 = 0; s8 < 8; s8++)
          imin += sb[L::kSc + 64 + 16 * (s8 / 2) + 2 * r + s8 % 2] * ab.sum32[s8];
        y[c][r] = fma32(-(fp16_at(sb + L::kD + 16, r) * ab.d), (float)imin, y[c][r]);
      }
    }
  }
}

template <Kind K, int NC>
void gemm_cols(const uint8_t* w, const uint8_t* act, size_t act_stride, float* dst, size_t dst_stride, uint32_t k,
               uint32_t nrows) {
  constexpr uint32_t kBB = htp_tile_info(Layout<K>::kTile).block_bytes;
  const uint32_t nb = k / 256;
  const size_t rb = htp_tile_row_bytes(Layout<K>::kTile, k);
  const htp_act_q8_256* a[NC];
  for (int c = 0; c < NC; c++) a[c] = (const htp_act_q8_256*)(act + c * act_stride);
  for (uint32_t t = 0; t * R < nrows; t++) {
    Acc acc;
    acc.clear();
    for (uint32_t b = 0; b < nb; b++) superblock<K, NC>(w + t * rb + (size_t)b * kBB, a, b, acc.y);
    for (int c = 0; c < NC; c++)
      for (uint32_t r = 0; r < R && t * R + r < nrows; r++) dst[c * dst_stride + t * R + r] = acc.y[c][r];
  }
}

template <Kind K>
void gemm_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst, size_t dst_stride,
            uint32_t k, uint32_t nrows) {
  uint32_t c = 0;
  for (; c + kGemmCols<K> <= nact; c += kGemmCols<K>)
    gemm_cols<K, kGemmCols<K>>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
  for (; c < nact; c++)
    gemm_cols<K, 1>(w, act + c * act_stride, act_stride, dst + c * dst_stride, dst_stride, k, nrows);
}

}  // namespace

void hvx_gemv_q4_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  gemm_cols<kQ4K, 1>(w, act, 0, dst, 0, k, nrows);
}
void hvx_gemv_q5_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  gemm_cols<kQ5K, 1>(w, act, 0, dst, 0, k, nrows);
}
void hvx_gemv_q6_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  gemm_cols<kQ6K, 1>(w, act, 0, dst, 0, k, nrows);
}
void hvx_gemm_q4_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows) {
  gemm_k<kQ4K>(w, act, act_stride, nact, dst, dst_stride, k, nrows);
}
void hvx_gemm_q5_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows) {
  gemm_k<kQ5K>(w, act, act_stride, nact, dst, dst_stride, k, nrows);
}
void hvx_gemm_q6_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows) {
  gemm_k<kQ6K>(w, act, act_stride, nact, dst, dst_stride, k, nrows);
}

}  // namespace hexllm::htp

#endif  // __hexagon__
