// Activation quantizers of the HVX table (Hexagon v67): the integer parts on HVX, the float
// parts on the scalar core exactly as vec/generic.cpp (same bits).
//
// amax: for floats that are not NaN, |x| orders like the integer bits & 0x7fffffff, so the block
// maximum is an integer vmax; NaN bit patterns are dropped first, as the generic compare
// `|x| > m` never picks a NaN. The codes need x * (1/d) rounded, which is float: scalar. The
// block sums are vrmpy of the codes with ones (4-byte sums per lane) added on the scalar core.
#if defined(__hexagon__)

#include "htp/vec/hexagon_hvx.h"
#include "htp/vec/hexagon_hvx_k.h"

namespace hexllm::htp {
namespace {

using namespace hvx;

// Bits of the largest |x[i]| (i < n, n a multiple of 32), NaN ignored; 0 when all are 0 / NaN.
HVX_INLINE float amax_bits(const float* x, uint32_t n) {
  HVX_Vector m = Q6_V_vzero();
  const HVX_Vector abs_mask = Q6_V_vsplat_R(0x7fffffff), inf = Q6_V_vsplat_R(0x7f800000);
  for (uint32_t i = 0; i < n; i += 32) {
    const HVX_Vector a = Q6_V_vand_VV(loadu(x + i, 128), abs_mask);
    m = Q6_Vw_vmax_VwVw(m, Q6_V_vmux_QVV(Q6_Q_vcmp_gt_VuwVuw(a, inf), Q6_V_vzero(), a));
  }
  for (int sh = 64; sh >= 4; sh /= 2) m = Q6_Vw_vmax_VwVw(m, Q6_V_vror_VR(m, sh));
  Lanes l;
  to_lanes(l, m);
  return lane_f32(l, 0);
}

// As round_even / quant_block of generic.cpp.
inline float round_even(float x) {
  const float big = 12582912.0f;
  return (x + big) - big;
}

float quant_codes(const float* x, uint32_t n, int8_t* q) {
  const float d = amax_bits(x, n) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (uint32_t i = 0; i < n; i++) {
    const float v = round_even(x[i] * id);
    q[i] = (int8_t)(v >= -127.0f && v <= 127.0f ? (int)v : 0);
  }
  return d;
}

// Sums of the n (32 or 256) codes at q in groups of four: lane i = q[4i] + .. + q[4i+3].
HVX_INLINE void sums4(const int8_t* q, uint32_t n, Lanes& l0, Lanes& l1) {
  const HVX_Vector ones = Q6_Vb_vsplat_R(1);
  to_lanes(l0, Q6_Vw_vrmpy_VbVb(loadu(q, n < 128 ? n : 128), ones));
  if (n > 128) to_lanes(l1, Q6_Vw_vrmpy_VbVb(loadu(q + 128, 128), ones));
}

}  // namespace

void hvx_quant_q8_32(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_32*)act;
  for (uint32_t i = 0; i < k / 32; i++, x += 32) {
    b[i].d = quant_codes(x, 32, b[i].q);
    Lanes l, unused;
    sums4(b[i].q, 32, l, unused);
    int32_t s = 0;
    for (int j = 0; j < 8; j++) s += l.w[j];
    b[i].sum = s;
  }
}

void hvx_quant_q8_256(const float* x, uint8_t* act, uint32_t k) {
  auto* b = (htp_act_q8_256*)act;
  for (uint32_t i = 0; i < k / 256; i++, x += 256) {
    b[i].d = quant_codes(x, 256, b[i].q);
    Lanes l[2];
    sums4(b[i].q, 256, l[0], l[1]);
    for (int j = 0; j < 16; j++) {
      const int32_t* w = l[j / 8].w + 4 * (j % 8);
      b[i].sum16[j] = (int16_t)(w[0] + w[1] + w[2] + w[3]);
    }
    for (int j = 0; j < 8; j++) b[i].sum32[j] = (int16_t)(b[i].sum16[2 * j] + b[i].sum16[2 * j + 1]);
    b[i].pad[0] = b[i].pad[1] = b[i].pad[2] = 0;
  }
}

}  // namespace hexllm::htp

#endif  // __hexagon__
