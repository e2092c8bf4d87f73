// Reference quantization (float -> block formats of blocks.h).
//
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 and Q8_K follow ggml's reference algorithms, so they give the
// same bytes as llama.cpp's reference quantizer. Q4_K, Q6_K, IQ4_NL and MXFP4 use our own
// least-squares scale searches (see quantize_kquants.cpp / quantize_nonlinear.cpp).
#pragma once

#include <stdint.h>

#include "quant/types.h"

namespace hexllm::quant {

// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q8_K, Q4_K, Q6_K, IQ4_NL, MXFP4.
bool can_quantize(Type type);

// Quantizes n values (a multiple of the block size) into row_size(type, n) bytes at dst.
// Throws hexllm::Error naming the type when it is not supported or n is not a multiple of the block.
void quantize_row(Type type, const float* src, void* dst, int64_t n);

// n_rows rows of n_per_row values each, row r at src + r * n_per_row and at
// dst + r * row_size(type, n_per_row), split across n_threads std::threads.
void quantize_rows(Type type, const float* src, void* dst, int64_t n_rows, int64_t n_per_row, int n_threads);

}  // namespace hexllm::quant
