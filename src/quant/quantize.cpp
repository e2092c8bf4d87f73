// Dispatch, threading, and the quantizers whose algorithm is ggml's reference one (documented
// formulas; the comments give them). These must produce llama.cpp's bytes for the same input.
#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/quantize_impl.h"

namespace hexllm::quant {

namespace detail {

namespace {

// The element of largest magnitude, keeping its sign; the first one wins ties.
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; j++) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float* mn, float* mx) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < n; j++) {
    if (x[j] < lo) lo = x[j];
    if (x[j] > hi) hi = x[j];
  }
  *mn = lo;
  *mx = hi;
}

// Half-away-from-zero rounding as C's roundf, clamped to [-127, 127]. Exact: v - trunc(v) has no
// rounding error, so the comparison with 1/2 decides ties correctly.
int8_t round_away_i8(float v) {
  if (!(v >= -127.0f)) return -127;  // also NaN
  if (v > 127.0f) return 127;
  const int t = (int)v;  // towards zero
  const float frac = v - (float)t;
  return (int8_t)(t + (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0));
}

// 1 / d, or 0 when d = 0 (an all-zero block: every value lands on the middle level).
float inverse_or_zero(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// Min and step d = (max - min) / steps of the 32 values of an affine block (Q4_1, Q5_1).
struct AffineBlock {
  float min, d, id;
};

AffineBlock affine_block(const float* x, float steps) {
  float mn, mx;
  min_max(x, 32, &mn, &mx);
  const float d = (mx - mn) / steps;
  return {mn, d, inverse_or_zero(d)};
}

// The low 4 bits of 32 quants: element j in the low nibble of qs[j], element j + 16 in the high one.
void pack_nibbles(const int* q, uint8_t qs[16]) {
  for (int j = 0; j < 16; j++) qs[j] = (uint8_t)((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

// Bit 4 of each 5-bit value: element j at bit j of qh (little endian), as Q5_0/Q5_1 read it.
void pack_high_bits(const int* q, uint8_t qh[4]) {
  uint32_t bits = 0;
  for (int j = 0; j < 32; j++) bits |= (uint32_t)((q[j] >> 4) & 1) << j;
  for (int k = 0; k < 4; k++) qh[k] = (uint8_t)(bits >> (8 * k));
}

}  // namespace

// d = m / -8 with m the value of largest magnitude (so m maps to q = 0),
// q = min(15, trunc(x / d + 8.5)).
void quantize_q4_0(const float* x, block_q4_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK4_0) {
    const float d = signed_absmax(x, QK4_0) / -8.0f, id = inverse_or_zero(d);
    y[i].d = fp32_to_fp16(d);
    int q[QK4_0];
    for (int j = 0; j < QK4_0; j++) q[j] = trunc_clamp(x[j] * id + 8.5f, 0, 15);
    pack_nibbles(q, y[i].qs);
  }
}

// d = (max - min) / 15, m = min, q = min(15, trunc((x - min) / d + 0.5)).
void quantize_q4_1(const float* x, block_q4_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK4_1) {
    const AffineBlock a = affine_block(x, 15.0f);
    y[i].d = fp32_to_fp16(a.d);
    y[i].m = fp32_to_fp16(a.min);
    int q[QK4_1];
    for (int j = 0; j < QK4_1; j++) q[j] = trunc_clamp((x[j] - a.min) * a.id + 0.5f, 0, 15);
    pack_nibbles(q, y[i].qs);
  }
}

// As Q4_0 with 32 levels: d = m / -16, q = min(31, trunc(x / d + 16.5)).
void quantize_q5_0(const float* x, block_q5_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK5_0) {
    const float d = signed_absmax(x, QK5_0) / -16.0f, id = inverse_or_zero(d);
    y[i].d = fp32_to_fp16(d);
    int q[QK5_0];
    for (int j = 0; j < QK5_0; j++) q[j] = trunc_clamp(x[j] * id + 16.5f, 0, 31);
    pack_nibbles(q, y[i].qs);
    pack_high_bits(q, y[i].qh);
  }
}

// As Q4_1 with 32 levels: d = (max - min) / 31, q = trunc((x - min) / d + 0.5).
void quantize_q5_1(const float* x, block_q5_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK5_1) {
    const AffineBlock a = affine_block(x, 31.0f);
    y[i].d = fp32_to_fp16(a.d);
    y[i].m = fp32_to_fp16(a.min);
    int q[QK5_1];
    for (int j = 0; j < QK5_1; j++) q[j] = trunc_clamp((x[j] - a.min) * a.id + 0.5f, 0, 31);
    pack_nibbles(q, y[i].qs);
    pack_high_bits(q, y[i].qh);
  }
}

// d = max|x| / 127, q = roundf(x / d) (half away from zero).
void quantize_q8_0(const float* x, block_q8_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK8_0) {
    const float d = std::fabs(signed_absmax(x, QK8_0)) / 127.0f, id = inverse_or_zero(d);
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < QK8_0; j++) y[i].qs[j] = round_away_i8(x[j] * id);
  }
}

// Q8_0 plus s = fp16(d * sum(q)) with the unrounded float d.
void quantize_q8_1(const float* x, block_q8_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK8_1) {
    const float d = std::fabs(signed_absmax(x, QK8_1)) / 127.0f, id = inverse_or_zero(d);
    y[i].d = fp32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < QK8_1; j++) {
      y[i].qs[j] = round_away_i8(x[j] * id);
      sum += y[i].qs[j];
    }
    y[i].s = fp32_to_fp16((float)sum * d);
  }
}

