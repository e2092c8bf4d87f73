// Run-time choice of the vmath table.
#include "htp/vec/vec.h"
#include "htp/vmath/vmath.h"

namespace hexllm::htp {

#if !defined(__x86_64__)
// Non-x86 builds (Hexagon) carry no x86 objects.
const vmath_ops* vmath_avx2() { return nullptr; }
const vmath_ops* vmath_avx512() { return nullptr; }

const vmath_ops& vmath_for_isa(const char*) { return vmath_generic(); }
const vmath_ops& vmath_select() { return vmath_generic(); }
#else
const vmath_ops& vmath_for_isa(const char* isa) {
  // __builtin_cpu_supports also checks that the OS saves the YMM (and ZMM, opmask) state.
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  auto is = [&](const char* name) { return isa != nullptr && __builtin_strcmp(isa, name) == 0; };
  if (avx512 && !is("avx2") && !is("avxvnni") && !is("generic")) return *vmath_avx512();
  if (avx2 && !is("generic")) return *vmath_avx2();
  return vmath_generic();
}

// HEXLLM_ISA as the vec layer reads it, so the matmul kernels and vmath follow one setting.
const vmath_ops& vmath_select() {
  static const vmath_ops& t = vmath_for_isa(vec_isa_forced());
  return t;
}
#endif

}  // namespace hexllm::htp
