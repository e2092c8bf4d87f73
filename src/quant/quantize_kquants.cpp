// Q4_K and Q6_K quantizers (our own design; bit-exactness with llama.cpp is not a goal, error of
// the same size is).
//
// Both work in two stages:
//  1. per sub-block, a float scale (and for Q4_K a min) chosen by least squares: five candidate
//     step sizes around the one that spans the data, each candidate's quants rounded and the
//     scale/min refitted in closed form, the best kept and polished by up to four assign/refit
//     rounds (more candidates gain little: RMSE 0.0709 vs 0.0712 for Q4_K on gaussian data, at
//     3x the time; quantize_rows must stay fast enough for 1B-parameter models);
//  2. the sub-block scales themselves quantized to 6 (Q4_K) or 8 (Q6_K) bits against an F16
//     super-block scale, and the quants recomputed with the scales actually stored.
#include <cmath>

#include "base/fp16.h"
#include "quant/quantize_impl.h"

namespace hexllm::quant::detail {

namespace {

// Rounds v, already clamped to [0, 2^22), to the nearest integer (ties to even), in float.
// Branch-free so the candidate loops stay cheap.
inline float round_float(float v) { return (v + 12582912.0f) - 12582912.0f; }

// Written so that it compiles to branch-free (vectorizable) code; NaN gives hi.
inline float clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v < hi ? v : hi;
}

// ---- Q4_K: x ~ scale * q - min, q in [0, 15], scale >= 0, min >= 0 ----

struct AffineFit {
  float scale = 0;
  float min = 0;  // subtracted: x ~ scale * q - min
  double err = 0;
};

// Sums of one assignment of quants q to the data x.
struct AffineSums {
  double sq = 0, sqq = 0, sqx = 0;
};

// Least-squares scale and offset for fixed quants, with the offset (= -min) kept <= 0 because the
// format stores a non-negative min. sx, sxx: sums of x and x^2 over the n values.
AffineFit solve_affine(const AffineSums& s, int n, double sx, double sxx) {
  AffineFit f;
  double a = 0, b = 0;  // x ~ a q + b
  const double det = n * s.sqq - s.sq * s.sq;
  if (det > 0) {
    a = (n * s.sqx - s.sq * sx) / det;
    b = (sx - a * s.sq) / n;
  }
  if (b > 0 || det <= 0) {
    b = 0;
    a = s.sqq > 0 ? s.sqx / s.sqq : 0;
  }
  if (a < 0) {  // cannot happen with monotone quants; keep the fit valid anyway
    a = 0;
    b = sx / n < 0 ? sx / n : 0;
  }
  f.scale = (float)a;
  f.min = (float)-b;
  f.err = sxx - 2 * a * s.sqx - 2 * b * sx + a * a * s.sqq + 2 * a * b * s.sq + n * b * b;
  return f;
}

// The loops below first compute all quants, then sum them in kLanes independent partial sums
// (fixed order, so deterministic). Both loops vectorize; a single float sum would not (the
// compiler may not reassociate it), nor would a fused loop with the clamp.
constexpr int kLanes = 4;

double lane_sum(const float (&acc)[kLanes]) {
  double s = 0;
  for (float a : acc) s += a;
  return s;
}

AffineSums affine_sums(const float* x, float offset, float iscale, float qmax) {
  float q[32];
  for (int l = 0; l < 32; l++) q[l] = round_float(clampf((x[l] - offset) * iscale, 0.0f, qmax));
  float sq[kLanes] = {}, sqq[kLanes] = {}, sqx[kLanes] = {};
  for (int l = 0; l < 32; l += kLanes) {
    for (int k = 0; k < kLanes; k++) {
      sq[k] += q[l + k];
      sqq[k] += q[l + k] * q[l + k];
      sqx[k] += q[l + k] * x[l + k];
    }
  }
  return {lane_sum(sq), lane_sum(sqq), lane_sum(sqx)};
}

// Best x ~ scale * q - min over 32 values, q in [0, nmax].
AffineFit fit_affine(const float* x, int nmax) {
  const int n = 32;
  float lo = x[0], hi = x[0];
  double sx = 0, sxx = 0;
  for (int l = 0; l < n; l++) {
    lo = x[l] < lo ? x[l] : lo;
    hi = x[l] > hi ? x[l] : hi;
    sx += x[l];
    sxx += (double)x[l] * x[l];
  }
  if (lo > 0) lo = 0;  // the reconstruction's lowest level is -min <= 0
  AffineFit best;
  if (!(hi > lo)) {  // constant block (or NaN): represent it by the min alone
    best.min = -lo;
    return best;
  }
  const float qmax = (float)nmax;
  // Candidate steps: the data range split into nmax - 1 ... nmax + 1 intervals.
  constexpr int kSteps = 2;
  bool have = false;
  for (int k = -kSteps; k <= kSteps; k++) {
    const float iscale = (qmax + (float)k / kSteps) / (hi - lo);
    const AffineFit f = solve_affine(affine_sums(x, lo, iscale, qmax), n, sx, sxx);
    if (!have || f.err < best.err) {
      best = f;
      have = true;
    }
  }
  // Polish: reassign quants to the fitted levels and refit.
  for (int it = 0; it < 4 && best.scale > 0; it++) {
    const AffineFit f = solve_affine(affine_sums(x, -best.min, 1.0f / best.scale, qmax), n, sx, sxx);
    if (!(f.err < best.err)) break;
    best = f;
  }
  return best;
}

void pack_scale_min_k4(const uint8_t sc[8], const uint8_t m[8], uint8_t out[K_SCALE_SIZE]) {
  for (int j = 0; j < 4; j++) {
    out[j] = (uint8_t)(sc[j] | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = (uint8_t)(m[j] | ((m[j + 4] >> 4) << 6));
    out[j + 8] = (uint8_t)((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// ---- Q6_K: x ~ scale * q, q in [-32, 31], scale of either sign ----

// Least-squares scale of 16 values for the quants round(x * iscale) in [-32, 31], and its gain
// sqx^2 / sqq (error = sum x^2 - gain: the largest gain is the best scale).
float symmetric_gain_scale(const float* x, float iscale, double* gain) {
  float q[16];
  // Shifted by 64 into the non-negative range that round_float handles.
  for (int l = 0; l < 16; l++) q[l] = round_float(clampf(x[l] * iscale, -32.0f, 31.0f) + 64.0f) - 64.0f;
  float sqq[kLanes] = {}, sqx[kLanes] = {};
  for (int l = 0; l < 16; l += kLanes) {
    for (int k = 0; k < kLanes; k++) {
      sqq[k] += q[l + k] * q[l + k];
      sqx[k] += q[l + k] * x[l + k];
    }
  }
  const double qq = lane_sum(sqq), qx = lane_sum(sqx);
  *gain = qq > 0 ? qx * qx / qq : 0;
  return qq > 0 ? (float)(qx / qq) : 0.0f;
}

// Best signed scale of 16 values for q in [-32, 31].
float fit_symmetric(const float* x) {
  const int n = 16;
  float amax = 0, max = 0;
  for (int l = 0; l < n; l++) {
    if (std::fabs(x[l]) > amax) {
      amax = std::fabs(x[l]);
      max = x[l];
    }
  }
  if (amax == 0) return 0;
  // The largest magnitude goes to the -32 end (it has one more level than +31).
  constexpr int kSteps = 2;
  double best_gain = -1;
  float best = 0;
  for (int k = -kSteps; k <= kSteps; k++) {
    const float iscale = -(32.0f + (float)k / kSteps) / max;
    double gain;
    const float s = symmetric_gain_scale(x, iscale, &gain);
    if (gain > best_gain) {
      best_gain = gain;
      best = s;
    }
  }
  for (int it = 0; it < 4 && best != 0; it++) {
    double gain;
    const float s = symmetric_gain_scale(x, 1.0f / best, &gain);
    if (!(gain > best_gain)) break;
    best_gain = gain;
    best = s;
  }
  return best;
}

}  // namespace

void quantize_q4_k(const float* x, block_q4_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK_K) {
    float scale[8], min[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; j++) {
      const AffineFit f = fit_affine(x + 32 * j, 15);
      scale[j] = f.scale;
      min[j] = f.min;
      max_scale = scale[j] > max_scale ? scale[j] : max_scale;
      max_min = min[j] > max_min ? min[j] : max_min;
    }
    y[i].d = fp32_to_fp16(max_scale / 63.0f);
    y[i].dmin = fp32_to_fp16(max_min / 63.0f);
    const float d = fp16_to_fp32(y[i].d);
    const float dmin = fp16_to_fp32(y[i].dmin);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; j++) {
      sc[j] = (uint8_t)(d > 0 ? round_clamp(scale[j] / d, 0, 63) : 0);
      m[j] = (uint8_t)(dmin > 0 ? round_clamp(min[j] / dmin, 0, 63) : 0);
    }
    pack_scale_min_k4(sc, m, y[i].scales);
    // Quants against the stored levels d * sc * q - dmin * m.
    uint8_t q[QK_K];
    for (int j = 0; j < 8; j++) {
      const float ds = d * (float)sc[j];
      const float dm = dmin * (float)m[j];
      for (int l = 0; l < 32; l++)
        q[32 * j + l] = (uint8_t)(ds > 0 ? round_clamp((x[32 * j + l] + dm) / ds, 0, 15) : 0);
    }
    for (int c = 0; c < 4; c++)
      for (int l = 0; l < 32; l++) y[i].qs[32 * c + l] = (uint8_t)(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
  }
}

void quantize_q6_k(const float* x, block_q6_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK_K) {
    float scale[16];
    float max_scale = 0;  // the scale of largest magnitude, with its sign
    for (int j = 0; j < 16; j++) {
      scale[j] = fit_symmetric(x + 16 * j);
      if (std::fabs(scale[j]) > std::fabs(max_scale)) max_scale = scale[j];
    }
    // As for the quants: the largest scale goes to -128, the end with one more level.
    y[i].d = fp32_to_fp16(max_scale / -128.0f);
    const float d = fp16_to_fp32(y[i].d);
    int8_t sc[16];
    for (int j = 0; j < 16; j++) sc[j] = (int8_t)(d != 0 ? round_clamp(scale[j] / d, -128, 127) : 0);
    for (int j = 0; j < 16; j++) y[i].scales[j] = sc[j];
    uint8_t q[QK_K];  // stored quants, q + 32 in [0, 63]
    for (int j = 0; j < 16; j++) {
      const float ds = d * (float)sc[j];
      for (int l = 0; l < 16; l++)
        q[16 * j + l] = (uint8_t)(ds != 0 ? round_clamp(x[16 * j + l] / ds, -32, 31) + 32 : 32);
    }
    // Layout (see dequant_q6_k): element 128 h + 32 k + l.
    for (int h = 0; h < 2; h++) {
      for (int l = 0; l < 32; l++) {
        const uint8_t* e = q + 128 * h + l;  // e[32 k] is quarter k
        y[i].ql[64 * h + l] = (uint8_t)((e[0] & 0xF) | ((e[64] & 0xF) << 4));
        y[i].ql[64 * h + 32 + l] = (uint8_t)((e[32] & 0xF) | ((e[96] & 0xF) << 4));
        y[i].qh[32 * h + l] =
            (uint8_t)((e[0] >> 4) | ((e[32] >> 4) << 2) | ((e[64] >> 4) << 4) | ((e[96] >> 4) << 6));
      }
    }
  }
}

}  // namespace hexllm::quant::detail
