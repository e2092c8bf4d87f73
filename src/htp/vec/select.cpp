// Choice of the kernel table: at run time on x86, at compile time on Hexagon (every v67+ core
// has 128-byte HVX).
#include "htp/vec/vec.h"

namespace hexllm::htp {

#if !defined(__x86_64__)
// Non-x86 builds (Hexagon) carry no AVX2 object.
const vec_kernels* vec_avx2_kernels() { return nullptr; }
#endif
#if !defined(__hexagon__)
const vec_kernels* vec_hvx_kernels() { return nullptr; }
#endif

const vec_kernels& htp_vec_select() {
#if defined(__hexagon__)
  return *vec_hvx_kernels();
#else
#if defined(__x86_64__)
  // __builtin_cpu_supports also checks that the OS saves the YMM state.
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  // Seam for AVX-512 (VNNI / BW): test and return its table here, before AVX2.
  if (avx2 && vec_avx2_kernels()) return *vec_avx2_kernels();
#endif
  return vec_generic_kernels();
#endif
}

}  // namespace hexllm::htp
