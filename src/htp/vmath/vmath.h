// Vector math for the device's elementwise, normalization, softmax, RoPE and attention kernels.
// Freestanding (no libc/STL/allocation). One function table per implementation, chosen once
// per session at run time: generic scalar (every target; Hexagon for now), x86 AVX2+FMA+F16C
// (8 lanes) and x86 AVX-512 F/BW/VL/DQ (16 lanes).
//
// Accuracy contract (what op tests rely on): every function is within a few ulp of the
// correctly rounded float result for finite inputs (exp/tanh/sigmoid/gelu: relative error
// <= 4e-7 ... 2e-6 documented per function in the implementation; see "Bounds" below for the
// one exception, the far negative tail of gelu), handles +-inf and nan like libm (the x * sigmoid
// family follows its formula: silu(-inf) = gelu(-inf) = -inf * 0 = nan, as the reference
// backend), and never reads or writes past n elements. Reductions accumulate in float lanes and
// combine lanes at the end (their rounding differs from a serial sum; say how in tests).
//
// Definitions: vmath_scalar.h holds the scalar algorithm of every function, and every table
// computes exactly those IEEE operations in the same order, so all tables return the same bits.
// Reductions use 32 float lanes: lane l sums elements i = l (mod 32) over the whole blocks of
// 32, lanes fold to 8 as ((l + l+8) + (l+16 + l+24)), a block of 8 adds lane-wise, the 8 fold
// pairwise (l + l+4, then + l+2, then + l+1) and the last n % 8 elements add in order.
// Bounds (ulp of the correctly rounded result, asserted in tests/htp/vmath/vmath_test.cpp):
// exp 1, log 1, tanh 1.5, sigmoid 3, silu 3.5, softplus 2.5, sqrt 0.5 (Hexagon software sqrt 1);
// gelu / gelu_quick 3 + 2.5 |v| with v their sigmoid argument (only the negative tail, where
// rounding v itself dominates, exceeds 3). Results below 2^-126 are within (1 + |x|) 2^-149.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {

// o[r * o_stride + d] += p[r * p_stride + c] * v[c * v_stride + d] for r < rows, c < n, d < dv
// (strides in elements), one fma per c in order for every element, so every table agrees bit
// for bit.
struct vmath_pv {
  const float* p;
  size_t p_stride;
  uint32_t rows;
  const uint16_t* v;
  size_t v_stride;
  uint32_t n;
  float* o;
  size_t o_stride;
  uint32_t dv;
};

struct vmath_ops {
  const char* name;  // "generic", "avx2", "avx512"

  // y[i] = f(x[i]); x and y may be the same array.
  void (*exp)(const float* x, float* y, uint32_t n);
  void (*silu)(const float* x, float* y, uint32_t n);        // x * sigmoid(x)
  void (*gelu)(const float* x, float* y, uint32_t n);        // tanh approximation
  void (*gelu_quick)(const float* x, float* y, uint32_t n);  // x * sigmoid(1.702 x)
  void (*sigmoid)(const float* x, float* y, uint32_t n);
  void (*tanh)(const float* x, float* y, uint32_t n);
  void (*softplus)(const float* x, float* y, uint32_t n);    // log(1 + exp(x)), stable
  void (*sqrt)(const float* x, float* y, uint32_t n);

  // y[i] = a * x[i] + b
  void (*scale_bias)(const float* x, float* y, uint32_t n, float a, float b);
  // y[i] = a[i] * b[i]
  void (*mul)(const float* a, const float* b, float* y, uint32_t n);
  // y[i] += a * x[i]
  void (*axpy)(float a, const float* x, float* y, uint32_t n);

  // Reductions.
  float (*sum)(const float* x, uint32_t n);
  float (*sum_sq)(const float* x, uint32_t n);
  float (*max)(const float* x, uint32_t n);  // -inf for n == 0
  float (*dot)(const float* a, const float* b, uint32_t n);
  // y[i] = exp(x[i] - m), returns sum of y (softmax numerator and denominator in one pass).
  float (*exp_sub_sum)(const float* x, float* y, uint32_t n, float m);

  // Conversions (round to nearest even for f32 -> f16).
  void (*f16_to_f32)(const uint16_t* x, float* y, uint32_t n);
  void (*f32_to_f16)(const float* x, uint16_t* y, uint32_t n);
  // dot of an f32 vector with an f16 vector (attention: q . k with K in f16)
  float (*dot_f16)(const float* a, const uint16_t* b, uint32_t n);
  // y[i] += a * float(x[i]) with x in f16 (attention: accumulate p * v)
  void (*axpy_f16)(float a, const uint16_t* x, float* y, uint32_t n);

  // ---- added for the elementwise, normalization and softmax kernels ----
  // Natural log (log(0) = -inf, log(x < 0) = nan).
  void (*log)(const float* x, float* y, uint32_t n);
  // y[i] = min(max(x[i], lo), hi); nan stays nan.
  void (*clamp)(const float* x, float* y, uint32_t n, float lo, float hi);
  // y[i] = (x[i] - m) * s (NORM, without the cancellation of s * x - s * m).
  void (*sub_scale)(const float* x, float* y, uint32_t n, float m, float s);
  // y[i] = (x[i] * s) * w[i] (RMS_NORM_MUL).
  void (*scale_mul)(const float* x, const float* w, float* y, uint32_t n, float s);
  // Sum of (x[i] - m)^2 (variance around a known mean).
  float (*sum_sq_dev)(const float* x, uint32_t n, float m);
  // Gated units, y[i] = act(g[i]) * u[i]; g, u and y may alias.
  void (*swiglu)(const float* g, const float* u, float* y, uint32_t n);
  void (*geglu)(const float* g, const float* u, float* y, uint32_t n);
  // gpt-oss: x = min(g, limit), v = clamp(u, -limit, limit), y = x sigmoid(alpha x) (v + 1).
  void (*swiglu_oai)(const float* g, const float* u, float* y, uint32_t n, float alpha, float limit);
  // Softmax logits: y[i] = a * x[i] + b * m[i] (m == nullptr: y[i] = a * x[i]), returns max y
  // (-inf for n == 0). The _f16 form reads the mask in f16.
  float (*scale_add_max)(const float* x, const float* m, float* y, uint32_t n, float a, float b);
  float (*scale_add_max_f16)(const float* x, const uint16_t* m, float* y, uint32_t n, float a, float b);
  // y[c * y_stride + r] = x[r * x_stride + c] for r < rows, c < cols (strides in floats, x and
  // y apart): attention's K tiles. Moves bits only, so every table agrees.
  void (*transpose)(const float* x, size_t x_stride, float* y, size_t y_stride, uint32_t rows, uint32_t cols);
  // Attention's weighted sum over F16 value rows, for few query rows (decode), see vmath_pv.
  void (*pv_f16)(const vmath_pv& a);
};

const vmath_ops& vmath_generic();
// nullptr when not built for x86.
const vmath_ops* vmath_avx2();
const vmath_ops* vmath_avx512();
// The table for the kernel path `isa` names (HEXLLM_ISA, see htp/vec/vec.h): "generic" the
// generic table, "avx2" and "avxvnni" the AVX2 one, anything else (nullptr: unset) the best this
// CPU runs. A table the CPU lacks falls back to the next best; the tables agree bit for bit, so
// the choice changes only speed.
const vmath_ops& vmath_for_isa(const char* isa);
// vmath_for_isa(HEXLLM_ISA), chosen once per process (generic on Hexagon).
const vmath_ops& vmath_select();

}  // namespace hexllm::htp
