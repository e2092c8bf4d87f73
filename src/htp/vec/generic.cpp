// Portable scalar implementation: activation quantizers and GEMV/GEMM for every tile type.
// Written for clarity; it is the reference the SIMD paths must match (see vec.h for the
// arithmetic they share) and the Hexagon path until HVX kernels exist.
#include "base/fp16.h"
#include "htp/vec/repack.h"
#include "htp/vec/vec.h"
#include "quant/blocks.h"

namespace hexllm::htp {
namespace {

constexpr uint32_t R = kHtpTileRows;

// Round half to even without libm: adding 1.5 * 2^23 forces rounding at the units place
// (valid for |x| < 2^22; quantizer inputs are within +-127.5).
// Compilers do not reassociate float math without -ffast-math, which this project never uses.
inline float round_even(float x) {
  const float big = 12582912.0f;
  return (x + big) - big;
}

// Fused multiply-add (one rounding), as the SIMD paths use. Hexagon's sffma is fused; elsewhere
// the compiler emits an FMA instruction or the libm call.
inline float fma32(float a, float b, float c) {
#if defined(__hexagon__)
  return __builtin_HEXAGON_F2_sffma(c, a, b);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

inline float absf(float x) { return x < 0 ? -x : x; }

float amax_of(const float* x, uint32_t n) {
  float m = 0;
  for (uint32_t i = 0; i < n; i++) m = absf(x[i]) > m ? absf(x[i]) : m;
  return m;
}

// Quantizes n values with one scale d = amax / 127 (returned) into q.
float quant_block(const float* x, uint32_t n, int8_t* q) {
  const float d = amax_of(x, n) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (uint32_t i = 0; i < n; i++) {
    const float v = round_even(x[i] * id);
    // Finite inputs give |v| <= 127. Non-finite ones (inf/NaN activations) give unspecified codes,
    // but never an undefined float -> int conversion.
    q[i] = (int8_t)(v >= -127.0f && v <= 127.0f ? (int)v : 0);
  }
  return d;
}

void quant_q8_32(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_32*)act;
  for (uint32_t i = 0; i < k / 32; i++, x += 32) {
    b[i].d = quant_block(x, 32, b[i].q);
    int32_t s = 0;
    for (int j = 0; j < 32; j++) s += b[i].q[j];
    b[i].sum = s;
  }
}

void quant_q8_256(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_256*)act;
  for (uint32_t i = 0; i < k / 256; i++, x += 256) {
    b[i].d = quant_block(x, 256, b[i].q);
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int l = 0; l < 16; l++) s += b[i].q[16 * j + l];
      b[i].sum16[j] = (int16_t)s;
    }
    for (int j = 0; j < 8; j++) b[i].sum32[j] = (int16_t)(b[i].sum16[2 * j] + b[i].sum16[2 * j + 1]);
    b[i].pad[0] = b[i].pad[1] = b[i].pad[2] = 0;
  }
}

void quant_f32(const float* x, uint8_t* act, uint32_t k) {
  auto* y = (float*)act;
  const uint32_t kp = (k + 31) / 32 * 32;
  for (uint32_t i = 0; i < kp; i++) y[i] = i < k ? x[i] : 0.0f;
}

