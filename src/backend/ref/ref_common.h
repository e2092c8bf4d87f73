// Shared pieces of the reference backend: element and row access through ne/nb strides (any
// view or permutation), ALiBi slopes, the row-splitting thread helper, and the entry point of
// each op family (one file each).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/tensor.h"

namespace hexllm::backend::ref {

using graph::Op;
using graph::Tensor;

bool is_float(Type t);     // F32, F16, BF16
bool is_readable(Type t);  // is_float or a block type: rows can be read as floats

// Element (i0, i1, i2, i3) of a plain tensor as float (F32, F16, BF16, I32).
float get_f(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
// Stores v, rounded to t's type (F32, F16, BF16).
void set_f(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v);
// Element of an index tensor (I32 or I64).
int64_t get_i(const Tensor& t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0);

// Row (i1, i2, i3) as t.ne[0] floats; block types are dequantized.
void get_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* x);
std::vector<float> get_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3);
// Every row of t as floats; row (i1, i2, i3) is at i1 + ne1 (i2 + ne2 i3).
std::vector<std::vector<float>> all_rows(const Tensor& t);
// Writes t.ne[0] floats into row (i1, i2, i3), rounded to t's type.
void set_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, const float* y);

// Calls fn(i1, i2, i3) for every row of t, in memory order.
template <class F>
void for_each_row(const Tensor& t, F&& fn) {
  for (int64_t i3 = 0; i3 < t.ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t.ne[2]; i2++)
      for (int64_t i1 = 0; i1 < t.ne[1]; i1++) fn(i1, i2, i3);
}

// Sum of x[i] * y[i], accumulated in double in index order.
inline double dot(const float* x, const float* y, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) sum += (double)x[i] * y[i];
  return sum;
}

// GELU, tanh approximation (shared by GELU and GEGLU).
double gelu(double x);

// ALiBi slope of head h among n_head (1 when max_bias <= 0).
float alibi_slope(float max_bias, int64_t h, int64_t n_head);

// Splits [0, n) into n_threads consecutive ranges and calls fn(begin, end) on each, one
// std::thread per range past the first. The first exception thrown by any range is rethrown.
void parallel_for(int n_threads, int64_t n, const std::function<void(int64_t, int64_t)>& fn);

[[noreturn]] void unsupported(const Tensor& node);

// Op families. Each checks what the builders cannot (index ranges) and computes `node`.
void compute_unary(const Tensor& node);                     // SCALE ... TANH
void compute_glu(const Tensor& node);                       // SWIGLU, GEGLU, SWIGLU_OAI
void compute_binary(const Tensor& node);                    // ADD, SUB, MUL, DIV, ADD_ID
void compute_norm(const Tensor& node);                      // RMS_NORM, NORM, L2_NORM
void compute_rows(const Tensor& node);                      // GET_ROWS, SET_ROWS
void compute_copy(const Tensor& node);                      // CPY, CONT, DUP, CONCAT, REPEAT, PAD, FILL
void compute_softmax(const Tensor& node);                   // SOFT_MAX
void compute_sort(const Tensor& node);                      // ARGSORT, TOP_K, SUM_ROWS
void compute_rope(const Tensor& node);                      // ROPE
void compute_attention(const Tensor& node, int n_threads);  // FLASH_ATTN_EXT
void compute_matmul(const Tensor& node, int n_threads);     // MUL_MAT, MUL_MAT_ID

}  // namespace hexllm::backend::ref
