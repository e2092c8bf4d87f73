// Run-time choice of the vmath table.
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

#if !defined(__x86_64__)
// Non-x86 builds (Hexagon) carry no AVX2 object.
const vmath_ops* vmath_avx2() { return nullptr; }
#endif

const vmath_ops& vmath_select() {
#if defined(__x86_64__)
  // __builtin_cpu_supports also checks that the OS saves the YMM state.
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (avx2 && vmath_avx2() != nullptr) return *vmath_avx2();
#endif
  return vmath_generic();
}

}  // namespace hexllm::htp
