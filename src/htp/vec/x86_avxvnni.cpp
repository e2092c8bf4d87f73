// x86 AVX-VNNI kernels: the AVX2 kernels with the VEX vpdpbusd/vpdpwssd on ymm (4 u8 x s8
// products into int32 per lane in one instruction, no int16 stage). Compiled with -mavxvnni
// on top of the AVX2 flags; only called after htp_vec_select() has seen AVX-VNNI.
#define VEC_DOT 1
#include "htp/vec/x86_kernels.h"

namespace hexllm::htp {

const vec_kernels* vec_avxvnni_kernels() {
  static constexpr vec_kernels k = x86_table("avxvnni");
  return &k;
}

}  // namespace hexllm::htp
