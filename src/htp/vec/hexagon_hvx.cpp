// HVX kernels (Hexagon v67, 128-byte vectors) for the 32-element block types, and the HVX table.
//
// A block tile's codes are 128 bytes (4 nibble vectors) or 256 (Q8_0): one or two HVX vectors of
// 8 rows x 16 (or 32) elements. vrmpy multiplies each 4-byte lane (4 elements of one row) by the
// matching 4 activation bytes, which vlut32 places from the 32 activation codes of the block. The
// four sections of a result are added for four blocks at once (reduce4), then the scalar core
// runs the per-block float step of generic.cpp in the same order: the same bits.
//
// Integer headroom: int32 lanes, at most 32 * 128 * 128 per block, no saturation anywhere.
#if defined(__hexagon__)

#include "htp/vec/hexagon_hvx.h"

#include "base/fp16.h"
#include "htp/vec/hexagon_hvx_k.h"
#include "htp/vec/vec.h"
#include "quant/blocks.h"

namespace hexllm::htp {
namespace {

using namespace hvx;

// Codebook tables for vlut32 (entry e in bytes 2e, 2e+1).
inline constexpr ByteVec kIq4nlLut = make_bytes([](uint32_t i) { return (uint8_t)quant::kIq4nlValues[(i / 2) % 16]; });
inline constexpr ByteVec kMxfp4Lut = make_bytes([](uint32_t i) { return (uint8_t)quant::kMxfp4Values[(i / 2) % 16]; });

// Weight operands of one block: two vectors, and whether their bytes are signed.
struct WBlock {
  HVX_Vector a, b;
};

// Policies: unpack() the block's codes into two vectors that pair with the activation vectors
// lut(kIdxA, act), lut(kIdxB, act); kSigned picks vrmpy(b, b) over vrmpy(ub, b); kZero the
// zero-point taken off through the activation block sum; kScale / kMinv the offsets of the f16
// row scales / mins (0: none; MXFP4 has e8m0 bytes, decoded by scale() on the scalar core).
struct PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_0_X8;
  static constexpr bool kSigned = false, kMin = false, kNib = true;
  static constexpr int32_t kZero = 8;
  static constexpr uint32_t kScale = 128, kMinv = 0;  // f16 scales, mins (0: none / e8m0)
  static HVX_INLINE WBlock unpack(const uint8_t* b) {
    const HVX_Vector v = loadu(b, 128);
    return {nib_lo(v), nib_hi(v)};
  }
};

struct PQ4_1 : PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q4_1_X8;
  static constexpr bool kMin = true;
  static constexpr int32_t kZero = 0;
  static constexpr uint32_t kMinv = 144;
};

struct PQ5_0 : PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_0_X8;
  static constexpr int32_t kZero = 16;
  static constexpr uint32_t kScale = 160;
  static HVX_INLINE WBlock unpack(const uint8_t* b) {
    const HVX_Vector v = loadu(b, 128);
    HVX_Vector lo, hi;
    h5_bits(b + 128, lo, hi);
    return {Q6_V_vor_VV(nib_lo(v), lo), Q6_V_vor_VV(nib_hi(v), hi)};
  }
};

struct PQ5_1 : PQ5_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q5_1_X8;
  static constexpr bool kMin = true;
  static constexpr int32_t kZero = 0;
  static constexpr uint32_t kMinv = 176;
};

struct PQ8_0 : PQ4_0 {
  static constexpr uint32_t kTile = HTP_TILE_Q8_0_X8;
  static constexpr bool kSigned = true, kNib = false;
  static constexpr int32_t kZero = 0;
  static constexpr uint32_t kScale = 256;
  static HVX_INLINE WBlock unpack(const uint8_t* b) { return {loadu(b, 128), loadu(b + 128, 128)}; }
};

template <const ByteVec& Lut>
struct PCodebook : PQ4_0 {
  static constexpr bool kSigned = true;
  static constexpr int32_t kZero = 0;
  static HVX_INLINE WBlock unpack(const uint8_t* b) {
    const HVX_Vector v = loadu(b, 128);
    return {lut(nib_lo(v), vec_of(Lut)), lut(nib_hi(v), vec_of(Lut))};
  }
};

struct PIQ4_NL : PCodebook<kIq4nlLut> {
  static constexpr uint32_t kTile = HTP_TILE_IQ4_NL_X8;
};

struct PMXFP4 : PCodebook<kMxfp4Lut> {
  static constexpr uint32_t kTile = HTP_TILE_MXFP4_X8;
  static constexpr uint32_t kScale = 0;
  static HVX_INLINE float scale(const uint8_t* b, uint32_t r) { return quant::e8m0_to_fp32_half(b[128 + r]); }
};

template <class P>
HVX_INLINE HVX_Vector block_dot(const WBlock& w, const int8_t* q) {
  const HVX_Vector t = act_table(q);
  const HVX_Vector ia = P::kNib ? vec_of(kIdxLo) : vec_of(kIdxG0);
  const HVX_Vector ib = P::kNib ? vec_of(kIdxHi) : vec_of(kIdxG1);
  if constexpr (P::kSigned)
    return Q6_Vw_vrmpyacc_VwVbVb(Q6_Vw_vrmpy_VbVb(w.a, lut(ia, t)), w.b, lut(ib, t));
  else
    return Q6_Vw_vrmpyacc_VwVubVb(Q6_Vw_vrmpy_VubVb(w.a, lut(ia, t)), w.b, lut(ib, t));
}