// bf16 rounded to nearest even, as AVX512-BF16's vcvtne2ps2bf16 (the amx table's quantizer)
// does: denormal inputs become zero of their sign, NaNs stay quiet NaNs of their sign.
void quant_bf16(const float* x, uint8_t* act, uint32_t k) {
  auto* y = (uint16_t*)act;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t u;
    __builtin_memcpy(&u, &x[i], 4);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    if ((u & 0x7fffffffu) > 0x7f800000u) y[i] = (uint16_t)((u >> 16) | 0x40);
    else y[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}

// ---- float weights -------------------------------------------------------------------------

template <uint32_t T>
float wload(const uint8_t* p) {
  if constexpr (T == HTP_TILE_F32_X8) {
    float f;
    __builtin_memcpy(&f, p, 4);
    return f;
  } else {
    uint16_t h;
    __builtin_memcpy(&h, p, 2);
    return T == HTP_TILE_F16_X8 ? fp16_to_fp32(h) : bf16_to_fp32(h);
  }
}

template <uint32_t T>
void gemm_float(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                size_t dst_stride, uint32_t k, uint32_t nrows) {
  const uint32_t es = T == HTP_TILE_F32_X8 ? 4 : 2;
  const uint32_t kp = htp_tile_padded_k(T, k);
  const size_t row_bytes = htp_tile_row_bytes(T, k);
  for (uint32_t t = 0; t * R < nrows; t++) {
    const uint8_t* tile = w + t * row_bytes;
    for (uint32_t c = 0; c < nact; c++) {
      const float* x = (const float*)(act + c * act_stride);
      for (uint32_t r = 0; r < R && t * R + r < nrows; r++) {
        float s = 0;
        for (uint32_t i = 0; i < kp; i++) s = fma32(wload<T>(tile + ((size_t)i * R + r) * es), x[i], s);
        dst[c * dst_stride + t * R + r] = s;
      }
    }
  }
}

// ---- quantized weights ---------------------------------------------------------------------

// Signed integer value of a weight code (the zero-point of Q4_0/Q5_0/Q6_K is applied later).
template <uint32_t T>
int code_value(uint8_t q) {
  if constexpr (T == HTP_TILE_Q8_0_X8) return (int8_t)q;
  if constexpr (T == HTP_TILE_IQ4_NL_X8) return quant::kIq4nlValues[q];
  if constexpr (T == HTP_TILE_MXFP4_X8) return quant::kMxfp4Values[q];
  return q;
}

template <uint32_t T>
int dot_codes(const uint8_t* q, const int8_t* a, uint32_t n) {
  int s = 0;
  for (uint32_t i = 0; i < n; i++) s += code_value<T>(q[i]) * a[i];
  return s;
}

// One block tile (8 decoded rows) against one activation block; y[r] accumulates.
template <uint32_t T>
void block32(const vec_qblock* rows, const htp_act_q8_32& a, float* y) {
  for (uint32_t r = 0; r < R; r++) {
    int idot = dot_codes<T>(rows[r].q, a.q, 32);
    if constexpr (T == HTP_TILE_Q4_0_X8) idot -= 8 * a.sum;
    if constexpr (T == HTP_TILE_Q5_0_X8) idot -= 16 * a.sum;
    const float dw = T == HTP_TILE_MXFP4_X8 ? quant::e8m0_to_fp32_half(rows[r].e) : fp16_to_fp32(rows[r].d);
    y[r] = fma32(dw * a.d, (float)idot, y[r]);
    if constexpr (T == HTP_TILE_Q4_1_X8 || T == HTP_TILE_Q5_1_X8)
      y[r] = fma32(fp16_to_fp32(rows[r].m), a.d * (float)a.sum, y[r]);
  }
}

template <uint32_t T>
void block256(const vec_qblock* rows, const htp_act_q8_256& a, float* y) {
  for (uint32_t r = 0; r < R; r++) {
    const vec_qblock& b = rows[r];
    const float d = fp16_to_fp32(b.d) * a.d;
    if constexpr (T == HTP_TILE_Q6_K_X8) {
      int isum = 0, corr = 0;
      for (int u = 0; u < 16; u++) {
        isum += (int8_t)b.sc[u] * dot_codes<T>(b.q + 16 * u, a.q + 16 * u, 16);
        corr += (int8_t)b.sc[u] * a.sum16[u];
      }
      y[r] = fma32(d, (float)(isum - 32 * corr), y[r]);
    } else {
      int isum = 0, imin = 0;
      for (int s = 0; s < 8; s++) {
        isum += b.sc[s] * dot_codes<T>(b.q + 32 * s, a.q + 32 * s, 32);
        imin += b.mn[s] * a.sum32[s];
      }
      y[r] = fma32(d, (float)isum, y[r]);
      y[r] = fma32(-(fp16_to_fp32(b.m) * a.d), (float)imin, y[r]);
    }
  }
}

template <uint32_t T>
void gemm_quant(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                size_t dst_stride, uint32_t k, uint32_t nrows) {
  constexpr htp_tile_desc desc = htp_tile_info(T);
  constexpr uint32_t kCols = 4;
  const uint32_t nb = k / desc.kblock;
  const size_t row_bytes = htp_tile_row_bytes(T, k);
  vec_qblock rows[R];
  for (uint32_t t = 0; t * R < nrows; t++) {
    for (uint32_t c0 = 0; c0 < nact; c0 += kCols) {
      const uint32_t nc = nact - c0 < kCols ? nact - c0 : kCols;
      float y[kCols][R] = {};
      for (uint32_t b = 0; b < nb; b++) {
        vec_tile_decode(T, w + t * row_bytes + (size_t)b * desc.block_bytes, rows);
        for (uint32_t c = 0; c < nc; c++) {
          const uint8_t* a = act + (c0 + c) * act_stride;
          if constexpr (desc.kblock == 32)
            block32<T>(rows, ((const htp_act_q8_32*)a)[b], y[c]);
          else
            block256<T>(rows, ((const htp_act_q8_256*)a)[b], y[c]);
        }
      }
      for (uint32_t c = 0; c < nc; c++)
        for (uint32_t r = 0; r < R && t * R + r < nrows; r++)
          dst[(c0 + c) * dst_stride + t * R + r] = y[c][r];
    }
  }
}

template <uint32_t T>
void gemv(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows) {
  if constexpr (htp_tile_info(T).act == HTP_ACT_F32)
    gemm_float<T>(w, act, 0, 1, dst, 0, k, nrows);
  else
    gemm_quant<T>(w, act, 0, 1, dst, 0, k, nrows);
}

template <uint32_t T>
constexpr vec_mm_kernels entry() {
  if constexpr (htp_tile_info(T).act == HTP_ACT_F32)
    return {gemv<T>, gemm_float<T>};
  else
    return {gemv<T>, gemm_quant<T>};
}

constexpr vec_kernels kGeneric = {
    "generic",
    {entry<HTP_TILE_Q4_0_X8>(), entry<HTP_TILE_Q4_1_X8>(), entry<HTP_TILE_Q8_0_X8>(),
     entry<HTP_TILE_MXFP4_X8>(), entry<HTP_TILE_IQ4_NL_X8>(), entry<HTP_TILE_F32_X8>(),
     entry<HTP_TILE_F16_X8>(), entry<HTP_TILE_BF16_X8>(), entry<HTP_TILE_Q5_0_X8>(),
     entry<HTP_TILE_Q5_1_X8>(), entry<HTP_TILE_Q4_K_X8>(), entry<HTP_TILE_Q5_K_X8>(),
     entry<HTP_TILE_Q6_K_X8>()},
    {quant_f32, quant_q8_32, quant_q8_256, quant_bf16},
};
static_assert(HTP_TILE_END - HTP_TILE_FIRST == 13, "kGeneric lists every tile type");

}  // namespace

const vec_kernels& vec_generic_kernels() { return kGeneric; }

}  // namespace hexllm::htp
