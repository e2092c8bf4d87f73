// Quantizers for the table-based 4-bit formats, IQ4_NL and MXFP4 (our own design).
// Both pick, per block of 32, the scale that minimizes the squared error among a few candidates,
// each element taking the nearest table level.
//
// The nearest level of a sorted table is found by counting the midpoints between neighbouring
// levels that lie below the value: branch-free arithmetic that the compiler vectorizes (a
// table lookup would not be).
#include <cmath>
#include <initializer_list>

#include "base/fp16.h"
#include "quant/quantize_impl.h"

namespace hexllm::quant::detail {

namespace {

// Partial sums in a fixed order (deterministic), kLanes at a time so the loops vectorize.
constexpr int kLanes = 4;

double lane_sum(const float (&acc)[kLanes]) {
  double s = 0;
  for (float a : acc) s += a;
  return s;
}

// ---- IQ4_NL ----

// Midpoints between consecutive kIq4nlValues (-127 -104 -83 -65 -49 -35 -22 -10 1 13 25 38 53 69 89 113).
constexpr float kIq4nlMid[15] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                                 7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f};

// Index of the level nearest to v (a midpoint itself goes to the lower level; NaN to level 0).
inline int iq4nl_index(float v) {
  int i = 0;
  for (float m : kIq4nlMid) i += v > m ? 1 : 0;
  return i;
}

// The level nearest to v, as a sum of the steps whose midpoint v exceeds.
inline float iq4nl_level(float v) {
  float level = (float)kIq4nlValues[0];
  for (int k = 0; k < 15; k++)
    level += v > kIq4nlMid[k] ? (float)(kIq4nlValues[k + 1] - kIq4nlValues[k]) : 0.0f;
  return level;
}

// With every x / d at its nearest level v: the least-squares scale sum(x v) / sum(v^2) and the
// gain sum(x v)^2 / sum(v^2) (error = sum x^2 - gain, so a larger gain is better).
float iq4nl_refit(const float* x, float d, double* gain) {
  const float id = 1.0f / d;
  float v[QK4_NL];
  for (int j = 0; j < QK4_NL; j++) v[j] = iq4nl_level(x[j] * id);
  float svv[kLanes] = {}, sxv[kLanes] = {};
  for (int j = 0; j < QK4_NL; j += kLanes) {
    for (int k = 0; k < kLanes; k++) {
      svv[k] += v[j + k] * v[j + k];
      sxv[k] += x[j + k] * v[j + k];
    }
  }
  const double vv = lane_sum(svv), xv = lane_sum(sxv);
  *gain = vv > 0 ? xv * xv / vv : 0;
  return vv > 0 ? (float)(xv / vv) : 0.0f;
}

// ---- MXFP4 ----

// Nearest e2m1 magnitude for a = |x| / scale in doubled units (levels 0 1 2 3 4 6 8 12), with
// OCP's round-half-to-even: ties at 3.5 and 7 go up (to the even 2.0 and 4.0), the others down.
inline int mxfp4_index(float a) {
  return (a > 0.5f) + (a > 1.5f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f) + (a >= 7.0f) + (a > 10.0f);
}

inline float mxfp4_level(float a) {
  return (a > 0.5f ? 1.0f : 0.0f) + (a > 1.5f ? 1.0f : 0.0f) + (a > 2.5f ? 1.0f : 0.0f) +
         (a >= 3.5f ? 1.0f : 0.0f) + (a > 5.0f ? 2.0f : 0.0f) + (a >= 7.0f ? 2.0f : 0.0f) +
         (a > 10.0f ? 4.0f : 0.0f);
}

// a[j] = |x[j]| / e8m0_to_fp32_half(e) = |x[j]| * 2^(128 - e), exactly. 2^(128 - e) overflows
// a float for e < 2, so those scale in two steps (only tiny blocks choose them).
void mxfp4_scaled_abs(const float* x, int e, float* a) {
  const float pre = e < 2 ? 4.0f : 1.0f;
  const float inv = std::ldexp(1.0f, 128 - e - (e < 2 ? 2 : 0));
  for (int j = 0; j < QK_MXFP4; j++) a[j] = std::fabs(x[j]) * pre * inv;
}

// Squared error of the block at exponent e, in units of the (halved) scale squared.
double mxfp4_scaled_error(const float* x, int e) {
  float a[QK_MXFP4];
  mxfp4_scaled_abs(x, e, a);
  float err[kLanes] = {};
  for (int j = 0; j < QK_MXFP4; j += kLanes) {
    for (int k = 0; k < kLanes; k++) {
      const float diff = a[j + k] - mxfp4_level(a[j + k]);
      err[k] += diff * diff;
    }
  }
  return lane_sum(err);
}

}  // namespace