// Up to four activation rows (y[c]) against one row tile; blocks in groups of four.
template <class P>
void tile_cols(const uint8_t* tile, const uint8_t* act, size_t act_stride, uint32_t nc, uint32_t nb,
               float (*y)[R]) {
  constexpr uint32_t kBB = htp_tile_info(P::kTile).block_bytes;
  for (uint32_t b0 = 0; b0 < nb; b0 += 4) {
    const uint32_t n = nb - b0 < 4 ? nb - b0 : 4;
    const uint8_t* blk = tile + (size_t)b0 * kBB;
    // f16 scales (and mins) of the four blocks decoded by HVX, read per row by the scalar core.
    // Decoded before the codes are unpacked, so the two never hold registers at once.
    [[maybe_unused]] Lanes dw_l, mn_l;
    if constexpr (P::kScale != 0) to_lanes(dw_l, f16x8_blocks(blk + P::kScale, kBB, n));
    if constexpr (P::kMinv != 0) to_lanes(mn_l, f16x8_blocks(blk + P::kMinv, kBB, n));
    const WBlock zero = {Q6_V_vzero(), Q6_V_vzero()};
    const WBlock w0 = P::unpack(blk);
    const WBlock w1 = n > 1 ? P::unpack(blk + kBB) : zero;
    const WBlock w2 = n > 2 ? P::unpack(blk + 2 * kBB) : zero;
    const WBlock w3 = n > 3 ? P::unpack(blk + 3 * kBB) : zero;
    for (uint32_t c = 0; c < nc; c++) {
      const auto* a = (const htp_act_q8_32*)(act + c * act_stride) + b0;
      const HVX_Vector s0 = block_dot<P>(w0, a[0].q);
      const HVX_Vector s1 = n > 1 ? block_dot<P>(w1, a[1].q) : Q6_V_vzero();
      const HVX_Vector s2 = n > 2 ? block_dot<P>(w2, a[2].q) : Q6_V_vzero();
      const HVX_Vector s3 = n > 3 ? block_dot<P>(w3, a[3].q) : Q6_V_vzero();
      Lanes l;
      to_lanes(l, reduce4(s0, s1, s2, s3));
      for (uint32_t i = 0; i < n; i++) {
        [[maybe_unused]] const uint8_t* bi = blk + i * kBB;
        const int32_t zp = P::kZero * a[i].sum;
        for (uint32_t r = 0; r < R; r++) {
          float dw;
          if constexpr (P::kScale != 0)
            dw = lane_f32(dw_l, 8 * i + r);
          else
            dw = P::scale(bi, r);
          y[c][r] = fma32(dw * a[i].d, (float)(l.w[8 * i + r] - zp), y[c][r]);
          if constexpr (P::kMin) y[c][r] = fma32(lane_f32(mn_l, 8 * i + r), a[i].d * (float)a[i].sum, y[c][r]);
        }
      }
    }
  }
}

template <class P>
void gemm32(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
            size_t dst_stride, uint32_t k, uint32_t nrows) {
  constexpr uint32_t kCols = 4;  // the rows of Acc
  const uint32_t nb = k / 32;
  const size_t row_bytes = htp_tile_row_bytes(P::kTile, k);
  for (uint32_t t = 0; t * R < nrows; t++) {
    for (uint32_t c0 = 0; c0 < nact; c0 += kCols) {
      const uint32_t nc = nact - c0 < kCols ? nact - c0 : kCols;
      Acc acc;
      acc.clear();
      tile_cols<P>(w + t * row_bytes, act + c0 * act_stride, act_stride, nc, nb, acc.y);
      for (uint32_t c = 0; c < nc; c++)
        for (uint32_t r = 0; r < R && t * R + r < nrows; r++)
          dst[(c0 + c) * dst_stride + t * R + r] = acc.y[c][r];
    }
  }
}

template <class P>
void gemv32(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  gemm32<P>(w, act, 0, 1, dst, 0, k, nrows);
}

// Float-weight tiles and the F32 activation copy stay scalar (v67 HVX has no float): these
// forward to the generic table.
template <uint32_t T>
void gemv_generic(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  vec_generic_kernels().for_tile(T).gemv(w, act, dst, k, nrows);
}
template <uint32_t T>
void gemm_generic(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                  size_t dst_stride, uint32_t k, uint32_t nrows) {
  vec_generic_kernels().for_tile(T).gemm(w, act, act_stride, nact, dst, dst_stride, k, nrows);
}
template <uint32_t A>
void quant_generic(const float* x, uint8_t* act, uint32_t k) {
  vec_generic_kernels().quant[A](x, act, k);
}

template <class P>
constexpr vec_mm_kernels q32() {
  return {gemv32<P>, gemm32<P>};
}
template <uint32_t T>
constexpr vec_mm_kernels fwd() {
  return {gemv_generic<T>, gemm_generic<T>};
}

constexpr vec_kernels kHvx = {
    "hvx",
    {q32<PQ4_0>(), q32<PQ4_1>(), q32<PQ8_0>(), q32<PMXFP4>(), q32<PIQ4_NL>(), fwd<HTP_TILE_F32_X8>(),
     fwd<HTP_TILE_F16_X8>(), fwd<HTP_TILE_BF16_X8>(), q32<PQ5_0>(), q32<PQ5_1>(),
     {hvx_gemv_q4_k, hvx_gemm_q4_k}, {hvx_gemv_q5_k, hvx_gemm_q5_k}, {hvx_gemv_q6_k, hvx_gemm_q6_k}},
    {quant_generic<HTP_ACT_F32>, hvx_quant_q8_32, hvx_quant_q8_256},
};
static_assert(HTP_TILE_END - HTP_TILE_FIRST == 13, "kHvx lists every tile type");

}  // namespace

const vec_kernels* vec_hvx_kernels() { return &kHvx; }

}  // namespace hexllm::htp

#endif  // __hexagon__
