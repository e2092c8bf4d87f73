// Per-block dequantization of every GGUF block type: the one implementation, used by the
// reference path (quant/dequant.cpp) and the device's GET_ROWS kernel (htp/ops/rows.cpp).
// Freestanding (no libc, no exceptions), each function a direct reading of the layout comments
// in blocks.h. Products of a quantized integer with an F16-derived scale are exact in float, so
// the order of the operations below reproduces ggml's results bit for bit.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/fp16.h"
#include "quant/blocks.h"
#include "quant/types.h"

namespace hexllm::quant {

// nb consecutive blocks at src -> nb * block size floats.
using dequant_blocks_fn = void (*)(const uint8_t* src, float* y, uint64_t nb);

namespace dequant_detail {

inline float h2f(uint16_t h) { return fp16_to_fp32(h); }

inline void dequant_q4_0(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q4_0*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK4_0) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK4_0 / 2; j++) {
      y[j] = (float)((b[i].qs[j] & 0xF) - 8) * d;
      y[j + QK4_0 / 2] = (float)((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

inline void dequant_q4_1(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q4_1*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK4_1) {
    const float d = h2f(b[i].d);
    const float m = h2f(b[i].m);
    for (int j = 0; j < QK4_1 / 2; j++) {
      y[j] = (float)(b[i].qs[j] & 0xF) * d + m;
      y[j + QK4_1 / 2] = (float)(b[i].qs[j] >> 4) * d + m;
    }
  }
}

inline uint32_t load_u32le(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

inline void dequant_q5_0(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q5_0*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK5_0) {
    const float d = h2f(b[i].d);
    const uint32_t qh = load_u32le(b[i].qh);
    for (int j = 0; j < QK5_0 / 2; j++) {
      const int q0 = (b[i].qs[j] & 0xF) | (int)(((qh >> j) & 1) << 4);
      const int q1 = (b[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
      y[j] = (float)(q0 - 16) * d;
      y[j + QK5_0 / 2] = (float)(q1 - 16) * d;
    }
  }
}

inline void dequant_q5_1(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q5_1*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK5_1) {
    const float d = h2f(b[i].d);
    const float m = h2f(b[i].m);
    const uint32_t qh = load_u32le(b[i].qh);
    for (int j = 0; j < QK5_1 / 2; j++) {
      const int q0 = (b[i].qs[j] & 0xF) | (int)(((qh >> j) & 1) << 4);
      const int q1 = (b[i].qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1) << 4);
      y[j] = (float)q0 * d + m;
      y[j + QK5_1 / 2] = (float)q1 * d + m;
    }
  }
}

inline void dequant_q8_0(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q8_0*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK8_0) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK8_0; j++) y[j] = (float)b[i].qs[j] * d;
  }
}

inline void dequant_q8_1(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q8_1*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK8_1) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK8_1; j++) y[j] = (float)b[i].qs[j] * d;
  }
}

// Element 128 h + 32 g + l (half h, group g, l < 32) is bits 2g..2g+1 of qs[32 h + l];
// its sub-block of 16 is 8 h + 2 g + l / 16.
inline void dequant_q2_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q2_K*>(src);
  for (uint64_t i = 0; i < nb; i++) {
    const float d = h2f(b[i].d);
    const float dmin = h2f(b[i].dmin);
    for (int h = 0; h < 2; h++) {
      const uint8_t* q = b[i].qs + 32 * h;
      for (int g = 0; g < 4; g++) {
        for (int l = 0; l < 32; l++) {
          const uint8_t sm = b[i].scales[8 * h + 2 * g + l / 16];
          const float dl = d * (float)(sm & 0xF);
          const float ml = dmin * (float)(sm >> 4);
          *y++ = dl * (float)((q[l] >> (2 * g)) & 3) - ml;
        }
      }
    }
  }
}

// Same 2-bit layout as Q2_K; the third bit of element 128 h + 32 g + l is bit (4 h + g) of
// hmask[l]. A clear bit subtracts 4, giving q in [-4, 3].
inline void dequant_q3_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q3_K*>(src);
  for (uint64_t i = 0; i < nb; i++) {
    const float d = h2f(b[i].d);
    for (int h = 0; h < 2; h++) {
      const uint8_t* q = b[i].qs + 32 * h;
      for (int g = 0; g < 4; g++) {
        const uint8_t mask = (uint8_t)(1u << (4 * h + g));
        for (int l = 0; l < 32; l++) {
          const float dl = d * (float)get_scale_q3_k(8 * h + 2 * g + l / 16, b[i].scales);
          const int v = ((q[l] >> (2 * g)) & 3) - ((b[i].hmask[l] & mask) ? 0 : 4);
          *y++ = dl * (float)v;
        }
      }
    }
  }
}

// Scale d * sc and min dmin * m of sub-block j of a Q4_K/Q5_K block.
inline void k4_sub_block(const uint8_t* scales, int j, float d, float dmin, float* dl, float* ml) {
  uint8_t sc, m;
  get_scale_min_k4(j, scales, &sc, &m);
  *dl = d * (float)sc;
  *ml = dmin * (float)m;
}

