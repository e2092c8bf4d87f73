// Shared helpers of the vec tests: random weight rows in GGUF formats with realistic scales,
// and the float reference (reference dequantize_row + double dot).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/fp16.h"
#include "htp/abi/tiles.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/types.h"

namespace hexllm::htp::test {

inline const uint32_t kAllTiles[] = {
    HTP_TILE_Q4_0_X8, HTP_TILE_Q4_1_X8, HTP_TILE_Q8_0_X8, HTP_TILE_MXFP4_X8, HTP_TILE_IQ4_NL_X8,
    HTP_TILE_F32_X8,  HTP_TILE_F16_X8,  HTP_TILE_BF16_X8, HTP_TILE_Q5_0_X8,  HTP_TILE_Q5_1_X8,
    HTP_TILE_Q4_K_X8, HTP_TILE_Q5_K_X8, HTP_TILE_Q6_K_X8};

inline size_t gguf_row_bytes(Type t, uint32_t k) { return row_size(t, k); }

// One GGUF row of k elements: random codes, scales set to realistic finite values
// (so every dequantized value is finite and of order 0.01..1).
inline std::vector<uint8_t> random_row(Type t, uint32_t k, std::mt19937& rng) {
  using namespace hexllm::quant;
  std::vector<uint8_t> row(gguf_row_bytes(t, k));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto h = [&](float f) { return fp32_to_fp16(f); };
  if (t == Type::F32 || t == Type::F16 || t == Type::BF16) {
    for (uint32_t i = 0; i < k; i++) {
      const float v = nd(rng);
      if (t == Type::F32) std::memcpy(row.data() + 4 * i, &v, 4);
      const uint16_t b = t == Type::F16 ? fp32_to_fp16(v) : fp32_to_bf16(v);
      if (t != Type::F32) std::memcpy(row.data() + 2 * i, &b, 2);
    }
    return row;
  }
  for (auto& b : row) b = (uint8_t)byte(rng);
  const uint32_t nb = k / block_size(t);
  for (uint32_t i = 0; i < nb; i++) {
    uint8_t* p = row.data() + (size_t)i * type_size(t);
    switch (t) {
      case Type::Q4_0:
        reinterpret_cast<block_q4_0*>(p)->d = h(0.1f * u(rng));
        break;
      case Type::IQ4_NL:
        reinterpret_cast<block_iq4_nl*>(p)->d = h(0.01f * u(rng));
        break;
      case Type::Q4_1: {
        auto* b = reinterpret_cast<block_q4_1*>(p);
        b->d = h(0.1f * u(rng));
        b->m = h(-0.8f * u(rng));
        break;
      }
      case Type::Q5_0:
        reinterpret_cast<block_q5_0*>(p)->d = h(0.05f * u(rng));
        break;
      case Type::Q5_1: {
        auto* b = reinterpret_cast<block_q5_1*>(p);
        b->d = h(0.05f * u(rng));
        b->m = h(-0.8f * u(rng));
        break;
      }
      case Type::Q8_0:
        reinterpret_cast<block_q8_0*>(p)->d = h(0.01f * u(rng));
        break;
      case Type::MXFP4:
        reinterpret_cast<block_mxfp4*>(p)->e = (uint8_t)(124 + byte(rng) % 4);
        break;
      case Type::Q4_K:
      case Type::Q5_K: {
        auto* b = reinterpret_cast<block_q4_K*>(p);  // d, dmin lead both layouts
        b->d = h(0.003f * u(rng));
        b->dmin = h(0.01f * u(rng));
        break;
      }
      case Type::Q6_K:
        reinterpret_cast<block_q6_K*>(p)->d = h(0.0005f * u(rng));
        break;
      default:
        break;
    }
  }
  return row;
}

inline std::vector<uint8_t> random_matrix(Type t, uint32_t nrows, uint32_t k, std::mt19937& rng) {
  std::vector<uint8_t> m;
  for (uint32_t r = 0; r < nrows; r++) {
    auto row = random_row(t, k, rng);
    m.insert(m.end(), row.begin(), row.end());
  }
  return m;
}

inline std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// Normalized mean squared error sum((a-b)^2) / sum(a^2) of b against the reference a.
inline double nmse(const std::vector<double>& ref, const float* got, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (ref[i] - got[i]) * (ref[i] - got[i]);
    den += ref[i] * ref[i];
  }
  return num / den;
}

}  // namespace hexllm::htp::test
