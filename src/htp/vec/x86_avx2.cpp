// x86 AVX2 + FMA + F16C kernels (vpmaddubsw). This file alone is compiled with -mavx2 -mfma
// -mf16c; it is only called after htp_vec_select() has seen those features.
#define VEC_DOT 0
#include "htp/vec/x86_kernels.h"

namespace hexllm::htp {

const vec_kernels* vec_avx2_kernels() {
  static constexpr vec_kernels k = x86_table("avx2");
  return &k;
}

}  // namespace hexllm::htp