// Chunk c (64 elements) uses qs[32 c .. 32 c + 31]: low nibbles are sub-block 2c, high 2c+1.
inline void dequant_q4_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q4_K*>(src);
  for (uint64_t i = 0; i < nb; i++) {
    const float d = h2f(b[i].d), dmin = h2f(b[i].dmin);
    for (int c = 0; c < 4; c++) {
      const uint8_t* q = b[i].qs + 32 * c;
      float d1, m1, d2, m2;
      k4_sub_block(b[i].scales, 2 * c, d, dmin, &d1, &m1);
      k4_sub_block(b[i].scales, 2 * c + 1, d, dmin, &d2, &m2);
      for (int l = 0; l < 32; l++) *y++ = d1 * (float)(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; l++) *y++ = d2 * (float)(q[l] >> 4) - m2;
    }
  }
}

// Q4_K plus the fifth bits: bit 2c of qh[l] for sub-block 2c, bit 2c + 1 for sub-block 2c + 1.
inline void dequant_q5_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q5_K*>(src);
  for (uint64_t i = 0; i < nb; i++) {
    const float d = h2f(b[i].d), dmin = h2f(b[i].dmin);
    for (int c = 0; c < 4; c++) {
      const uint8_t* q = b[i].qs + 32 * c;
      float d1, m1, d2, m2;
      k4_sub_block(b[i].scales, 2 * c, d, dmin, &d1, &m1);
      k4_sub_block(b[i].scales, 2 * c + 1, d, dmin, &d2, &m2);
      for (int l = 0; l < 32; l++)
        *y++ = d1 * (float)((q[l] & 0xF) | (((b[i].qh[l] >> (2 * c)) & 1) << 4)) - m1;
      for (int l = 0; l < 32; l++)
        *y++ = d2 * (float)((q[l] >> 4) | (((b[i].qh[l] >> (2 * c + 1)) & 1) << 4)) - m2;
    }
  }
}

// Half h (128 elements) uses ql[64 h ..], qh[32 h ..], scales[8 h ..]. For l < 32, quarter k of
// the half (element 128 h + 32 k + l) takes ql[64 h + l + 32 (k & 1)] (low nibble for k < 2,
// high nibble for k >= 2) and bits 2k..2k+1 of qh[32 h + l]; its scale is scales[8 h + 2 k + l / 16].
inline void dequant_q6_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q6_K*>(src);
  for (uint64_t i = 0; i < nb; i++) {
    const float d = h2f(b[i].d);
    for (int h = 0; h < 2; h++) {
      const uint8_t* ql = b[i].ql + 64 * h;
      const uint8_t* qh = b[i].qh + 32 * h;
      const int8_t* sc = b[i].scales + 8 * h;
      for (int k = 0; k < 4; k++) {
        for (int l = 0; l < 32; l++) {
          const uint8_t lbyte = ql[l + 32 * (k & 1)];
          const int lo = k < 2 ? (lbyte & 0xF) : (lbyte >> 4);
          const int hi = (qh[l] >> (2 * k)) & 3;
          const int q = (lo | (hi << 4)) - 32;
          *y++ = d * (float)sc[2 * k + l / 16] * (float)q;
        }
      }
    }
  }
}

inline void dequant_q8_k(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_q8_K*>(src);
  for (uint64_t i = 0; i < nb; i++)
    for (int j = 0; j < QK_K; j++) *y++ = b[i].d * (float)b[i].qs[j];
}

inline void dequant_iq4_nl(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_iq4_nl*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK4_NL) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK4_NL / 2; j++) {
      y[j] = d * (float)kIq4nlValues[b[i].qs[j] & 0xF];
      y[j + QK4_NL / 2] = d * (float)kIq4nlValues[b[i].qs[j] >> 4];
    }
  }
}

inline void dequant_mxfp4(const uint8_t* src, float* y, uint64_t nb) {
  const auto* b = reinterpret_cast<const block_mxfp4*>(src);
  for (uint64_t i = 0; i < nb; i++, y += QK_MXFP4) {
    const float d = e8m0_to_fp32_half(b[i].e);
    for (int j = 0; j < QK_MXFP4 / 2; j++) {
      y[j] = (float)kMxfp4Values[b[i].qs[j] & 0xF] * d;
      y[j + QK_MXFP4 / 2] = (float)kMxfp4Values[b[i].qs[j] >> 4] * d;
    }
  }
}

}  // namespace dequant_detail

// The dequantizer of a block type by GGUF id; nullptr for non-block types (F32, F16, BF16,
// integers) and unknown ids.
constexpr dequant_blocks_fn dequant_blocks_for(uint32_t gguf_type) {
  using namespace dequant_detail;
  switch (static_cast<Type>(gguf_type)) {
    case Type::Q4_0: return dequant_q4_0;
    case Type::Q4_1: return dequant_q4_1;
    case Type::Q5_0: return dequant_q5_0;
    case Type::Q5_1: return dequant_q5_1;
    case Type::Q8_0: return dequant_q8_0;
    case Type::Q8_1: return dequant_q8_1;
    case Type::Q2_K: return dequant_q2_k;
    case Type::Q3_K: return dequant_q3_k;
    case Type::Q4_K: return dequant_q4_k;
    case Type::Q5_K: return dequant_q5_k;
    case Type::Q6_K: return dequant_q6_k;
    case Type::Q8_K: return dequant_q8_k;
    case Type::IQ4_NL: return dequant_iq4_nl;
    case Type::MXFP4: return dequant_mxfp4;
    default: return nullptr;
  }
}

}  // namespace hexllm::quant
