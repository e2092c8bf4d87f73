// Portable vmath table: the scalar definitions of vmath_scalar.h applied element by element,
// reductions in the 32-lane order that vmath.h specifies. Every target (Hexagon for now) runs
// it, and the SIMD tables are tested bit for bit against it.
#include "base/fp16.h"
#include "htp/vmath/vmath.h"
#include "htp/vmath/vmath_scalar.h"

namespace hexllm::htp {
namespace {

template <float (*F)(float)>
void map(const float* x, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

// The 32-lane reduction of vmath.h: `step(acc, i)` folds element i into an accumulator,
// `join(a, b)` combines two accumulators.
template <class Step, class Join>
float reduce(uint32_t n, float init, Step step, Join join) {
  float acc[32];
  for (float& a : acc) a = init;
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (uint32_t l = 0; l < 32; ++l) acc[l] = step(acc[l], i + l);
  float v[8];
  for (uint32_t l = 0; l < 8; ++l) v[l] = join(join(acc[l], acc[l + 8]), join(acc[l + 16], acc[l + 24]));
  for (; i + 8 <= n; i += 8)
    for (uint32_t l = 0; l < 8; ++l) v[l] = step(v[l], i + l);
  for (uint32_t l = 0; l < 4; ++l) v[l] = join(v[l], v[l + 4]);
  for (uint32_t l = 0; l < 2; ++l) v[l] = join(v[l], v[l + 2]);
  float s = join(v[0], v[1]);
  for (; i < n; ++i) s = step(s, i);
  return s;
}

inline float add(float a, float b) { return a + b; }

void exp_(const float* x, float* y, uint32_t n) { map<vm_exp>(x, y, n); }
void silu(const float* x, float* y, uint32_t n) { map<vm_silu>(x, y, n); }
void gelu(const float* x, float* y, uint32_t n) { map<vm_gelu>(x, y, n); }
void gelu_quick(const float* x, float* y, uint32_t n) { map<vm_gelu_quick>(x, y, n); }
void sigmoid(const float* x, float* y, uint32_t n) { map<vm_sigmoid>(x, y, n); }
void tanh_(const float* x, float* y, uint32_t n) { map<vm_tanh>(x, y, n); }
void softplus(const float* x, float* y, uint32_t n) { map<vm_softplus>(x, y, n); }
void sqrt_(const float* x, float* y, uint32_t n) { map<vm_sqrt>(x, y, n); }
void log_(const float* x, float* y, uint32_t n) { map<vm_log>(x, y, n); }

void scale_bias(const float* x, float* y, uint32_t n, float a, float b) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_fma(a, x[i], b);
}

void mul(const float* a, const float* b, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void axpy(float a, const float* x, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_fma(a, x[i], y[i]);
}

float sum(const float* x, uint32_t n) {
  return reduce(
      n, 0.0f, [&](float s, uint32_t i) { return s + x[i]; }, add);
}

float sum_sq(const float* x, uint32_t n) {
  return reduce(
      n, 0.0f, [&](float s, uint32_t i) { return vm_fma(x[i], x[i], s); }, add);
}

float max(const float* x, uint32_t n) {
  return reduce(
      n, -__builtin_inff(), [&](float s, uint32_t i) { return vm_max(s, x[i]); }, vm_max);
}

float dot(const float* a, const float* b, uint32_t n) {
  return reduce(
      n, 0.0f, [&](float s, uint32_t i) { return vm_fma(a[i], b[i], s); }, add);
}

float exp_sub_sum(const float* x, float* y, uint32_t n, float m) {
  return reduce(
      n, 0.0f,
      [&](float s, uint32_t i) {
        y[i] = vm_exp(x[i] - m);
        return s + y[i];
      },
      add);
}

void f16_to_f32(const uint16_t* x, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void f32_to_f16(const float* x, uint16_t* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

float dot_f16(const float* a, const uint16_t* b, uint32_t n) {
  return reduce(
      n, 0.0f, [&](float s, uint32_t i) { return vm_fma(a[i], fp16_to_fp32(b[i]), s); }, add);
}

void axpy_f16(float a, const uint16_t* x, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_fma(a, fp16_to_fp32(x[i]), y[i]);
}

void pv_f16(const vmath_pv& a) {
  for (uint32_t r = 0; r < a.rows; ++r)
    for (uint32_t c = 0; c < a.n; ++c)
      axpy_f16(a.p[r * a.p_stride + c], a.v + c * a.v_stride, a.o + r * a.o_stride, a.dv);
}

void clamp(const float* x, float* y, uint32_t n, float lo, float hi) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_min(hi, vm_max(lo, x[i]));
}

void sub_scale(const float* x, float* y, uint32_t n, float m, float s) {
  for (uint32_t i = 0; i < n; ++i) y[i] = (x[i] - m) * s;
}

void scale_mul(const float* x, const float* w, float* y, uint32_t n, float s) {
  for (uint32_t i = 0; i < n; ++i) y[i] = (x[i] * s) * w[i];
}

float sum_sq_dev(const float* x, uint32_t n, float m) {
  return reduce(
      n, 0.0f,
      [&](float s, uint32_t i) {
        const float d = x[i] - m;
        return vm_fma(d, d, s);
      },
      add);
}

void swiglu(const float* g, const float* u, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_silu(g[i]) * u[i];
}

void geglu(const float* g, const float* u, float* y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_gelu(g[i]) * u[i];
}

void swiglu_oai(const float* g, const float* u, float* y, uint32_t n, float alpha, float limit) {
  for (uint32_t i = 0; i < n; ++i) y[i] = vm_swiglu_oai(g[i], u[i], alpha, limit);
}

float scale_add_max(const float* x, const float* m, float* y, uint32_t n, float a, float b) {
  if (m == nullptr) {
    return reduce(
        n, -__builtin_inff(),
        [&](float s, uint32_t i) {
          y[i] = a * x[i];
          return vm_max(s, y[i]);
        },
        vm_max);
  }
  return reduce(
      n, -__builtin_inff(),
      [&](float s, uint32_t i) {
        y[i] = vm_fma(b, m[i], a * x[i]);
        return vm_max(s, y[i]);
      },
      vm_max);
}

float scale_add_max_f16(const float* x, const uint16_t* m, float* y, uint32_t n, float a, float b) {
  return reduce(
      n, -__builtin_inff(),
      [&](float s, uint32_t i) {
        y[i] = vm_fma(b, fp16_to_fp32(m[i]), a * x[i]);
        return vm_max(s, y[i]);
      },
      vm_max);
}

void transpose(const float* x, size_t xs, float* y, size_t ys, uint32_t rows, uint32_t cols) {
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) y[c * ys + r] = x[r * xs + c];
}

const vmath_ops kGeneric = {
    "generic",
    exp_,
    silu,
    gelu,
    gelu_quick,
    sigmoid,
    tanh_,
    softplus,
    sqrt_,
    scale_bias,
    mul,
    axpy,
    sum,
    sum_sq,
    max,
    dot,
    exp_sub_sum,
    f16_to_f32,
    f32_to_f16,
    dot_f16,
    axpy_f16,
    log_,
    clamp,
    sub_scale,
    scale_mul,
    sum_sq_dev,
    swiglu,
    geglu,
    swiglu_oai,
    scale_add_max,
    scale_add_max_f16,
    transpose,
    pv_f16,
};

}  // namespace

const vmath_ops& vmath_generic() { return kGeneric; }

}  // namespace hexllm::htp