// iscale = -127 / m (m the value of largest magnitude), q = min(127, round_even(iscale * x)),
// d = 1 / iscale (float). An all-zero block stores d = 0 and zero quants.
void quantize_q8_k(const float* x, block_q8_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; i++, x += QK_K) {
    const float max = signed_absmax(x, QK_K);
    if (max == 0.0f) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < QK_K; j++) y[i].qs[j] = (int8_t)round_clamp(iscale * x[j], -128, 127);
    for (int g = 0; g < QK_K / 16; g++) {
      int sum = 0;
      for (int l = 0; l < 16; l++) sum += y[i].qs[16 * g + l];
      y[i].bsums[g] = (int16_t)sum;
    }
    y[i].d = 1.0f / iscale;
  }
}

}  // namespace detail

bool can_quantize(Type type) {
  switch (type) {
    case Type::F32:
    case Type::F16:
    case Type::BF16:
    case Type::Q4_0:
    case Type::Q4_1:
    case Type::Q5_0:
    case Type::Q5_1:
    case Type::Q8_0:
    case Type::Q8_1:
    case Type::Q8_K:
    case Type::Q4_K:
    case Type::Q6_K:
    case Type::IQ4_NL:
    case Type::MXFP4: return true;
    default: return false;
  }
}

namespace {

// Throws unless `type` can be quantized and n is a whole number of blocks.
void check_quantize_args(const char* what, Type type, int64_t n) {
  const TypeTraits* tr = type_traits_or_null(static_cast<uint32_t>(type));
  if (!tr) fail("%s: unknown type id %u", what, static_cast<unsigned>(type));
  if (!can_quantize(type)) fail("%s: quantization to %s is not supported", what, tr->name);
  if (n < 0 || n % tr->block_size != 0)
    fail("%s: %s: n = %lld is not a multiple of the block size %u", what, tr->name, (long long)n,
         tr->block_size);
}

// Arguments already checked.
void quantize_checked(Type type, const float* src, void* dst, int64_t n) {
  using namespace detail;
  const int64_t nb = n / block_size(type);
  switch (type) {
    case Type::F32:
      if (n) std::memcpy(dst, src, (size_t)n * sizeof(float));
      return;
    case Type::F16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; i++) h[i] = fp32_to_fp16(src[i]);
      return;
    }
    case Type::BF16: {
      uint16_t* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; i++) h[i] = fp32_to_bf16(src[i]);
      return;
    }
    case Type::Q4_0: return quantize_q4_0(src, static_cast<block_q4_0*>(dst), nb);
    case Type::Q4_1: return quantize_q4_1(src, static_cast<block_q4_1*>(dst), nb);
    case Type::Q5_0: return quantize_q5_0(src, static_cast<block_q5_0*>(dst), nb);
    case Type::Q5_1: return quantize_q5_1(src, static_cast<block_q5_1*>(dst), nb);
    case Type::Q8_0: return quantize_q8_0(src, static_cast<block_q8_0*>(dst), nb);
    case Type::Q8_1: return quantize_q8_1(src, static_cast<block_q8_1*>(dst), nb);
    case Type::Q8_K: return quantize_q8_k(src, static_cast<block_q8_K*>(dst), nb);
    case Type::Q4_K: return quantize_q4_k(src, static_cast<block_q4_K*>(dst), nb);
    case Type::Q6_K: return quantize_q6_k(src, static_cast<block_q6_K*>(dst), nb);
    case Type::IQ4_NL: return quantize_iq4_nl(src, static_cast<block_iq4_nl*>(dst), nb);
    case Type::MXFP4: return quantize_mxfp4(src, static_cast<block_mxfp4*>(dst), nb);
    default: break;
  }
  fail("quantize_row: quantization to %s is not supported", type_name(type));  // unreachable
}

}  // namespace

void quantize_row(Type type, const float* src, void* dst, int64_t n) {
  check_quantize_args("quantize_row", type, n);
  quantize_checked(type, src, dst, n);
}

void quantize_rows(Type type, const float* src, void* dst, int64_t n_rows, int64_t n_per_row, int n_threads) {
  check_quantize_args("quantize_rows", type, n_per_row);
  if (n_rows < 0) fail("quantize_rows: %s: negative row count %lld", type_name(type), (long long)n_rows);
  const size_t dst_row = row_size(type, n_per_row);
  uint8_t* out = static_cast<uint8_t*>(dst);
  // Rows [r0, r1) as one contiguous run: rows are adjacent in both src and dst.
  auto run = [&](int64_t r0, int64_t r1) {
    if (r1 > r0)
      quantize_checked(type, src + r0 * n_per_row, out + (size_t)r0 * dst_row, (r1 - r0) * n_per_row);
  };
  const int64_t n_workers = std::max<int64_t>(1, std::min<int64_t>(n_threads, n_rows));
  if (n_workers == 1) {
    run(0, n_rows);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve((size_t)n_workers - 1);
  try {
    for (int64_t t = 1; t < n_workers; t++)
      workers.emplace_back(run, n_rows * t / n_workers, n_rows * (t + 1) / n_workers);
  } catch (const std::system_error& e) {
    for (std::thread& w : workers) w.join();  // a joinable thread must not be destroyed
    fail("quantize_rows: %s: cannot start %lld threads: %s", type_name(type), (long long)n_workers, e.what());
  }
  run(0, n_rows / n_workers);
  for (std::thread& w : workers) w.join();
}

}  // namespace hexllm::quant
