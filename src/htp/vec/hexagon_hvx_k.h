// Entry points of the HVX table (hexagon_hvx.cpp) defined in other files: GEMV/GEMM of the K-quant
// tiles (hexagon_hvx_k.cpp) and the activation quantizers (hexagon_hvx_quant.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hexllm::htp {

void hvx_gemv_q4_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows);
void hvx_gemv_q5_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows);
void hvx_gemv_q6_k(const uint8_t* w, const uint8_t* act, float* dst, uint32_t k, uint32_t nrows);
void hvx_gemm_q4_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows);
void hvx_gemm_q5_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows);
void hvx_gemm_q6_k(const uint8_t* w, const uint8_t* act, size_t act_stride, uint32_t nact, float* dst,
                   size_t dst_stride, uint32_t k, uint32_t nrows);

void hvx_quant_q8_32(const float* x, uint8_t* act, uint32_t k);
void hvx_quant_q8_256(const float* x, uint8_t* act, uint32_t k);

}  // namespace hexllm::htp