void quantize_iq4_nl(const float* x, block_iq4_nl* y, int64_t nb) {
  // Candidate scales put the largest magnitude at one end of the table or a level or two inside.
  constexpr int kTries = 1;
  for (int64_t i = 0; i < nb; i++, x += QK4_NL) {
    float amax = 0, max = 0;
    for (int j = 0; j < QK4_NL; j++) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    float best_d = 0;
    if (amax > 0) {
      double best_gain = -1;
      for (const float end : {(float)kIq4nlValues[0], (float)kIq4nlValues[15]}) {
        for (int t = -kTries; t <= kTries; t++) {
          const float level = end + (end < 0 ? 1.0f : -1.0f) * (float)t;
          double gain;
          const float d = iq4nl_refit(x, max / level, &gain);
          if (gain > best_gain) {
            best_gain = gain;
            best_d = d;
          }
        }
      }
      // Polish: reassign to the refitted scale while that improves.
      for (int it = 0; it < 3 && best_d != 0; it++) {
        double gain;
        const float d = iq4nl_refit(x, best_d, &gain);
        if (!(gain > best_gain)) break;
        best_gain = gain;
        best_d = d;
      }
    }
    y[i].d = fp32_to_fp16(best_d);
    const float d = fp16_to_fp32(y[i].d);
    // Final quants against the stored scale; with d = 0 every level gives 0.
    const float id = d != 0 ? 1.0f / d : 0.0f;
    uint8_t idx[QK4_NL];
    for (int j = 0; j < QK4_NL; j++) idx[j] = (uint8_t)iq4nl_index(x[j] * id);
    for (int j = 0; j < QK4_NL / 2; j++) y[i].qs[j] = (uint8_t)(idx[j] | (idx[j + QK4_NL / 2] << 4));
  }
}

void quantize_mxfp4(const float* x, block_mxfp4* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK_MXFP4) {
    float amax = 0;
    for (int j = 0; j < QK_MXFP4; j++) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
    if (!(amax > 0) || !std::isfinite(amax)) {
      // Zero block, or one we cannot scale (inf/NaN): the smallest scale and zeros.
      y[i].e = 0;
      for (int j = 0; j < QK_MXFP4 / 2; j++) y[i].qs[j] = 0;
      continue;
    }
    // e0 puts amax in [4, 8) scale units, the top of e2m1's range (max 6): amax may clip a little.
    // e0 + 1 never clips; e0 - 1 clips more but refines small values. Keep the best.
    const int e0 = (int)std::floor(std::log2(amax)) - 2 + 127;
    double best_err = -1;
    int best_e = 0;
    for (int e = e0 - 1; e <= e0 + 1; e++) {
      if (e < 0 || e > 255) continue;
      // Scaled error times scale^2 = 2^(2 (e - 128)): comparable across exponents.
      const double err = std::ldexp(mxfp4_scaled_error(x, e), 2 * (e - 128));
      if (best_err < 0 || err < best_err) {
        best_err = err;
        best_e = e;
      }
    }
    y[i].e = (uint8_t)best_e;
    float a[QK_MXFP4];
    mxfp4_scaled_abs(x, best_e, a);
    uint8_t nib[QK_MXFP4];
    for (int j = 0; j < QK_MXFP4; j++) nib[j] = (uint8_t)(mxfp4_index(a[j]) | (x[j] < 0 ? 8 : 0));
    for (int j = 0; j < QK_MXFP4 / 2; j++) y[i].qs[j] = (uint8_t)(nib[j] | (nib[j + QK_MXFP4 / 2] << 4));
  }
}

}  // namespace hexllm::quant::detail
