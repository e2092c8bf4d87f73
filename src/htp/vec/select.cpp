// Run-time choice of the kernel table.
#include "htp/vec/vec.h"

namespace hexllm::htp {

#if !defined(__x86_64__)
// Non-x86 builds (Hexagon) carry no AVX2 object.
const vec_kernels* vec_avx2_kernels() { return nullptr; }
#endif

const vec_kernels& htp_vec_select() {
#if defined(__x86_64__)
  // __builtin_cpu_supports also checks that the OS saves the YMM state.
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  // Seam for AVX-512 (VNNI / BW): test and return its table here, before AVX2.
  if (avx2 && vec_avx2_kernels()) return *vec_avx2_kernels();
#endif
  return vec_generic_kernels();
}

}  // namespace hexllm::htp
